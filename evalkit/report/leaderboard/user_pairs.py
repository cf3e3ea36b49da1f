"""The leaderboard's simulated-user figures (issue 19): per row, how the model used the user (ask
rate, questions per attempt, informative share, the simulator's cost apart from the agent's), and,
when two runs of one suite differ only by `user`, the model's resolved rate with and without a
user over the tasks both runs scored (paired by task, samples averaged per task first).

Two runs "differ only by user" when one gave the model a simulated user and the other did not,
and they agree on the agent, the model's endpoint, the samples, the limits and the tasks chosen.
Pure computation over loaded runs; `board` puts the figures on its rows.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from evalkit.report.leaderboard.loaded_runs import LoadedRun, attempt_resolved
from evalkit.scoring.user_figures import ask_figures


class UserFigures(BaseModel):
    """How the row's model used the simulated user (its attempts that had one, errors left out)."""

    user_model: str | None
    attempts: int
    questions: int
    ask_rate: float  # share of attempts with at least one question
    questions_per_attempt: float
    informative_share: float | None  # informative answers over questions asked; None: no question
    cost_usd: float | None  # the simulator's tokens at the user model's price; never in the agent's cost


class UserPairing(BaseModel):
    """The model's resolved rate with and without a user, over the tasks both runs scored."""

    other_run: str  # the run of the other condition
    tasks: int
    with_user: float
    without_user: float


def _user(run: LoadedRun, model: str) -> str | None:
    found = Counter(r.user for r in run.records if r.model == model)
    if found:
        return found.most_common(1)[0][0]
    return getattr(run.manifest.options, "user", None)


def _figures(run: LoadedRun, model: str) -> UserFigures | None:
    rows = [r for r in run.records if r.model == model and r.user and not r.errored]
    figures = ask_figures((r.questions, int((r.question_classes or {}).get("informative", 0))) for r in rows)
    if figures is None:
        return None
    scores = [run.scores.get(r.key) for r in rows]
    costs = [s.efficiency.user_cost_usd if s is not None else None for s in scores]
    cost = None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)
    models = Counter(r.user_model for r in rows)
    return UserFigures(user_model=models.most_common(1)[0][0], cost_usd=cost, **figures)


def _per_task(run: LoadedRun, model: str) -> dict[str, float]:
    """The model's resolved rate per task over its scored attempts."""
    outcomes: dict[str, list[bool]] = {}
    for record in run.records:
        if record.model == model and not record.errored:
            outcomes.setdefault(record.task_id, []).append(attempt_resolved(record, run.scores.get(record.key)))
    return {task: statistics.fmean(values) for task, values in outcomes.items()}


def _setting(run: LoadedRun, model: str) -> tuple:
    """What two runs must share to be the same setting with and without a user."""
    options = run.manifest.options
    agents = Counter(r.agent for r in run.records if r.model == model)
    return (
        agents.most_common(1)[0][0] if agents else options.agent,
        repr(sorted((run.manifest.models.get(model) or {}).items())),
        run.manifest.samples,
        repr(sorted(options.limits.items())),
        options.task_ids,
    )


def _pairing(with_user: LoadedRun, without: LoadedRun, model: str) -> UserPairing | None:
    on, off = _per_task(with_user, model), _per_task(without, model)
    tasks = sorted(set(on) & set(off))
    if not tasks:
        return None
    return UserPairing(
        other_run="",
        tasks=len(tasks),
        with_user=round(statistics.fmean(on[t] for t in tasks), 4),
        without_user=round(statistics.fmean(off[t] for t in tasks), 4),
    )


UserRow = tuple[str | None, UserFigures | None, UserPairing | None]  # user, its figures, the pairing


def user_rows(suite_runs: Sequence[LoadedRun]) -> dict[tuple[str, str], UserRow]:
    """(run id, model) → the row's user, figures and pairing. Each run with a user is paired with
    the first run without one in the same setting (and that one with it), once."""
    found: dict[tuple[str, str], UserRow] = {}
    models = [(run, model) for run in suite_runs for model in dict.fromkeys(r.model for r in run.records)]
    for run, model in models:
        found[(run.manifest.run_id, model)] = (_user(run, model), _figures(run, model), None)
    taken: set[tuple[str, str]] = set()
    for run, model in models:
        key = (run.manifest.run_id, model)
        if found[key][0] is None or key in taken:
            continue
        for other, other_model in models:
            other_key = (other.manifest.run_id, other_model)
            if other_model != model or other_key in taken or found[other_key][0] is not None:
                continue
            if _setting(other, model) != _setting(run, model):
                continue
            pairing = _pairing(run, other, model)
            if pairing is None:
                continue
            taken |= {key, other_key}
            found[key] = (*found[key][:2], pairing.model_copy(update={"other_run": other.manifest.run_id}))
            found[other_key] = (*found[other_key][:2], pairing.model_copy(update={"other_run": run.manifest.run_id}))
            break
    return found
