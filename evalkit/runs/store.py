"""A run's records: `run.json` (what was asked, and the suite's tasks that did not load),
`results.jsonl` (one row per finished attempt) and `trajectories/`, at the places `RunPaths` names.

Rows are appended with one `write` on an O_APPEND descriptor and fsynced, so a killed run loses
at most the attempts in flight; a line cut short by a kill is dropped when the run is reopened.
The file is never rewritten: an attempt run again (a resume, `--retry-errors`) is a new row, and
the last row of an attempt key wins.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from evalkit.errors import EvalkitError
from evalkit.files import append_line, attempt_file_name, cut_partial_line, read_lines, write_atomic
from evalkit.records import ERROR_STOP_REASONS, RERUN_STOP_REASONS, AttemptRecord
from evalkit.runs.paths import RunPaths
from evalkit.tasks import SkippedTask


class RunOptions(BaseModel):
    """What `evalkit run --run-id X` alone runs again, beside the suite, the models and the samples."""

    task_ids: list[str] | None = None  # chosen by --task / --limit; None: every task of the suite
    limits: dict[str, int | float] = Field(default_factory=dict)  # --max-turns, --max-tokens, --wall-time...
    config: str | None = None  # --config, when one was given
    skip_invalid: bool = False  # --skip-invalid: the tasks of the suite that do not load are skipped
    strict_env: bool = False  # --strict-env: SWE-bench tasks without an exact offline environment are refused
    agent: str = "tool-loop"  # --agent: what works on each task (runs from before agents: the tool loop)
    backend: str = "docker"  # --backend of the last session; `evalkit run --run-id X` alone uses it again
    executor: str = "local"  # --executor of the last session, likewise
    ray_address: str | None = None  # --ray-address of the last session (--executor ray)
    registry: str | None = None  # --registry of the last session (--executor ray)
    user: str = "none"  # --user: none, or simulated (the agent may ask a simulated user); runs from before: none
    user_model: str = "oracle-user"  # --user-model: who answers (oracle-user, or a model name)


class RunManifest(BaseModel):
    run_id: str
    suite: str
    suite_path: str
    tasks: list[str]  # every task of the suite that loaded (not only those attempted)
    skipped_tasks: list[SkippedTask] = Field(default_factory=list)  # tasks of the suite that did not load, and why
    models: dict[str, dict]  # name → public endpoint description (never a key)
    samples: int
    created_at: str
    updated_at: str
    options: RunOptions = Field(default_factory=RunOptions)  # absent in runs from before resume by id


class RunStore:
    """The files of one run; safe to append from several threads."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir
        self.paths = RunPaths(run_dir)
        self.results_path = self.paths.results
        self.trajectories = self.paths.trajectories
        self._lock = threading.Lock()
        self._rows: Counter[tuple[str, str, int]] | None = None  # rows per attempt key, read once when asked

    def open(self) -> None:
        """Create the folder, and cut a last line a killed run left half-written."""
        self.trajectories.mkdir(parents=True, exist_ok=True)
        cut_partial_line(self.results_path)

    def append(self, record: AttemptRecord) -> None:
        with self._lock:
            append_line(self.results_path, record.model_dump_json())
            if self._rows is not None:
                self._rows[record.key] += 1

    def trajectory_path(self, task_id: str, model: str, sample: int) -> Path:
        """Where the attempt's next row keeps its trajectory: the attempt's own name for its first
        row, `<name>.try<N>.jsonl` for its N-th, so that a row of an attempt run again (engine
        lost, a resume, --retry-errors) never overwrites the trajectory an earlier row names."""
        with self._lock:
            if self._rows is None:
                self._rows = Counter(record.key for record in self._all_rows())
            tries = self._rows[(task_id, model, sample)] + 1
        suffix = ".jsonl" if tries == 1 else f".try{tries}.jsonl"
        return self.trajectories / attempt_file_name(task_id, model, sample, suffix)

    def records(self) -> list[AttemptRecord]:
        """Every row; for a key recorded twice (an errored attempt run again) the last one wins."""
        return list({record.key: record for record in self._all_rows()}.values())

    def _all_rows(self) -> Iterator[AttemptRecord]:
        if not self.results_path.exists():
            return
        for number, line in enumerate(read_lines(self.results_path), 1):
            if not line.strip():
                continue
            try:
                yield AttemptRecord.model_validate_json(line)
            except ValidationError as exc:
                if number == 1 and "json_invalid" in str(exc):
                    raise EvalkitError(f"{self.results_path}: not an evalkit results file") from None
                continue  # a line cut short by a kill

    def finished_keys(self, retry_errors: bool = False) -> set[tuple[str, str, int]]:
        """The attempts a resume keeps: all but sandbox errors, and with `retry_errors` all but
        every errored attempt (endpoint errors too)."""
        again = ERROR_STOP_REASONS if retry_errors else RERUN_STOP_REASONS
        return {r.key for r in self.records() if r.stop_reason not in again}

    def read_manifest(self) -> RunManifest | None:
        path = self.paths.manifest
        if not path.exists():
            return None
        try:
            return RunManifest.model_validate_json(path.read_text())
        except ValidationError:
            raise EvalkitError(f"{path}: not an evalkit run manifest; use another --run-id") from None

    def required_manifest(self, label: Path | str | None = None) -> RunManifest:
        """The run.json of a run folder; one EvalkitError line when it has none (nothing to score,
        compare or show)."""
        self.paths.require_manifest(label)
        manifest = self.read_manifest()
        assert manifest is not None
        return manifest

    def write_manifest(self, manifest: RunManifest) -> None:
        write_atomic(self.paths.manifest, json.dumps(manifest.model_dump(), indent=2) + "\n")
