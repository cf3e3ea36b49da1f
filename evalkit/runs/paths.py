"""The layout of a run folder, named in one place: every module that reads or writes a run asks
`RunPaths` for the file, and `is_run_folder` is the one answer to "is this folder a run".

    run.json         what was asked (RunManifest), written when the run opens
    results.jsonl    one row per finished attempt (AttemptRecord), appended
    scores.jsonl     every attempt on the axes (AttemptScores), rewritten by each scoring
    summary.json     the per-model and per-tag aggregates (RunSummary), rewritten by each scoring
    trajectories/    one <task>__<model>__<sample>.jsonl per attempt
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError

MANIFEST = "run.json"
RESULTS = "results.jsonl"
SCORES = "scores.jsonl"
SUMMARY = "summary.json"
TRAJECTORIES = "trajectories"
RUN_MARKERS = (MANIFEST, RESULTS)  # either makes a folder a run (results.jsonl alone: a run from before run.json)


@dataclass(frozen=True)
class RunPaths:
    """The files of the run folder `dir` (nothing is read or created here)."""

    dir: Path

    @property
    def manifest(self) -> Path:
        return self.dir / MANIFEST

    @property
    def results(self) -> Path:
        return self.dir / RESULTS

    @property
    def scores(self) -> Path:
        return self.dir / SCORES

    @property
    def summary(self) -> Path:
        return self.dir / SUMMARY

    @property
    def trajectories(self) -> Path:
        return self.dir / TRAJECTORIES

    def trajectory(self, relative: str) -> Path:
        """An attempt's trajectory from its record's `trajectory` field (relative to the folder)."""
        return self.dir / relative

    def require_manifest(self, label: Path | str | None = None) -> None:
        """One line when the folder has no run.json (nothing to score, compare or show)."""
        if not self.manifest.is_file():
            raise EvalkitError(f"{label or self.dir}: not an evalkit run folder (no {MANIFEST})")

    def require_results(self, label: Path | str | None = None) -> None:
        """One line when the folder has no results.jsonl."""
        if not self.results.exists():
            raise EvalkitError(f"{label or self.dir}: no {RESULTS}; is this an evalkit run folder?")


def is_run_folder(path: Path | str) -> bool:
    """A folder evalkit ran into: it has a run.json or a results.jsonl."""
    return any((Path(path) / marker).exists() for marker in RUN_MARKERS)
