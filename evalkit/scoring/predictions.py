"""SWE-bench predictions: read them, and write per-instance evaluation reports.

A predictions file is JSON (a list, or a dict keyed by instance id) or JSONL, each record with
`instance_id`, `model_name_or_path` and `model_patch`, as SWE-bench's harness expects.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from evalkit.errors import EvalkitError
from evalkit.files import file_component, write_atomic
from evalkit.integrity import IntegrityPolicy
from evalkit.verify.correctness import CorrectnessResult


class Prediction(BaseModel):
    instance_id: str
    model_name_or_path: str = "unknown"
    model_patch: str | None = None


def load_predictions(path: Path) -> tuple[list[Prediction], list[str]]:
    """The predictions of a file, and one line per record that is not one (naming the file, the
    record and the field): one bad record costs that record, not the evaluation. A file that is not
    JSON at all (not JSONL) is one EvalkitError."""
    if not path.exists():
        raise EvalkitError(f"{path}: no such predictions file")
    text = path.read_text(encoding="utf-8", errors="replace")
    problems: list[str] = []
    records: list[tuple[int, object]] = []
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}: line {number} is not valid JSON ({exc.msg}); left out")
        where = "line"
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvalkitError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
        values = list(data.values()) if isinstance(data, dict) else data if isinstance(data, list) else [data]
        records = list(enumerate(values, start=1))
        where = "record"
    predictions = []
    for number, record in records:
        try:
            predictions.append(Prediction.model_validate(record))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(map(str, err["loc"])) or "(record)"
            problems.append(f"{path}: {where} {number}, field `{field}`: {err['msg']}; left out")
    return predictions, problems


def instance_folder(out_dir: Path, prediction: Prediction) -> Path:
    """`<out>/<model>/<instance_id>/`, each as `file_component`."""
    return out_dir / file_component(prediction.model_name_or_path) / file_component(prediction.instance_id)


def write_instance_report(
    out_dir: Path, prediction: Prediction, result: CorrectnessResult, policy: IntegrityPolicy = "fail"
) -> None:
    """The instance's folder gets patch.diff, test_output.txt and, last, report.json (with the
    integrity `policy` its verdict followed): a folder with a report.json is whole (an earlier one
    is removed first, so a kill between the files never leaves an old report beside a new patch)."""
    folder = instance_folder(out_dir, prediction)
    (folder / "report.json").unlink(missing_ok=True)
    report = result.model_dump(mode="json", exclude={"log"})
    report["model_name_or_path"] = prediction.model_name_or_path
    report["integrity_policy"] = policy
    write_atomic(folder / "patch.diff", prediction.model_patch or "")
    write_atomic(folder / "test_output.txt", result.log)
    write_atomic(folder / "report.json", json.dumps({prediction.instance_id: report}, indent=2))


def read_instance_report(
    out_dir: Path, prediction: Prediction, policy: IntegrityPolicy = "fail"
) -> CorrectnessResult | None:
    """The result an earlier evaluation reported for `prediction`, if it still holds: whole, for the
    same patch, under the same integrity `policy`, and not an error (a harness or environment
    failure is evaluated again); else None."""
    folder = instance_folder(out_dir, prediction)
    try:
        report = json.loads((folder / "report.json").read_text())[prediction.instance_id]
        patch = (folder / "patch.diff").read_text()
        result = CorrectnessResult.model_validate({**report, "log": (folder / "test_output.txt").read_text()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # ValidationError is a ValueError
        return None
    if patch != (prediction.model_patch or "") or result.error or report.get("integrity_policy") != policy:
        return None
    return result


def summary_report(results: dict[str, CorrectnessResult], unknown: list[str]) -> dict:
    """The SWE-bench-style summary: id lists per outcome and counts."""
    resolved = sorted(i for i, r in results.items() if r.resolved)
    empty = sorted(i for i, r in results.items() if r.patch_empty)
    errors = sorted(i for i, r in results.items() if r.error)
    unapplied = sorted(i for i, r in results.items() if not r.patch_applied)
    unresolved = sorted(i for i, r in results.items() if not r.resolved and i not in errors and i not in empty)
    return {
        "submitted_instances": len(results) + len(unknown),
        "completed_instances": len(results) - len(errors),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "empty_patch_ids": empty,
        "error_ids": errors,
        "patch_not_applied_ids": unapplied,
        "unknown_instance_ids": sorted(unknown),
    }
