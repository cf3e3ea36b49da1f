"""The clone cache under concurrency: tasks of one repository validated side by side each get a
whole clone (never one another's half-made one), and a clone that fails leaves nothing behind."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.sandbox.workspace import cached_clone


def make_repo(path: Path) -> str:
    path.mkdir()
    run = lambda *a: subprocess.run(["git", "-C", str(path), *a], check=True, capture_output=True, text=True)  # noqa: E731
    run("init", "-q")
    for n in range(200):  # enough objects that a clone takes a moment
        (path / f"f{n}.txt").write_text(f"{n}\n" * 200)
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return run("rev-parse", "HEAD").stdout.strip()


def test_concurrent_callers_all_get_the_same_whole_clone(tmp_path: Path) -> None:
    commit = make_repo(tmp_path / "origin")
    url = f"file://{tmp_path / 'origin'}"
    with ThreadPoolExecutor(4) as pool:
        clones = list(pool.map(lambda _: cached_clone(url, tmp_path / "cache"), range(8)))
    assert len(set(clones)) == 1
    shown = subprocess.run(["git", "-C", str(clones[0]), "cat-file", "-e", commit], capture_output=True)
    assert shown.returncode == 0
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [clones[0].name]  # no temporary left


def test_a_failed_clone_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(EvalkitError, match=r"cannot clone .*; import with --repo-dir"):
        cached_clone(f"file://{tmp_path / 'absent'}", tmp_path / "cache", "import with --repo-dir")
    assert list((tmp_path / "cache").iterdir()) == []
