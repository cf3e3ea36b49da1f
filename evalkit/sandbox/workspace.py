"""Build a task's workspace: the base tree as a fresh git repository with exactly one commit.

No later history, no reference patch, no hidden tests: the agent cannot mine `git log --all`
for the answer. The commit is made with fixed author, committer and dates, so the same tree
always gives the same base commit id.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.tasks.model import Task, TaskSource

WORKSPACE_UID = 1000
IGNORED_NAMES = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv"}
# Harness litter that must never count as the agent's change; kept out of the tree, not out of .gitignore.
LOCAL_EXCLUDES = "__pycache__/\n*.pyc\n.pytest_cache/\n"
FIXED_GIT_ENV = {  # one identity and date: the same tree always gives the same commit id
    "GIT_AUTHOR_NAME": "evalkit",
    "GIT_AUTHOR_EMAIL": "evalkit@localhost",
    "GIT_COMMITTER_NAME": "evalkit",
    "GIT_COMMITTER_EMAIL": "evalkit@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


@dataclass(frozen=True)
class Workspace:
    """A tar archive of the workspace repository (owned by the sandbox user) and its base commit."""

    archive: bytes
    base_commit: str


WorkspaceSource = Callable[[Task], Workspace]  # a task's workspace; a backend that made it can hand it over


def _git(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if result.returncode != 0:
        raise EvalkitError(f"git {' '.join(args[:2])} in {cwd} failed: {result.stderr.strip().splitlines()[-1:]}")
    return result.stdout


def _export_source(source: TaskSource, dest: Path, repo_cache: Path) -> None:
    if source.snapshot is not None:
        shutil.copytree(source.snapshot, dest, ignore=shutil.ignore_patterns(*IGNORED_NAMES), dirs_exist_ok=True)
        return
    repo = local_repository(source.git, repo_cache)
    archive = subprocess.run(["git", "archive", "--format=tar", source.base_commit], cwd=repo, capture_output=True)
    if archive.returncode != 0:
        raise EvalkitError(
            f"{source.git}: commit {source.base_commit} not found "
            "(fetch it, or point `source.git` at a clone that has it)"
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")


def default_repo_cache() -> Path:
    """Where clones of remote repositories are kept (EVALKIT_CACHE, else ~/.cache/evalkit)."""
    return Path(os.environ.get("EVALKIT_CACHE", Path.home() / ".cache" / "evalkit")) / "repos"


def local_repository(
    git: str | None, repo_cache: Path, hint: str = "clone it and set `source.git` to the path"
) -> Path:
    """A repository folder for `source.git`: a folder as it is; a git bundle file (how a shipped
    suite carries its repositories) or a URL cloned once into the cache."""
    if git and Path(git).is_dir():
        return Path(git)
    return cached_clone(git, repo_cache, hint)


def cached_clone(
    url: str | None,
    repo_cache: Path | None = None,
    hint: str = "clone it and set `source.git` to the path",
) -> Path:
    """A clone of `url` in the cache (made once); one clear line, ending with `hint`, when git
    cannot clone it. The clone is made beside the target and renamed into place, so a concurrent
    caller (another task of the repository, another process) never takes a half-made clone."""
    assert url is not None
    repo_cache = repo_cache or default_repo_cache()
    key = url.encode()
    if Path(url).is_file():  # a bundle: a changed bundle is a new clone
        key += hashlib.sha256(Path(url).read_bytes()).digest()
    target = repo_cache / hashlib.sha256(key).hexdigest()[:16]
    if target.exists():
        return target
    repo_cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=repo_cache) as tmp:
        made = Path(tmp) / "clone"
        result = subprocess.run(["git", "clone", "--quiet", url, str(made)], capture_output=True, text=True)
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["no output"])[-1][:160]
            raise EvalkitError(f"{url}: cannot clone ({reason}); {hint}")
        try:
            made.rename(target)
        except OSError:  # another caller's clone got there first: use that one
            if not target.exists():
                raise
    return target


def _commit_base(root: Path) -> str:
    """Make `root` (holding the base tree) a repository with one commit of fixed identity and date."""
    _git(["init", "--quiet", "--initial-branch=main"], root)
    _git(["add", "--all", "--force"], root)
    _git(["-c", "commit.gpgsign=false", "commit", "--quiet", "--allow-empty", "-m", "base"], root, FIXED_GIT_ENV)
    return _git(["rev-parse", "HEAD"], root).strip()


def build_workspace(source: TaskSource, repo_cache: Path | None = None) -> Workspace:
    """Export the base tree into a fresh one-commit repository and pack it for the sandbox."""
    repo_cache = repo_cache or default_repo_cache()
    with tempfile.TemporaryDirectory(prefix="evalkit-ws-") as tmp:
        root = Path(tmp) / "workspace"
        root.mkdir()
        _export_source(source, root, repo_cache)
        base = _commit_base(root)
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text(LOCAL_EXCLUDES)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(root, arcname=".", filter=_owned_by_sandbox_user)
        return Workspace(archive=buf.getvalue(), base_commit=base)


class Workspaces:
    """A run's workspaces by task id, each built once and kept for the run (scoring reads the base
    files from them), or adopted as built elsewhere (by the driver of a cluster run)."""

    def __init__(self) -> None:
        self._kept: dict[str, Workspace] = {}
        self._lock = threading.Lock()

    def of(self, task: Task) -> Workspace:
        """`task`'s workspace; built outside the lock, so tasks of other repositories go on (two
        threads building one task's at once make the same archive)."""
        with self._lock:
            kept = self._kept.get(task.id)
        if kept is None:
            kept = build_workspace(task.source)
            with self._lock:
                self._kept[task.id] = kept
        return kept

    def adopt(self, task: Task, workspace: Workspace) -> None:
        with self._lock:
            self._kept[task.id] = workspace


def write_base_repository(source: TaskSource, dest: Path) -> str:
    """The base tree as a git repository at `dest`, committed as a workspace is (same tree, fixed
    identity and date, so the same commit id), and that commit. Where `dest` is already a
    repository, the commit is added as branch `base-<commit>` unless it has it; other content at
    `dest` is an EvalkitError. What `tasks export --repo-dir` writes, for SWE-bench rows."""
    if not dest.exists():
        dest.mkdir(parents=True)
        _export_source(source, dest, default_repo_cache())
        return _commit_base(dest)
    if not (dest / ".git").exists():
        raise EvalkitError(f"{dest}: exists and is not a git repository; give an empty --repo-dir")
    with tempfile.TemporaryDirectory(prefix="evalkit-base-") as tmp:
        root = Path(tmp) / "base"
        root.mkdir()
        _export_source(source, root, default_repo_cache())
        commit = _commit_base(root)
        known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=dest, capture_output=True)
        if known.returncode != 0:
            _git(["fetch", "--quiet", str(root), f"main:refs/heads/base-{commit[:12]}"], dest)
    return commit


def _owned_by_sandbox_user(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = WORKSPACE_UID
    info.uname = info.gname = "agent"
    return info


def tar_files(files: dict[str, bytes], folders: tuple[str, ...] = (), mode: int = 0o644) -> bytes:
    """A tar archive of `folders` (made in order) and `files` (by path relative to where it is
    copied), owned by the sandbox user: several files written by one copy into the sandbox, not a
    command and a copy each."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(_owned_by_sandbox_user(info))
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), mode
            tar.addfile(_owned_by_sandbox_user(info), io.BytesIO(content))
    return buf.getvalue()


def tar_single_file(name: str, content: bytes, mode: int = 0o644) -> bytes:
    """A tar archive holding one file, owned by the sandbox user."""
    return tar_files({name: content}, mode=mode)
