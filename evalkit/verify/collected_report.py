"""The guard's evidence as the collector received it (`collector.read_evidence`), read into the
report the verdict uses. Pure: entries in, the report and flags out.

What counts: the first connection's messages (the guard's: it connects as it loads, before any
code under test). A test's outcome is the worst any of its reports said, and a watched body's
evidence the least any message said: a forger sending on the guard's own channel can add
messages, never take back the guard's. Everything else is evidence: another connection, a line
that is not one of the guard's messages, anything after the guard's final message, a final
message that disagrees with what was reported as the tests ran, a flood."""

from __future__ import annotations

import json
from collections.abc import Iterable

from evalkit.integrity import FlagKind, IntegrityFlag

RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
KINDS = ("hello", "report", "ran", "runtime", "final")


def _flag(evidence: str) -> IntegrityFlag:
    return IntegrityFlag.make(FlagKind.TEST_TAMPERING, evidence, None, "tests")


def _messages(entries: Iterable[dict], conn: int) -> tuple[list[dict], int]:
    """The guard connection's messages, and how many of its lines were not messages."""
    messages, garbage = [], 0
    for entry in entries:
        if entry.get("conn") != conn or "line" not in entry:
            continue
        try:
            message = json.loads(entry["line"])
        except (json.JSONDecodeError, TypeError):
            garbage += 1
            continue
        if isinstance(message, dict) and message.get("kind") in KINDS:
            messages.append(message)
        else:
            garbage += 1
    return messages, garbage


def collected_guard(entries: list[dict]) -> tuple[dict | None, list[IntegrityFlag]]:
    """The guard's report as collected (None: the guard never connected), and the flags."""
    opened = [e for e in entries if e.get("event") == "open"]
    if not opened:
        return None, []
    guard_conn = min(e["conn"] for e in opened)
    flags = []
    others = sorted({(e["conn"], e.get("pid")) for e in opened if e["conn"] != guard_conn})
    if others:
        pids = ", ".join(str(pid) for _, pid in others[:3])
        flags.append(_flag(f"{len(others)} other connection(s) to evalkit's collector in the test run (pid {pids})"))
    if any(e.get("event") == "flood" for e in entries):
        flags.append(_flag("evalkit's collector was flooded past its limit during the test run"))
    messages, garbage = _messages(entries, guard_conn)
    if garbage:
        flags.append(_flag(f"{garbage} line(s) on the guard's channel that the guard never sends"))
    outcomes: dict[str, str] = {}
    ran: dict[str, list[int]] = {}
    runtime: list[dict] = []
    final, after_final = None, 0
    for message in messages:
        kind = message["kind"]
        if final is not None:
            after_final += 1
        elif kind == "report" and message.get("status") in RANK and isinstance(message.get("test"), str):
            test, status = message["test"], message["status"]
            if test not in outcomes or RANK[status] > RANK[outcomes[test]]:
                outcomes[test] = status
        elif kind == "ran" and isinstance(message.get("test"), str) and _counts(message.get("counts")):
            counts = message["counts"]
            old = ran.get(message["test"])
            ran[message["test"]] = list(counts) if old is None else [min(old[0], counts[0]), min(old[1], counts[1])]
        elif kind == "runtime" and isinstance(message.get("entry"), dict):
            runtime.append(message["entry"])
        elif kind == "final" and isinstance(message.get("state"), dict):
            final = message["state"]
    if after_final:
        flags.append(_flag(f"{after_final} message(s) on the guard's channel after its final one"))
    report = dict(final or {"finished": False})
    if final is not None:
        flags += _disagreements(final, outcomes, ran)
        report["final_state"] = final
    report.update(outcomes=outcomes, ran=ran, runtime=runtime)
    return report, flags


def _counts(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)


def _disagreements(final: dict, outcomes: dict[str, str], ran: dict[str, list[int]]) -> list[IntegrityFlag]:
    """The guard's last message against what it sent as the tests ran: its state was changed."""
    said = final.get("outcomes") if isinstance(final.get("outcomes"), dict) else {}
    better = sorted(t for t, s in said.items() if s == "passed" and outcomes.get(t) not in (None, "passed"))
    kept = final.get("ran") if isinstance(final.get("ran"), dict) else {}
    better += sorted(t for t, c in kept.items() if _counts(c) and t in ran and (c[0] > ran[t][0] or c[1] > ran[t][1]))
    if not better:
        return []
    shown = ", ".join(better[:3]) + (f" and {len(better) - 3} more" if len(better) > 3 else "")
    return [_flag(f"the guard's final report says better than it reported as the tests ran: {shown}")]


def file_flags(collected: dict, written: dict | None, junit_sha256: str | None) -> list[IntegrityFlag]:
    """The files the test process could reach, against the collected report: the guard's report
    file (a copy) rewritten, or the JUnit file changed after the guard hashed it."""
    flags = []
    if written is None and collected.get("final_state") is not None:
        flags.append(_flag("the guard's report file is missing or unreadable though the guard sent its final report"))
    elif written is not None and written != collected.get("final_state"):
        flags.append(_flag("evalkit's guard report file was rewritten after the guard wrote it"))
    expected = collected.get("junit_sha256")
    if expected and junit_sha256 and expected != junit_sha256:
        flags.append(_flag("the JUnit file changed after pytest wrote it (its sha256 differs from the guard's)"))
    return flags
