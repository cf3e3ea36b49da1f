"""The diff of a workspace whose git the agent broke (a stale `index.lock` left by a git it killed,
`.git` removed, made read-only or rewritten): taken against evalkit's own copy of the base
repository instead, so that the agent's change is still scored.

Without it the diff failed, and the attempt became a `sandbox_error`: the harness's failure,
left out of every score and run again by every resume, for something the agent did. The copy is
the workspace archive's `.git`, put into the sandbox under a fresh name, owned by root and
read-only; git runs with clean variables (no config of the agent's: no fsmonitor, filters or
aliases it set), a fresh index and object store in a scratch folder, and the base objects read
through alternates. The workspace's own `.git` and `.gitignore` rules still leave out what they
left out (the base's `info/exclude` comes with the copy).
"""

from __future__ import annotations

import io
import secrets
import shlex
import tarfile

SCRATCH_PARENT = "/tmp"


def base_git_name() -> str:
    """A name under SCRATCH_PARENT no agent could have prepared in advance."""
    return f"evalkit-base-{secrets.token_hex(8)}.git"


def base_git_tar(workspace_archive: bytes, name: str) -> bytes:
    """The workspace archive's `.git`, renamed `name`, owned by root, read-only for everyone else."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(workspace_archive)) as source, tarfile.open(fileobj=out, mode="w") as tar:
        for member in source:
            path = member.name.removeprefix("./")
            if path != ".git" and not path.startswith(".git/"):
                continue
            if not (member.isdir() or member.isfile()):
                continue
            member.name = name + path.removeprefix(".git")
            member.uid = member.gid = 0
            member.uname = member.gname = "root"
            member.mode = 0o755 if member.isdir() else 0o444
            tar.addfile(member, source.extractfile(member) if member.isfile() else None)
    return out.getvalue()


def base_git_diff_command(git_dir: str, workdir: str, base_commit: str) -> str:
    """The shell command printing the workspace's change against `base_commit`, read from the
    repository at `git_dir` (read-only), whatever the workspace's own `.git` has become."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_COUNT": "1",  # the copy is root's: git would refuse a repository of another owner
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
        "GIT_DIR": git_dir,
        "GIT_WORK_TREE": workdir,
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": f"{git_dir}/objects",
    }
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    git = f"git add --all && git diff --cached --binary {shlex.quote(base_commit)}"
    scratch = 'HOME="$t" GIT_INDEX_FILE="$t/index" GIT_OBJECT_DIRECTORY="$t/objects"'
    return (  # a subshell: its `exit` must not end the sandbox's persistent shell
        f'(t=$(mktemp -d) && mkdir "$t/objects" && (cd {shlex.quote(workdir)} && '
        f"env -i {assignments} {scratch} sh -c {shlex.quote(git)}); "
        'rc=$?; rm -rf "$t"; exit $rc)'
    )
