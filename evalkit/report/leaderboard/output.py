"""`evalkit report`: run folders in, one self-contained HTML leaderboard out.

The page must open from disk (file://) with no network and stay safe when a model writes HTML:
jinja renders only the skeleton; every figure and every string a model or a task produced goes in
as JSON inside `<script type="application/json">` (`<`, `>`, `&` escaped as `\\u003c`…, so no
string can close the tag) and is put on the page by the inline script with `textContent` only.
A Content-Security-Policy allows the page's own inline script (by hash) and scripts beside it,
nothing else. Each attempt's detail (diff, trajectory) is a separate `attempts/<n>.js` file loaded
by a `<script src>` on click (fetch does not work from file://), so the page stays small with
thousands of attempts. The same data is written as `leaderboard.json`, `leaderboard.csv` (suite ×
model) and `attempts.csv` (one row per attempt).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from evalkit.axes import AXIS_NAMES, REVIEWER, SCORE_COLUMNS
from evalkit.errors import EvalkitError
from evalkit.report.leaderboard.attempt_detail import attempt_detail, trajectory_view
from evalkit.report.leaderboard.board import AXES, GroupBy, Leaderboard, ModelRow, build_leaderboard
from evalkit.report.leaderboard.loaded_runs import (
    AttemptRef,
    Published,
    attempt_resolved,
    attempt_tests_passed,
    load_run,
    merge_published,
    published_from_config,
    read_published,
)
from evalkit.report.leaderboard.pareto import pareto_frontier

__all__ = [
    "ATTEMPTS_DIR",
    "PAGE",
    "Published",
    "attempts_csv",
    "content_security_policy",
    "leaderboard_csv",
    "merge_published",
    "pareto_frontier",
    "published_from_config",
    "read_published",
    "render_page",
    "script_json",
    "trajectory_view",
    "write_leaderboard",
]

PAGE = "index.html"
ATTEMPTS_DIR = "attempts"
# the page's script, by responsibility, in the order they are joined into one inline script
SCRIPT_PARTS = ("core.js", "labels.js", "charts.js", "table.js", "tasks.js", "attempt.js", "page.js")
_ATTEMPT_FILE = re.compile(r"(\d+)\.js")


# -- writing --------------------------------------------------------------------------------------
def dumps(value: Any, **options: Any) -> str:
    """JSON text; NaN and infinities (pandas' medians of nothing) become null, which JSON can spell."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def script_json(value: Any) -> str:
    """JSON safe inside a <script> element: `<`, `>`, `&` (and all non-ASCII) as \\u escapes, so no
    string can end the element or open a comment."""
    text = dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def attempt_script(n: int, detail: dict[str, Any]) -> str:
    """attempts/<n>.js: a call to the page's loader. The JSON goes in as a string for JSON.parse,
    so a key such as `__proto__` stays a key, as it would through fetch."""
    text = dumps(detail, ensure_ascii=True, separators=(",", ":"))
    return f"window.__evalkitAttempt({int(n)},JSON.parse({script_json(text)}));\n"


def _write(path: Path, text: str) -> None:
    """Whole or absent: a reader (a browser reloading) never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def _csv(rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    return buffer.getvalue()


def leaderboard_csv(board: Leaderboard) -> str:
    """One row per suite × model (and its agent): the table's figures, pass@k and best-of-k for every k; `pareto` is
    the frontier of the page's chart (on cost, or on completion tokens when nothing costs anything),
    `error_attempts` the attempts that ended in endpoint_error or sandbox_error; the knowledge-cutoff
    split (CUTOFF_COLUMNS) only when some model has a cutoff."""
    top_k = max((row.samples for suite in board.suites for row in suite.models), default=1)
    ks = [str(k) for k in range(1, top_k + 1)]
    benchmarks = list(board.benchmarks)
    header = [
        "suite", "model", "agent", "run_id", "api_model", "attempts", "tasks", "samples", "resolved",
        "resolved_rate", "resolved_ci_low", "resolved_ci_high",
        *(f"pass_at_{k}" for k in ks), *(f"best_of_{k}" for k in ks),
        *AXES, "median_tokens", "median_completion_tokens", "cost_usd", "cost_per_attempt", "cost_per_task",
        "cost_per_resolved", "pareto", "errors", "error_attempts", "integrity_fail", "integrity_warn",
        *(f"published_{b}" for b in benchmarks), *USER_COLUMNS,
    ]  # fmt: skip
    cutoffs = any(row.after_cutoff for suite in board.suites for row in suite.models)
    header += list(CUTOFF_COLUMNS) if cutoffs else []  # only when a model has a knowledge cutoff
    rows: list[list[Any]] = [header]
    for suite in board.suites:
        for row in suite.models:
            ci = row.resolved_rate.ci95 or [None, None]
            rows.append(
                [
                    suite.name, row.model, row.agent, row.run_id, row.api_model, row.attempts, row.tasks, row.samples,
                    row.resolved, row.resolved_rate.mean, ci[0], ci[1],
                    *(row.pass_at_k.get(k) for k in ks), *(row.best_of_k.get(k) for k in ks),
                    *((row.axes[a].mean if row.axes[a] else None) for a in AXES),
                    row.median_tokens, row.median_completion_tokens, row.cost_usd, row.cost_per_attempt,
                    row.cost_per_task, row.cost_per_resolved, row.pareto, row.errors, sum(row.error_kinds.values()),
                    row.integrity.fail, row.integrity.warn,
                    *(row.published.get(b) for b in benchmarks), *_user_cells(row),
                    *(_cutoff_cells(row) if cutoffs else []),
                ]
            )  # fmt: skip
    return _csv(rows)


# the simulated user's figures of a leaderboard row (empty when the row had no user / no pairing)
USER_COLUMNS = (
    "user", "user_model", "ask_rate", "questions_per_attempt", "informative_share", "user_cost_usd",
    "resolved_with_user", "resolved_without_user", "user_paired_tasks", "user_paired_run",
)  # fmt: skip


def _user_cells(row: ModelRow) -> list[Any]:
    f, pair = row.user_figures, row.user_pair
    return [
        row.user, f and f.user_model, f and f.ask_rate, f and f.questions_per_attempt, f and f.informative_share,
        f and f.cost_usd, pair and pair.with_user, pair and pair.without_user, pair and pair.tasks,
        pair and pair.other_run,
    ]  # fmt: skip


# the split of a row whose model has a knowledge cutoff (evalkit/cutoff.py; empty otherwise)
CUTOFF_COLUMNS = ("knowledge_cutoff", "after_cutoff_rate", "after_cutoff_tasks", "undated_tasks")


def _cutoff_cells(row: ModelRow) -> list[Any]:
    split = row.after_cutoff
    return [split.cutoff, split.after_rate, split.after_tasks, split.undated_tasks] if split else [None] * 4


def attempts_csv(refs: Sequence[AttemptRef]) -> str:
    """One row per attempt: the verdict and the main axes (`attempt` is the n of attempts/<n>.js);
    `resolved` is the final verdict, `tests_resolved` what the hidden tests alone said, `integrity`
    the integrity verdict and `integrity_flags` its kinds (comma-separated)."""
    header = [
        "attempt", "suite", "run_id", "task_id", "model", "agent", "sample", "status", "resolved", "tests_resolved",
        "integrity", "integrity_flags", "stop_reason", "error",
        *SCORE_COLUMNS, REVIEWER, "cost_usd", "total_tokens",
        "turns", "tool_calls", "duration_s", "user", "questions", "user_cost_usd",
    ]  # fmt: skip
    rows: list[list[Any]] = [header]
    for ref in refs:
        r, s, integrity = ref.record, ref.score, ref.integrity
        rows.append(
            [
                ref.n, ref.suite, r.run_id, r.task_id, r.model, r.agent, r.sample, ref.status, attempt_resolved(r, s),
                attempt_tests_passed(r, s), integrity.verdict, ",".join(integrity.kinds()), r.stop_reason,
                r.error, *(s and getattr(s, axis).score for axis in AXIS_NAMES), s and s.composite,
                s and s.review and s.review.score,
                s and s.efficiency.cost_usd, r.usage.get("total_tokens"), r.turns, r.tool_calls, r.duration_s,
                r.user, r.questions, s and s.efficiency.user_cost_usd,
            ]
        )  # fmt: skip
    return _csv(rows)


def _asset(name: str) -> str:
    return (resources.files("evalkit.report.leaderboard") / "templates" / name).read_text(encoding="utf-8")


def page_script() -> str:
    """The parts of the page's script joined into one function scope, inlined (and hashed into the
    CSP) as a single script, so the page stays one self-contained file."""
    parts = [f"// ---- {name}\n{_asset(name)}" for name in SCRIPT_PARTS]
    script = '(() => {\n"use strict";\n' + "\n".join(parts) + "})();\n"
    if "</script" in script.lower():
        raise RuntimeError("the page's script must not contain a closing script tag")
    return script


def content_security_policy(script: str) -> str:
    """Only this page's own inline script (by its hash) and scripts beside it (the attempt files);
    inline styles, data: images; no network, no frames, no forms, no <base>."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; "
        f"script-src 'self' 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def render_page(board: Leaderboard) -> str:
    """index.html: jinja (autoescaped) for the skeleton, the data as escaped JSON, inline JS and CSS."""
    script = page_script()
    loader = PackageLoader("evalkit.report.leaderboard", "templates")
    env = Environment(loader=loader, autoescape=True, undefined=StrictUndefined)
    return env.get_template("index.html").render(
        title="evalkit leaderboard",
        generated_at=board.generated_at,
        version=board.evalkit_version,
        csp=content_security_policy(script),
        style=Markup(_asset("leaderboard.css")),  # our own stylesheet: no data in it
        script=Markup(script),  # our own script, hashed into the CSP
        data=Markup(script_json(board.model_dump())),  # escaped for a <script> element by script_json
    )


