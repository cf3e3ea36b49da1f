"""One attempt's detail, the content of `attempts/<n>.js`: the trajectory as a reader follows it,
the hidden tests' log, the patch, the facts, the scores and the integrity report."""

from __future__ import annotations

import json
from typing import Any

from evalkit.report.leaderboard.loaded_runs import AttemptRef, attempt_resolved, attempt_tests_passed
from evalkit.runs.paths import RunPaths
from evalkit.trajectory import read_trajectory

TEST_LOG_CHARS = 20_000


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
        "scores": score.model_dump(exclude={"run_id", "task_id", "model", "sample", "integrity"}) if score else None,
        "tests": {"fail_to_pass": record.fail_to_pass.model_dump(), "pass_to_pass": record.pass_to_pass.model_dump()},
        "test_log": log,
        "trajectory": trajectory,
        "trajectory_note": note,
        "siblings": siblings,  # [n, sample, status, run, integrity verdict] of every sample of this task, model and run
    }
