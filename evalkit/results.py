"""The Python API over finished runs: `evalkit.load_results(path)` → one row per attempt."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalkit.runs.paths import RESULTS, RunPaths
from evalkit.runs.store import RunStore
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import load_scores, results_frame, run_tasks, score_run


def load_results(path: str | Path) -> pd.DataFrame:
    """Every attempt of a run (its folder, or its results.jsonl) with all axes as columns.

    Columns: run_id, task_id, model, sample, tags, resolved, stop_reason, errored (an
    endpoint_error or sandbox_error: leave it out of any mean, as summary.json does), error, correctness,
    fail_to_pass, pass_to_pass, quality, efficiency, interaction, composite, reviewer, cost_usd,
    token counts, turns, tool_calls, duration_s, agent_s, and the parts of quality
    (`quality.lint`, ...) and interaction counts (`interaction.repeated_call`, ...). A run not yet
    scored is scored first, with the default settings.
    """
    path = Path(path)
    run_dir = path.parent if path.name == RESULTS else path
    RunPaths(run_dir).require_results()
    store = RunStore(run_dir)
    records = store.records()
    scores = load_scores(store)
    if {s.key for s in scores} != {r.key for r in records}:
        scores = score_run(store, run_tasks(store), ScoringSettings()).scores
    return results_frame(records, scores)