def write_leaderboard(
    run_dirs: list[Path],
    out: Path,
    published: Published | None = None,
    on_skip: Callable[[str], None] | None = None,
    group_by: GroupBy = "none",
) -> Path:
    """Write the leaderboard of `run_dirs` into `out` and return `out/index.html`.

    A folder that is not a scored run is an EvalkitError; with `on_skip` (for "every folder under
    reports/runs") it is reported there and left out instead. Attempt files of an earlier report
    in `out` are replaced; index.html is written last, so it never points at missing files."""
    runs = []
    for run_dir in run_dirs:
        try:
            runs.append(load_run(Path(run_dir)))
        except EvalkitError as exc:
            if on_skip is None:
                raise
            on_skip(str(exc))
    if not runs:
        raise EvalkitError("no scored run to report on (give run folders: reports/runs/<run_id>)")
    ids = [run.manifest.run_id for run in runs]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise EvalkitError(f"run id {twice[0]} given twice (the same run folder, or a copy of it)")
    board, refs, prompts = build_leaderboard(runs, published, group_by)
    out = Path(out)
    attempts_dir = out / ATTEMPTS_DIR
    try:
        attempts_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalkitError(f"{out}: cannot write the report there ({exc.strerror or exc})") from None
    for old in attempts_dir.iterdir():  # an earlier, larger report's files; the others are overwritten
        if (match := _ATTEMPT_FILE.fullmatch(old.name)) and int(match[1]) >= len(refs):
            old.unlink()
    siblings: dict[tuple[str, str, str], list[list[Any]]] = {}  # the samples of one task, model and run
    for ref in refs:
        key = (ref.run.manifest.run_id, ref.record.task_id, ref.record.model)
        siblings.setdefault(key, []).append(
            [ref.n, ref.record.sample, ref.status, ref.run.manifest.run_id, ref.integrity.verdict]
        )
    for ref in refs:
        detail = attempt_detail(
            ref, siblings[(ref.run.manifest.run_id, ref.record.task_id, ref.record.model)], prompts.get(ref.suite, {})
        )
        (attempts_dir / f"{ref.n}.js").write_text(attempt_script(ref.n, detail), encoding="utf-8")
    _write(out / "leaderboard.json", dumps(board.model_dump(), indent=2, ensure_ascii=False) + "\n")
    _write(out / "leaderboard.csv", leaderboard_csv(board))
    _write(out / "attempts.csv", attempts_csv(refs))
    page = out / PAGE
    _write(page, render_page(board))
    return page
