"""Which tasks two runs can be compared on: the tasks each run's suite loaded (`run.json`).

A task that does not load is left out of a run (and recorded in its `skipped_tasks`), so two runs
of one suite can hold different tasks; their resolved rates then have different denominators and
a CI gate would compare different suites without knowing. `evalkit compare` refuses such runs,
naming the tasks missing on each side, unless `--allow-subset` asks for the tasks both loaded.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.runs.paths import RESULTS
from evalkit.runs.store import RunManifest, RunStore

SHOWN = 5  # task ids named per side in a message; the rest counted


def run_manifest(run_dir: Path) -> RunManifest:
    """The run.json of a run folder with finished attempts; anything else is one EvalkitError line."""
    if not run_dir.is_dir():
        raise EvalkitError(f"{run_dir}: no such run folder; give a run folder such as reports/runs/<run_id>")
    store = RunStore(run_dir)
    manifest = store.required_manifest()
    if not store.paths.results.exists():
        raise EvalkitError(f"{run_dir}: no {RESULTS}; no attempt has finished in this run yet")
    return manifest


def _named(tasks: list[str]) -> str:
    if not tasks:
        return "none"
    more = f" (+{len(tasks) - SHOWN} more)" if len(tasks) > SHOWN else ""
    return ", ".join(tasks[:SHOWN]) + more


def loaded_task_difference(
    base: RunManifest, new: RunManifest, base_label: str, new_label: str, allow_subset: bool
) -> tuple[list[str], list[str]]:
    """The tasks only the base run loaded and those only the new run loaded (sorted). When they
    differ and `allow_subset` is false: an EvalkitError naming them."""
    only_base = sorted(set(base.tasks) - set(new.tasks))
    only_new = sorted(set(new.tasks) - set(base.tasks))
    if (only_base or only_new) and not allow_subset:
        common = len(set(base.tasks) & set(new.tasks))
        raise EvalkitError(
            f"{base_label} and {new_label} loaded different tasks of suite `{base.suite}` "
            f"(missing in the new run: {_named(only_base)}; missing in the base run: {_named(only_new)}); "
            f"see `skipped_tasks` in their run.json, or pass --allow-subset to compare the {common} tasks both loaded"
        )
    return only_base, only_new


def subset_note(only_base: list[str], only_new: list[str]) -> str:
    """What --allow-subset left out, for the comparison's notes."""
    return (
        "--allow-subset: compared on the tasks both runs loaded; left out, loaded only by the base run: "
        f"{_named(only_base)}; only by the new run: {_named(only_new)}"
    )
