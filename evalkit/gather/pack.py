"""Packing a gathered suite to travel inside evalkit: no clone, no network, a few megabytes.

A gathered task starts from a commit of a local repository, and a repository's whole history
is large (click's is 32 MB) though a task needs one tree of it. Each repository becomes one git
bundle in the suite (`repos/<name>.bundle`) holding, per task, a parentless commit of the task's
base tree (fixed author and date, so packing again gives the same ids), tagged with the task id;
trees of one repository share their objects in the bundle's pack. The upstream commit ids stay
in the task's metadata (`commit`, `upstream_base_commit`), with the upstream address and license,
and the repository's license file travels beside its bundle. Recipe folders are copied without
the host's files (CA bundle, pip wheel): the image build supplies those (images.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from evalkit.errors import EvalkitError
from evalkit.files import file_component
from evalkit.sandbox.workspace import FIXED_GIT_ENV, default_repo_cache, local_repository
from evalkit.tasks.load import load_suite
from evalkit.tasks.model import Task, TaskSource
from evalkit.tasks.write import write_suite

REPOS = "repos"
RECIPES = "_env"
HOST_FILES = ("ca-bundle.crt", "pip-*.whl")  # supplied at build time, never shipped
_LICENSE = re.compile(r"^(LICEN[CS]E|COPYING)(\.(txt|rst|md))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Upstream:
    """Where a repository comes from, as its tasks name it."""

    url: str
    license: str


@dataclass(frozen=True)
class PackedRepository:
    name: str
    tasks: int
    bundle_bytes: int


def _git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    command = ["git", "-C", str(repo), *args]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if done.returncode != 0:
        raise EvalkitError(f"git {args[0]} in {repo}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    return done.stdout.strip()


def repository_name(git: str) -> str:
    """The bundle's name: the repository folder's or URL's last part, without `.git`."""
    return file_component(Path(git.rstrip("/")).name.removesuffix(".bundle").removesuffix(".git"))


def _license_file(repo: Path, commit: str) -> tuple[str, bytes] | None:
    for name in _git(repo, "ls-tree", "--name-only", commit).splitlines():
        if _LICENSE.match(name):
            shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{name}"], capture_output=True)
            return name, shown.stdout
    return None


def _pack_repository(repo: Path, tasks: list[Task], bundle: Path) -> dict[str, str]:
    """Write `bundle` with one parentless commit per task's base tree; task id -> its commit."""
    made: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-pack-") as tmp:
        scratch = Path(tmp) / "scratch.git"
        _git(Path(tmp), "init", "--quiet", "--bare", str(scratch))
        objects = Path(_git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")) / "objects"
        (scratch / "objects" / "info" / "alternates").write_text(f"{objects}\n")  # read, never copied
        for task in tasks:
            base = task.source.base_commit or ""
            tree = _git(scratch, "rev-parse", f"{base}^{{tree}}")
            message = f"{task.id}: the tree of {base}\n"
            commit = subprocess.run(
                ["git", "-C", str(scratch), "commit-tree", tree],
                input=message, capture_output=True, text=True, env={**os.environ, **FIXED_GIT_ENV},
            )  # fmt: skip
            if commit.returncode != 0:
                raise EvalkitError(f"git commit-tree in {repo}: {commit.stderr.strip()}")
            made[task.id] = commit.stdout.strip()
            _git(scratch, "tag", "--no-sign", file_component(task.id), made[task.id])
        bundle.parent.mkdir(parents=True, exist_ok=True)
        _git(scratch, "bundle", "create", "--quiet", str(bundle), "--tags")
    return made


def _copy_recipe(image: str, out: Path) -> str:
    """Copy a recipe folder into `out/_env` without the host's files; the task's new `image`."""
    recipe = Path(image)
    if not (recipe.is_absolute() and (recipe / "Dockerfile").is_file()):
        return image  # a recipe name of evalkit's own or an image reference
    target = out / RECIPES / recipe.name
    if not target.exists():
        shutil.copytree(recipe, target, ignore=shutil.ignore_patterns(*HOST_FILES))
    return f"../{RECIPES}/{recipe.name}"


def pack_suite(
    source: Path, out: Path, name: str, description: str, upstreams: Mapping[str, Upstream]
) -> list[PackedRepository]:
    """Write the suite at `source` (tasks on local git repositories) as a self-contained suite at
    `out`; every repository needs its upstream address and license in `upstreams`."""
    out = out.resolve()  # git writes the bundle from another folder
    tasks = load_suite(source).tasks
    by_repo: dict[str, list[Task]] = {}
    for task in tasks:
        if task.source.git is None:
            raise EvalkitError(f"{task.id}: starts from a snapshot folder; pack takes tasks on git repositories")
        by_repo.setdefault(task.source.git, []).append(task)
    missing = sorted({repository_name(git) for git in by_repo} - set(upstreams))
    if missing:
        raise EvalkitError(f"no --upstream for {', '.join(missing)}: give NAME=URL=LICENSE for each repository")
    packed_tasks: list[Task] = []
    report = []
    for git, repo_tasks in by_repo.items():
        repo_name = repository_name(git)
        repo = local_repository(git, default_repo_cache())
        bundle = out / REPOS / f"{repo_name}.bundle"
        commits = _pack_repository(repo, repo_tasks, bundle)
        newest = max(repo_tasks, key=lambda t: str(t.metadata.get("commit_date", "")))
        found = _license_file(repo, newest.source.base_commit or "HEAD")
        if found is None:
            raise EvalkitError(f"{repo_name}: no LICENSE file at {newest.source.base_commit}; it must travel along")
        (out / REPOS / f"{repo_name}.{found[0]}").write_bytes(found[1])
        upstream = upstreams[repo_name]
        for task in repo_tasks:
            metadata = {
                **task.metadata,
                "upstream": upstream.url,
                "upstream_base_commit": task.source.base_commit or "",
                "license": upstream.license,
                "license_file": f"../{REPOS}/{repo_name}.{found[0]}",
            }
            packed_tasks.append(
                task.model_copy(
                    update={
                        "source": TaskSource(git=f"../{REPOS}/{repo_name}.bundle", base_commit=commits[task.id]),
                        "image": _copy_recipe(task.image, out),
                        "metadata": metadata,
                    }
                )
            )
        report.append(PackedRepository(repo_name, len(repo_tasks), bundle.stat().st_size))
    write_suite(out, name, description, sorted(packed_tasks, key=lambda t: t.id), replace=True)
    return report


def write_upstreams(out: Path, upstreams: Mapping[str, Upstream]) -> None:
    """`repos/SOURCES.toml`: each bundled repository's upstream and license, for people reading the suite."""
    data = {name: {"upstream": u.url, "license": u.license} for name, u in sorted(upstreams.items())}
    (out / REPOS / "SOURCES.toml").write_text(tomli_w.dumps(data))
