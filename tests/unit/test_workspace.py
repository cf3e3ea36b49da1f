import io
import subprocess
import tarfile

import pytest

from evalkit.errors import EvalkitError
from evalkit.sandbox.workspace import build_workspace, write_base_repository
from evalkit.tasks import TaskSource


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def unpack(workspace, dest):
    with tarfile.open(fileobj=io.BytesIO(workspace.archive)) as tar:
        assert {m.uid for m in tar.getmembers()} == {1000}
        tar.extractall(dest, filter="data")


def test_git_source_becomes_one_commit_with_no_later_history(tmp_path):
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "lib.py").write_text("value = 1\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "lib.py").write_text("value = 2  # the fix\n")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "the fix")
    fix = git(repo, "rev-parse", "HEAD")

    workspace = build_workspace(TaskSource(git=str(repo), base_commit=base), repo_cache=tmp_path / "cache")
    unpack(workspace, tmp_path / "ws")
    ws = tmp_path / "ws"
    assert (ws / "lib.py").read_text() == "value = 1\n"
    assert git(ws, "log", "--all", "--format=%H").splitlines() == [workspace.base_commit]
    assert subprocess.run(["git", "cat-file", "-e", fix], cwd=ws, capture_output=True).returncode != 0
    assert (
        "the fix"
        not in subprocess.run(
            ["git", "grep", "-e", "fix", "--all-match"], cwd=ws, capture_output=True, text=True
        ).stdout
    )


def test_same_tree_gives_same_base_commit_and_caches_are_left_out(tmp_path):
    snap = tmp_path / "snap"
    (snap / "pkg" / "__pycache__").mkdir(parents=True)
    (snap / "pkg" / "mod.py").write_text("x = 1\n")
    (snap / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    first = build_workspace(TaskSource(snapshot=snap))
    second = build_workspace(TaskSource(snapshot=snap))
    assert first.base_commit == second.base_commit
    unpack(first, tmp_path / "ws")
    assert not (tmp_path / "ws" / "pkg" / "__pycache__").exists()
    assert "__pycache__/" in (tmp_path / "ws" / ".git" / "info" / "exclude").read_text()


def test_a_base_repository_holds_the_workspaces_commit_and_takes_a_second_tree_as_a_branch(tmp_path):
    first, second = tmp_path / "v1", tmp_path / "v2"
    for folder, value in ((first, 1), (second, 2)):
        folder.mkdir()
        (folder / "lib.py").write_text(f"value = {value}\n")
    dest = tmp_path / "repos" / "lib"
    commit = write_base_repository(TaskSource(snapshot=first), dest)
    assert commit == build_workspace(TaskSource(snapshot=first)).base_commit == git(dest, "rev-parse", "HEAD")
    assert git(dest, "status", "--porcelain") == ""  # the tree is checked out, nothing left uncommitted
    other = write_base_repository(TaskSource(snapshot=second), dest)
    assert other == build_workspace(TaskSource(snapshot=second)).base_commit
    assert git(dest, "rev-parse", f"base-{other[:12]}") == other
    assert write_base_repository(TaskSource(snapshot=first), dest) == commit  # already there: unchanged
    (tmp_path / "plain").mkdir()
    with pytest.raises(EvalkitError, match="exists and is not a git repository"):
        write_base_repository(TaskSource(snapshot=first), tmp_path / "plain")
