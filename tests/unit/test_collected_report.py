"""The collector's evidence read into the guard's report (collected_report.py), and the collector
itself run for real as a local process: a forger on the guard's channel can add to what the guard
said, never take it back, and what the test process can rewrite is checked against it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from evalkit.verify.collected_report import collected_guard, file_flags
from evalkit.verify.collector import COLLECTOR_SOURCE


def _entries(*connections: list[dict]) -> list[dict]:
    entries = []
    for conn, messages in enumerate(connections):
        entries.append({"conn": conn, "event": "open", "pid": 100 + conn, "uid": 1000})
        entries += [{"conn": conn, "line": m if isinstance(m, str) else json.dumps(m)} for m in messages]
    return entries


def _report(test: str, status: str, when: str = "call") -> dict:
    return {"kind": "report", "test": test, "when": when, "status": status}


FINAL = {"kind": "final", "state": {"finished": True, "outcomes": {"t::a": "failed"}, "ran": {"t::a": [3, 0]}}}


def test_the_guard_s_streamed_outcomes_are_the_report_worst_wins():
    guard = [{"kind": "hello", "pid": 100}, _report("t::a", "failed"), _report("t::a", "passed"), FINAL]
    report, flags = collected_guard(_entries(guard))
    assert report["outcomes"] == {"t::a": "failed"} and report["finished"] and flags == []


def test_a_forged_pass_on_the_guard_s_own_channel_cannot_take_back_a_failure():
    forged = {"kind": "final", "state": {"finished": True, "outcomes": {"t::a": "passed"}, "ran": {"t::a": [3, 3]}}}
    guard = [_report("t::a", "failed"), {"kind": "ran", "test": "t::a", "counts": [3, 0]}, forged]
    report, flags = collected_guard(_entries(guard))
    assert report["outcomes"] == {"t::a": "failed"} and report["ran"] == {"t::a": [3, 0]}
    assert len(flags) == 1 and "better than it reported" in flags[0].evidence


def test_another_connection_garbage_and_messages_after_the_final_are_flagged():
    guard = [_report("t::a", "failed"), "not json", FINAL, _report("t::a", "passed")]
    _, flags = collected_guard(_entries(guard, [_report("t::a", "passed")]))
    said = " | ".join(f.evidence for f in flags)
    assert "1 other connection" in said and "never sends" in said and "after its final" in said
    assert all(f.kind.value == "test_tampering" and f.source == "tests" for f in flags)


def test_no_connection_is_no_report():
    assert collected_guard([]) == (None, [])


def test_the_report_file_is_checked_against_the_collected_final():
    report, _ = collected_guard(_entries([_report("t::a", "failed"), FINAL]))
    assert file_flags(report, dict(FINAL["state"]), None) == []
    rewritten = dict(FINAL["state"], outcomes={"t::a": "passed"})
    assert "rewritten" in file_flags(report, rewritten, None)[0].evidence
    assert "missing" in file_flags(report, None, None)[0].evidence
    erased = dict(FINAL["state"], runner_changed=[])  # what the verdict reads besides outcomes
    assert "rewritten" in file_flags(report, erased, None)[0].evidence


def test_a_junit_file_changed_after_the_guard_hashed_it_is_flagged():
    final = dict(FINAL, state=dict(FINAL["state"], junit_sha256="a" * 64))
    report, _ = collected_guard(_entries([final]))
    assert file_flags(report, dict(final["state"]), "a" * 64) == []
    assert "JUnit" in file_flags(report, dict(final["state"]), "b" * 64)[0].evidence


@pytest.fixture
def collector(tmp_path):
    folder = tmp_path / "collector"
    process = subprocess.Popen([sys.executable, "-c", COLLECTOR_SOURCE, str(folder)])
    try:
        deadline = time.monotonic() + 10
        while not (folder / "ready").exists():
            assert time.monotonic() < deadline and process.poll() is None, "the collector did not come up"
            time.sleep(0.02)
        yield folder
    finally:
        process.kill()
        process.wait()


def _evidence(folder, count: int) -> list[dict]:
    deadline = time.monotonic() + 10
    while True:
        lines = (folder / "evidence.jsonl").read_text().splitlines()
        if len(lines) >= count or time.monotonic() > deadline:
            return [json.loads(line) for line in lines]
        time.sleep(0.02)


def test_the_real_collector_records_each_connection_with_its_peer_and_keeps_what_was_sent(collector):
    guard = socket.socket(socket.AF_UNIX)
    guard.connect(str(collector / "channel.sock"))
    guard.sendall((json.dumps(_report("t::a", "failed")) + "\n").encode())
    time.sleep(0.2)  # the second connection comes after the first is recorded
    forger = socket.socket(socket.AF_UNIX)
    forger.connect(str(collector / "channel.sock"))
    forger.sendall((json.dumps(FINAL) + "\npartial").encode())
    forger.close()
    guard.sendall((json.dumps(FINAL) + "\n").encode())
    guard.close()
    entries = _evidence(collector, 8)
    assert (collector.stat().st_mode & 0o777) == 0o711
    assert ((collector / "evidence.jsonl").stat().st_mode & 0o777) == 0o600
    opened = [e for e in entries if e.get("event") == "open"]
    assert [e["pid"] for e in opened] == [os.getpid()] * 2
    assert {"conn": 1, "line": "partial", "unterminated": True} in entries
    report, flags = collected_guard(entries)
    assert report["outcomes"] == {"t::a": "failed"} and report["finished"]
    assert any("other connection" in f.evidence for f in flags)
