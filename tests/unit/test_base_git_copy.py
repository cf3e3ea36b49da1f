"""The copy of the base repository a diff falls back on when the agent broke its workspace's git:
the workspace archive's `.git` alone, under the name given, owned by root and read-only; and the
command reading it runs in a subshell with none of the agent's environment or git config."""

import io
import subprocess
import tarfile

from evalkit.sandbox.base_git import base_git_diff_command, base_git_name, base_git_tar
from evalkit.sandbox.workspace import build_workspace


def test_the_copy_is_the_base_git_alone_owned_by_root_and_read_only(toy_task):
    workspace = build_workspace(toy_task.source)
    name = base_git_name()
    with tarfile.open(fileobj=io.BytesIO(base_git_tar(workspace.archive, name))) as tar:
        members = tar.getmembers()
    assert members and all(m.name == name or m.name.startswith(name + "/") for m in members)
    assert f"{name}/HEAD" in {m.name for m in members} and f"{name}/info/exclude" in {m.name for m in members}
    assert all(m.uid == 0 and m.gid == 0 for m in members)
    assert {m.mode for m in members if m.isfile()} == {0o444} and {m.mode for m in members if m.isdir()} == {0o755}
    assert base_git_name() != name  # a fresh name each time: nothing an agent could have planted


def test_the_diff_reads_the_copy_whatever_the_workspace_git_became(toy_task, tmp_path):
    """On the host, as in the sandbox: the workspace unpacked, changed, its .git removed."""
    workspace = build_workspace(toy_task.source)
    root = tmp_path / "workspace"
    root.mkdir()
    with tarfile.open(fileobj=io.BytesIO(workspace.archive)) as tar:
        tar.extractall(root, filter="tar")
    copy = tmp_path / "copy"
    copy.mkdir()
    with tarfile.open(fileobj=io.BytesIO(base_git_tar(workspace.archive, "base.git"))) as tar:
        tar.extractall(copy, filter="tar")
    (root / "calc" / "__init__.py").write_text("changed\n")
    (root / "new.txt").write_text("new\n")
    subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
    command = base_git_diff_command(str(copy / "base.git"), str(root), workspace.base_commit)
    done = subprocess.run(["bash", "-c", f"export GIT_DIR=/nowhere; git() {{ echo hijacked; }}; {command}"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "diff --git a/calc/__init__.py b/calc/__init__.py" in done.stdout and "+new" in done.stdout
    assert "hijacked" not in done.stdout
