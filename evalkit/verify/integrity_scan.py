"""The integrity scan of one attempt: the rules over its tool calls (`command_rules`) and its diff
(`source_rules`), plus what its scoring sandbox recorded (restorations and the guard's findings,
which cannot be recomputed without running the tests again and are carried over as recorded).

Pure and deterministic: `evalkit score` and `evalkit integrity` give the same flags from the same
run folder.
"""

from __future__ import annotations

from evalkit.integrity import IntegrityFlag, IntegrityReport
from evalkit.verify.command_rules import scan_tool_calls
from evalkit.verify.obfuscation import scan_obfuscation
from evalkit.verify.source_rules import scan_source_diff

DEFAULT_WORKDIR = "/workspace"


def workdir_of(events: list[dict]) -> str:
    start = next((e for e in events if e.get("type") == "start"), {})
    return str(start.get("workdir") or DEFAULT_WORKDIR)


def scan_attempt(
    events: list[dict],
    patch: str,
    test_flags: list[IntegrityFlag] | None = None,
    restored: list[str] | None = None,
) -> IntegrityReport:
    """Every flag of one attempt: trajectory and diff rules, and the test run's own flags."""
    flags = [
        *scan_tool_calls(events, workdir_of(events)),
        *scan_source_diff(patch),
        *scan_obfuscation(patch),
        *(test_flags or []),
    ]
    return IntegrityReport.of(flags, restored)


def recorded_test_flags(report: IntegrityReport) -> list[IntegrityFlag]:
    """The flags only the scoring sandbox could see, to carry into a re-scan."""
    return [f for f in report.flags if f.source == "tests"]
