"""Diffs are read as git writes them: only `\\n` ends a line. A lone carriage return, a form feed,
`\\x1c`-`\\x1e`, U+2028, bytes that are not UTF-8 and binary parts are content, so evalkit's parse of
a diff git wrote counts the same files and lines as `git apply --numstat`, a task keeps the bytes,
and the rows that carry a diff stay one line each (seen: a gather stopped at a test-data commit with
`...EMPTY_SET)\\r\\r\\n`, "Hunk is longer than expected")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evalkit.diffs import changed_lines, changed_paths, diff_bytes, numstat, patched_text, substantive_paths
from evalkit.gather.history import Commit, commits, split_commit
from evalkit.records import AttemptRecord
from evalkit.runs.store import RunStore
from evalkit.user.leaks import new_identifiers

ODD = {
    "lone-cr": b"left = EMPTY_SET)\r\r\nright = 1\rtwo\n",
    "crlf": b"one = 1\r\ntwo = 2\r\n",
    "form-feed": b"page = 1\n\x0c\nnext = 2\n",
    "separators": b"a = '\x1c'\nb = '\x1d'\nc = '\x1e'\n",
    "line-separator": "text = 'one\u2028two\x85three'\n".encode(),
    "latin-1": b"name = 'Jos\xe9'\nsign = '\xa7'\n",
    "no-final-newline": b"x = 1\ny = 2",
}


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True, check=True).stdout


def _repo(tmp_path: Path, before: dict[str, bytes], after: dict[str, bytes]) -> tuple[Path, Commit]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    _git(repo, "config", "core.autocrlf", "false")
    for files, message in ((before, "base"), (after, "change")):
        for name, data in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(data)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
    return repo, commits(repo)[0]


def _git_numstat(repo: Path, parent: str, patch: str) -> dict[str, tuple[int, int] | None]:
    _git(repo, "checkout", "-q", parent)
    out = _git(repo, "apply", "--numstat", "-", data=diff_bytes(patch)).decode()
    counts = {}
    for line in out.splitlines():
        added, removed, path = line.split("\t")
        counts[path] = None if added == "-" else (int(added), int(removed))
    return counts


@pytest.mark.parametrize("kind", sorted(ODD))
def test_a_diff_with_odd_bytes_parses_as_git_apply_counts_it(tmp_path, kind):
    body = ODD[kind]
    before = {"pkg/mod.py": b"keep = 0\n" + body, "tests/test_mod.py": b"def test_a():\n    pass\n"}
    after = {"pkg/mod.py": b"keep = 1\n" + body + b"\nadded = 2\n" + body, "tests/test_mod.py": body + b"\n"}
    repo, commit = _repo(tmp_path, before, after)
    patch, test_patch = split_commit(repo, commit, ("tests/**",))
    for part in (patch, test_patch):
        assert numstat(part) == _git_numstat(repo, commit.parent, part)
        _git(repo, "apply", "--check", "-", data=diff_bytes(part))  # the bytes git wrote, unchanged
    assert changed_paths(patch) == ["pkg/mod.py"] and changed_lines(patch) == sum(numstat(patch)["pkg/mod.py"])
    base = before["pkg/mod.py"].decode("utf-8", "surrogateescape")
    assert diff_bytes(patched_text(base, patch, "pkg/mod.py")) == after["pkg/mod.py"]
    assert substantive_paths(patch) == ["pkg/mod.py"]


def test_binary_parts_and_every_odd_file_in_one_diff(tmp_path):
    before = {f"data/{k}.txt": b"first\n" + v for k, v in ODD.items()} | {"data/blob.bin": b"\x00\x01\x02"}
    after = {f"data/{k}.txt": v + b"\nlast\n" for k, v in ODD.items()} | {"data/blob.bin": b"\x00\x03"}
    repo, commit = _repo(tmp_path, before, after)
    patch, _ = split_commit(repo, commit, ("tests/**",))
    counts = numstat(patch)
    assert counts == _git_numstat(repo, commit.parent, patch)
    assert counts["data/blob.bin"] is None and len(counts) == len(ODD) + 1


def test_an_added_line_with_a_line_separator_is_one_line_to_the_leak_check():
    patch = "--- a/m.py\n+++ b/m.py\n@@ -0,0 +1 @@\n+value = 'a\u2028b'; secret_name = 1\n"
    assert "secret_name" in new_identifiers(patch, "")


def test_a_row_whose_patch_holds_line_separators_stays_one_row(tmp_path):
    """JSON writers leave U+2028 and U+0085 as they are: the results file must not split there."""
    store = RunStore(tmp_path / "r")
    store.open()
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\u2028c\x85d\x1ce\rf\n"
    store.append(
        AttemptRecord(
            run_id="r", task_id="t", model="m", sample=0, stop_reason="submitted", resolved=False, model_patch=patch
        )
    )
    store.append(AttemptRecord(run_id="r", task_id="u", model="m", sample=0, stop_reason="submitted", resolved=False))
    reopened = RunStore(tmp_path / "r")
    reopened.open()
    assert [(r.task_id, r.model_patch) for r in reopened.records()] == [("t", patch), ("u", "")]


def test_a_row_whose_patch_holds_bytes_that_are_not_utf8_is_written(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    patch = b"x+Jos\xe9\n".decode("utf-8", "surrogateescape")  # as diff_text reads a Latin-1 line
    store.append(
        AttemptRecord(
            run_id="r", task_id="t", model="m", sample=0, stop_reason="submitted", resolved=False, model_patch=patch
        )
    )
    (row,) = RunStore(tmp_path / "r").records()
    assert row.model_patch == "x+Jos\ufffd\n"
