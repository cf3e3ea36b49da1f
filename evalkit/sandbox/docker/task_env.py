"""The environment image of an imported SWE-bench task: one per (repository, version, environment
commit), built on the Debian base whose Python the spec wants, tagged by content hash, shared by
every instance of that version.

Everything comes from the machine: the spec from the vendored tables, the requirement files and the
tree to install from the task's local repository at `environment_setup_commit` (never fetched; a
remote-only repository is cloned through the cache like any task source), the packages from PyPI
and the Debian mirror through the host's CA bundle. A task evalkit has no spec for keeps its own
`image`.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import docker

from evalkit.errors import EvalkitError, SandboxError
from evalkit.sandbox.docker.images import build_base_image, image_exists, resolve_image
from evalkit.sandbox.env_choice import TaskEnvironment, task_environment
from evalkit.sandbox.env_recipe import HOST_CA_BUNDLE, render_recipe, write_recipe
from evalkit.sandbox.workspace import default_repo_cache, local_repository
from evalkit.tasks.model import Task

_INCLUDE = re.compile(r"^\s*(?:-r|--requirement)[\s=]+(\S+)\s*$")


def _repository(task: Task) -> Path:
    git = task.source.git
    if git is None:
        raise SandboxError(f"{task.id}: a SWE-bench environment needs the task's git repository")
    return local_repository(git, default_repo_cache(), "import with --repo-dir")


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True)


def _file_at(repo: Path, commit: str, path: str) -> str | None:
    shown = _git(repo, "show", f"{commit}:{path}")
    return shown.stdout.decode(errors="replace") if shown.returncode == 0 else None


def read_requirements(repo: Path, commit: str, paths: tuple[str, ...], depth: int = 0) -> str | None:
    """The first of `paths` found in `repo` at `commit`, with `-r other.txt` includes inlined (read
    at the same commit, relative to the including file), as SWE-bench's harness does; None if none."""
    for path in paths:
        text = _file_at(repo, commit, path)
        if text is None:
            continue
        lines = []
        for line in text.splitlines():
            included = _INCLUDE.match(line)
            if included and depth < 5:
                target = posixpath.normpath(posixpath.join(posixpath.dirname(path), included[1]))
                lines.append(read_requirements(repo, commit, (target,), depth + 1) or "")
            else:
                lines.append(line)
        return "\n".join(lines) + "\n"
    return None


def _source_tar(repo: Path, commit: str, task: Task) -> bytes:
    archive = _git(repo, "archive", "--format=tar", commit)
    if archive.returncode != 0:
        raise SandboxError(
            f"{task.id}: environment_setup_commit {commit[:12]} is not in {repo} (fetch it into that repository)"
        )
    return archive.stdout


def _recipe_folder(env: TaskEnvironment, cache: Path) -> Path:
    name = f"env-{env.spec.repo.replace('/', '__')}-{env.spec.version}-{env.setup_commit[:12]}".lower()
    return cache / "envs" / re.sub(r"[^a-z0-9_.-]", "-", name)


def environment_image(
    client: docker.DockerClient,
    task: Task,
    cache: Path,
    log: Callable[[str], None] = print,
) -> str | None:
    """The tag of `task`'s environment image, built (with its Python base) when missing; None for
    a task without a SWE-bench environment. Anything that stops the build is a one-line
    SandboxError naming the task: the run records it as an environment error."""
    env = task_environment(task)
    if env is None:
        return None
    base = env.choice.base
    if not image_exists(client, base.image):
        log(f"building {base.image} for {env.spec.repo} {env.spec.version} (once, a few minutes)")
        build_base_image(client, base.image, python_base=base, log=log)
    repo = _repository(task)
    requirements = None
    if env.spec.packages is not None:
        requirements = read_requirements(repo, env.setup_commit, env.spec.requirements_paths)
    try:
        ca_bundle = HOST_CA_BUNDLE.read_bytes()
    except OSError:
        raise SandboxError(f"{HOST_CA_BUNDLE} is unreadable: image builds reach PyPI through it") from None
    source = _source_tar(repo, env.setup_commit, task)
    try:
        recipe = render_recipe(env.spec, env.choice, requirements, ca_bundle, source)
    except EvalkitError as exc:  # conda specs, a requirements file not found
        raise SandboxError(f"{task.id}: {exc}") from None
    return resolve_image(client, str(write_recipe(recipe, _recipe_folder(env, cache))), base=base.image)
