"""Where run folders are: a command that takes a run folder also takes a bare run id, looked up
under the runs root (`reports/runs`, or `evalkit run --out`); and back, the command that resumes
a run of a given root."""

from __future__ import annotations

import shlex
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.files import is_safe_name
from evalkit.runs.paths import is_run_folder

RUNS_ROOT = Path("reports/runs")


def run_folder(given: Path | str, root: Path = RUNS_ROOT) -> Path:
    """The run folder `given` means: a folder, or a run id under `root`. A folder that is a run wins
    over a run id of the same name; nothing found is one line naming both places looked at."""
    path = Path(given)
    by_id = root / str(given) if is_safe_name(str(given)) else None
    if path.is_dir() and (is_run_folder(path) or by_id is None or not by_id.is_dir()):
        return path
    if by_id is not None and by_id.is_dir():
        return by_id
    where = f"no run folder {path}" + (f" and no run `{given}` under {root}" if by_id is not None else "")
    raise EvalkitError(f"{where}; give a run folder or the id of a run in {root}")


def resume_command(run_id: str, out: Path, *extra: str) -> str:
    """The command that resumes run `run_id` of the runs root `out` (as the line of an interrupted
    run says), with `extra` options (`--retry-errors`, as the line after a run with errored
    attempts says). `evalkit run --run-id` alone runs what run.json records."""
    command = " ".join(["evalkit run --run-id", shlex.quote(run_id), *extra])
    return command if out == RUNS_ROOT else f"{command} --out {shlex.quote(str(out))}"
