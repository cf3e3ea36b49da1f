"""One attempt's detail, the content of `attempts/<n>.js`: the trajectory as a reader follows it,
the hidden tests' log, the patch, the facts, the scores, the quality axis's parts with the lines
each blames, the reviewer's verdict with its transcript, and the integrity report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.report.leaderboard.loaded_runs import AttemptRef, attempt_resolved, attempt_tests_passed
from evalkit.review.verdict import ReviewVerdict
from evalkit.runs.paths import RunPaths
from evalkit.scoring.quality import QualityScore
from evalkit.scoring.quality_reading import QualityFinding
from evalkit.trajectory import read_trajectory

TEST_LOG_CHARS = 20_000
LISTED = 20  # findings per quality part, and lines a reviewer blames, listed; the rest only counted


# -- one attempt's detail -------------------------------------------------------------------------
def _text(content: object) -> str | None:
    """Message content as text: a string as is, structured content (parts) as indented JSON."""
    if content is None or isinstance(content, str):
        return content
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def _arguments(raw: object) -> dict[str, Any]:
    """Tool-call arguments for reading: a JSON object as `args` (name, text) pairs, string values
    as they are so that code reads as code; anything else (malformed JSON) `raw`, exactly as sent."""
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        return {"raw": raw if isinstance(raw, str) else _text(raw)}
    return {
        "args": [[str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)] for k, v in parsed.items()]
    }


def trajectory_view(events: list[dict]) -> tuple[list[dict], str | None]:
    """The events a reader follows (messages with their tool calls and outputs, model calls,
    questions to the simulated user with their answers and classes, the stop), and the hidden
    tests' log from the `correctness` event (head and tail when long)."""
    tools = {e.get("call_id"): e for e in events if e.get("type") == "tool"}
    names = {}
    out: list[dict] = []
    log = None
    for event in events:
        kind = event.get("type")
        if kind == "start":
            out.append(
                {
                    "kind": "start",
                    "t": event.get("t"),
                    "limits": event.get("limits"),
                    "started_at": event.get("started_at"),
                }
            )
        elif kind == "message":
            message = event.get("message") or {}
            item: dict[str, Any] = {
                "kind": "message",
                "t": event.get("t"),
                "role": message.get("role"),
                "content": _text(message.get("content")),
            }
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id")] = function.get("name")
                calls.append(
                    {"id": call.get("id"), "name": function.get("name"), **_arguments(function.get("arguments"))}
                )
            if calls:
                item["tool_calls"] = calls
            if message.get("role") == "tool":
                call_id = message.get("tool_call_id")
                meta = tools.get(call_id, {})
                item["tool"] = {
                    "call_id": call_id,
                    "name": meta.get("name") or names.get(call_id),
                    "fault": meta.get("fault"),
                    "exit_code": meta.get("exit_code"),
                    "truncated": meta.get("truncated"),
                    "sandbox_s": meta.get("sandbox_s"),
                }
            out.append(item)
        elif kind == "model_call":
            usage = event.get("usage") or {}
            out.append(
                {
                    "kind": "model_call",
                    "t": event.get("t"),
                    "turn": event.get("turn"),
                    "latency_s": event.get("latency_s"),
                    "tokens": usage.get("total_tokens"),
                    "finish_reason": event.get("finish_reason"),
                    "retries": len(event.get("retries") or []),
                }
            )
        elif kind == "user":  # a question to the simulated user and its (redacted) answer
            out.append(
                {
                    "kind": "user",
                    "t": event.get("t"),
                    "question": _text(event.get("question")),
                    "answer": _text(event.get("answer")),
                    "class": event.get("class"),
                    "via": event.get("via") or "ask_user",
                    "redacted": event.get("redacted"),
                    "error": event.get("error"),
                }
            )
        elif kind == "stop":
            out.append(
                {
                    "kind": "stop",
                    "t": event.get("t"),
                    "stop_reason": event.get("stop_reason"),
                    "error": event.get("error"),
                }
            )
        elif kind == "correctness":
            log = (event.get("result") or {}).get("log")
    if isinstance(log, str) and len(log) > TEST_LOG_CHARS:
        half = TEST_LOG_CHARS // 2
        log = f"{log[:half]}\n… {len(log) - TEST_LOG_CHARS:,} characters left out …\n{log[-half:]}"
    return out, log


# -- the quality axis and the reviewer ------------------------------------------------------------
def _listed(items: list) -> tuple[list, int]:
    """The first LISTED items and how many more there are: a sloppy change can have hundreds."""
    return items[:LISTED], max(0, len(items) - LISTED)


def _part_facts(part: str, quality: QualityScore) -> str | None:
    """What the scope and size parts charge for beside their findings (the figures, not lines)."""
    if part == "scope" and quality.missed_files:
        return "reference files left alone: " + ", ".join(quality.missed_files)
    if part == "size" and quality.size_ratio is not None:
        return (
            f"{quality.changed_lines} non-test lines changed, the reference {quality.reference_lines} "
            f"({round(quality.size_ratio, 2):g}x; 0.5x to 2x is not charged)"
        )
    return None


