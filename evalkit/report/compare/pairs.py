"""Pairing two runs' attempts for `evalkit compare`: the checks on what is compared (levels,
suites, one model per run), the (task, sample) pairs with errored pairs left out, and the
per-task means the bootstrap resamples. Pure: data frames in, arrays out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.axes import MEAN_AXES
from evalkit.errors import EvalkitError
from evalkit.records import ERROR_STOP_REASONS
from evalkit.report.compare.integrity import COLUMNS as INTEGRITY_COLUMNS
from evalkit.report.compare.integrity import with_integrity

RESOLVED = "resolved"
CONTINUOUS_AXES = MEAN_AXES
AXES = (RESOLVED, *CONTINUOUS_AXES)
REQUIRED_COLUMNS = ("task_id", "model", "sample", *AXES)
KEY = ["task_id", "sample"]


def check_levels(max_drop: float, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise EvalkitError(f"--alpha {alpha}: give a significance level between 0 and 1, e.g. 0.05")
    if not 0 <= max_drop < 1:
        raise EvalkitError(f"--max-drop {max_drop}: give a drop on the axes' 0–1 scale, e.g. 0.02")


def check_suites(base_suite: str, new_suite: str, base_label: str, new_label: str) -> None:
    if base_suite != new_suite:
        raise EvalkitError(
            f"{new_label}: suite `{new_suite}` is not the base run's `{base_suite}` ({base_label}); "
            "compare two runs of the same suite"
        )


def _model_names(frame: pd.DataFrame, label: str) -> list[str]:
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise EvalkitError(f"{label}: no column {', '.join(missing)}; load runs with evalkit.load_results")
    if frame.empty:
        raise EvalkitError(f"{label}: no scored attempt to compare")
    return sorted(frame["model"].astype(str).unique())


def pick_models(
    base: pd.DataFrame,
    new: pd.DataFrame,
    base_model: str | None,
    new_model: str | None,
    base_label: str = "base run",
    new_label: str = "new run",
) -> tuple[str, str]:
    """One model per run: the one given; else the run's only model (so one-model runs pair, as
    "model A vs B" or "agent v1 vs v2"); else the model named for the other run, if this run has it."""
    base_names, new_names = _model_names(base, base_label), _model_names(new, new_label)
    chosen = []
    for given, other_given, names, label, option in (
        (base_model, new_model, base_names, base_label, "--base-model"),
        (new_model, base_model, new_names, new_label, "--new-model"),
    ):
        name = given or (names[0] if len(names) == 1 else other_given if other_given in names else None)
        if name is None:
            raise EvalkitError(f"{label}: several models ({', '.join(names)}); choose one with {option}")
        if name not in names:
            raise EvalkitError(f"{label}: no model `{name}` (it has {', '.join(names)}); fix {option}")
        chosen.append(name)
    return chosen[0], chosen[1]


@dataclass(frozen=True)
class Pairs:
    """The paired attempts, one row per (task, sample) in that order; the columns of `base` and
    `new` follow AXES (resolved as 0/1); `*_integrity` are (verdicts, comma-joined kinds)."""

    task_ids: np.ndarray
    samples: np.ndarray
    base: np.ndarray
    new: np.ndarray
    base_integrity: tuple[np.ndarray, np.ndarray]
    new_integrity: tuple[np.ndarray, np.ndarray]
    unpaired_base: int
    unpaired_new: int
    harness_failures: int


def pair_attempts(base: pd.DataFrame, new: pd.DataFrame, base_label: str, new_label: str) -> Pairs:
    """One model's attempts of each run joined on (task, sample); pairs with an endpoint or sandbox
    error on either side are counted and left out, the rest sorted by task and sample."""
    stop = ["stop_reason"] if "stop_reason" in base and "stop_reason" in new else []
    columns = [*KEY, *AXES, *stop, *INTEGRITY_COLUMNS]
    base, new = with_integrity(base), with_integrity(new)
    try:
        rows = pd.merge(base[columns], new[columns], on=KEY, suffixes=("_base", "_new"), validate="one_to_one")
    except pd.errors.MergeError:
        raise EvalkitError(
            f"{base_label} / {new_label}: an attempt (task, sample) of one model appears twice; "
            "load runs with evalkit.load_results"
        ) from None
    failures = np.zeros(len(rows), dtype=bool)
    if stop:
        stops = list(ERROR_STOP_REASONS)
        failures = np.isin(rows["stop_reason_base"].to_numpy(), stops)
        failures |= np.isin(rows["stop_reason_new"].to_numpy(), stops)
    task_ids = rows["task_id"].to_numpy(dtype=str)[~failures]
    samples = rows["sample"].to_numpy(dtype=int)[~failures]
    order = np.lexsort((samples, task_ids))

    def values(side: str) -> np.ndarray:
        return rows[[f"{a}_{side}" for a in AXES]].to_numpy(dtype=float)[~failures][order]

    def integrity(side: str) -> tuple[np.ndarray, np.ndarray]:
        verdicts, kinds = (rows[f"{c}_{side}"].to_numpy(dtype=str)[~failures][order] for c in INTEGRITY_COLUMNS)
        return verdicts, kinds

    return Pairs(
        task_ids[order],
        samples[order],
        values("base"),
        values("new"),
        integrity("base"),
        integrity("new"),
        len(base) - len(rows),
        len(new) - len(rows),
        int(failures.sum()),
    )


def task_means(pairs: Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tasks (sorted), their paired samples, and per task each axis averaged over its samples
    on both sides; a pair missing a value on either side counts on neither (NaN when none has)."""
    tasks, codes = np.unique(pairs.task_ids, return_inverse=True)
    valid = ~(np.isnan(pairs.base) | np.isnan(pairs.new))
    counts = np.zeros((len(tasks), len(AXES)))
    np.add.at(counts, codes, valid)

    def means(values: np.ndarray) -> np.ndarray:
        sums = np.zeros_like(counts)
        np.add.at(sums, codes, np.where(valid, values, 0.0))
        with np.errstate(invalid="ignore"):
            return sums / counts

    return tasks, np.bincount(codes), means(pairs.base), means(pairs.new)