def quality_view(quality: QualityScore) -> dict[str, Any]:
    """Each part of the quality axis with its score, what it took off the axis and the findings it
    charged for (file and line), so that a reader sees which lines each part blames."""
    by_part: dict[str, list[QualityFinding]] = {}
    for finding in quality.findings:
        by_part.setdefault(finding.part, []).append(finding)
    parts = []
    for part in dict.fromkeys([*quality.parts, *by_part]):  # the axis's order; a finding's part never lost
        shown, more = _listed(by_part.get(part, []))
        parts.append(
            {
                "part": part,
                "score": quality.parts.get(part),
                "charged": quality.charged.get(part, 0.0),
                "cost": quality.weights.get(part),
                "allowed": quality.allowed.get(part, 0),  # findings the reference shows too: not charged
                "findings": [f.model_dump(include={"path", "line", "what"}) for f in shown],
                "more": more,
                "facts": _part_facts(part, quality),
            }
        )
    return {
        "score": quality.score,
        "note": quality.note,
        "broken_pass_to_pass": quality.broken_pass_to_pass,
        "parts": parts,
    }


def _transcript(relative: str | None, run_dir: Path) -> tuple[list[dict], str | None]:
    """The review's events from the run folder, or why there are none."""
    if not relative:
        return [], "no transcript recorded"
    path = Path(run_dir) / relative
    if not path.resolve().is_relative_to(Path(run_dir).resolve()):
        return [], f"transcript {relative} is outside the run folder: not read"
    if not path.is_file():
        return [], f"transcript {relative} is missing from the run folder"
    try:
        return read_trajectory(path), None
    except (OSError, UnicodeDecodeError) as exc:  # one unreadable transcript costs its own view only
        return [], f"transcript {relative} cannot be read ({exc})"


def review_view(review: ReviewVerdict, run_dir: Path) -> dict[str, Any]:
    """The reviewer's verdict as the attempt view shows it: the rubric's answers with the lines it
    blames (the first LISTED), the error of a failed review, what it cost, and its transcript read
    as an agent's trajectory is."""
    data = review.model_dump(mode="json")
    lines_more = 0
    if data["answers"]:
        data["answers"]["lines"], lines_more = _listed(data["answers"]["lines"])
    events, note = _transcript(review.transcript, run_dir)
    return {**data, "lines_more": lines_more, "transcript_view": trajectory_view(events)[0], "transcript_note": note}


_SHOWN_APART: dict[str, Any] = {
    **dict.fromkeys(("run_id", "task_id", "model", "sample", "integrity", "review"), True),
    "quality": {"findings"},
}


def attempt_detail(ref: AttemptRef, siblings: list[list[Any]], prompts: dict[str, str]) -> dict[str, Any]:
    """Everything the attempt view shows for one attempt (the content of attempts/<n>.js)."""
    record, run = ref.record, ref.run
    note = None
    events: list[dict] = []
    if not record.trajectory:
        note = "no trajectory recorded"
    elif not (path := RunPaths(run.dir).trajectory(record.trajectory)).is_file():
        note = f"trajectory {record.trajectory} is missing from the run folder"
    else:
        events = read_trajectory(path)
    trajectory, log = trajectory_view(events)
    first_user = next(
        (e["content"] for e in trajectory if e.get("kind") == "message" and e.get("role") == "user"), None
    )
    score = ref.score
    integrity = ref.integrity
    return {
        "n": ref.n,
        "suite": ref.suite,
        "run_id": run.manifest.run_id,
        "task_id": record.task_id,
        "model": record.model,
        "sample": record.sample,
        "status": ref.status,
        "resolved": attempt_resolved(record, score),
        "tests_resolved": attempt_tests_passed(record, score),
        "integrity": {
            **integrity.model_dump(mode="json"),  # verdict, flags (kind, evidence, step, source), restored
            "from": "scores.jsonl" if score else "results.jsonl",
        },
        "stop_reason": record.stop_reason,
        "error": record.error,
        "prompt": first_user if first_user is not None else prompts.get(record.task_id),
        "final_message": record.final_message,
        "patch": record.model_patch,
        "patch_applied": record.patch_applied,
        "facts": {
            "turns": record.turns,
            "tool_calls": record.tool_calls,
            "tokens": record.usage.get("total_tokens"),
            "duration_s": record.duration_s,
            "agent_s": record.agent_s,
            "model_time_s": record.model_time_s,
            "faults": record.faults,
            "retries": record.retries,
        },
        # the findings and the review once each, below, rather than in the scores too
        "scores": score.model_dump(exclude=_SHOWN_APART) if score else None,
        "quality": quality_view(score.quality) if score else None,
        "review": review_view(score.review, run.dir) if score and score.review else None,
        "tests": {"fail_to_pass": record.fail_to_pass.model_dump(), "pass_to_pass": record.pass_to_pass.model_dump()},
        "test_log": log,
        "trajectory": trajectory,
        "trajectory_note": note,
        "siblings": siblings,  # [n, sample, status, run, integrity verdict] of every sample of this task, model and run
    }
