"""Sandbox images: the offline base image, and suite images built from recipes cached by content hash.

`sandboxes/<name>/Dockerfile` is a recipe; it is built `FROM` the base image (build arg
`BASE_IMAGE`) and tagged `evalkit/<name>:<hash>`, the hash covering the recipe's files and the
base image id, so an edit to either rebuilds and nothing else does.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors

from evalkit.errors import SandboxError
from evalkit.sandbox.env_recipe import CA_FILE, HOST_CA_BUNDLE, PIP_VERSION
from evalkit.sandbox.python_bases import DEFAULT_BASE_IMAGE, PYTHON_BASES, PythonBase
from evalkit.sandbox.recipes import recipes_dir
from evalkit.wording import without_colour

BASE_IMAGE = DEFAULT_BASE_IMAGE
REGISTRY_BASE = "python:3.12-slim"
BUILD_LOCK = threading.Lock()  # one image build at a time, whatever builds it (recipes, agents)
_PIP_WHEEL = re.compile(r"\bpip-(\d[\w.]*)-py3-none-any\.whl\b")


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def _registry_reachable(client: docker.DockerClient, timeout_s: float = 20.0) -> bool:
    """Try to pull the registry base image; give up quietly after `timeout_s`."""
    outcome: list[bool] = []

    def pull() -> None:
        try:
            client.images.pull(REGISTRY_BASE)
            outcome.append(True)
        except docker.errors.APIError:
            outcome.append(False)

    worker = threading.Thread(target=pull, daemon=True)
    worker.start()
    worker.join(timeout_s)
    return bool(outcome and outcome[0])


def _host_mirror() -> str:
    """The Debian mirror the host's apt uses, so debootstrap reaches what apt reaches."""
    for sources in (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")):
        if not sources.exists():
            continue
        for line in sources.read_text().splitlines():
            words = line.split()
            if words[:1] == ["URIs:"] and len(words) > 1 and "security" not in words[1]:
                return words[1]
            if words[:1] == ["deb"] and len(words) > 2 and "security" not in words[-2]:
                return next(w for w in words[1:] if w.startswith("http"))
    return "http://deb.debian.org/debian"


def build_base_image(
    client: docker.DockerClient,
    tag: str = BASE_IMAGE,
    *,
    force: bool = False,
    offline: bool = False,
    mirror: str | None = None,
    python_base: PythonBase | None = None,
    log: Callable[[str], None] = print,
) -> str:
    """Make sure the base image exists: from a registry when one answers, else debootstrap + import.

    A `python_base` is always debootstrapped: its Debian suite is what decides its Python."""
    if image_exists(client, tag) and not force:
        log(f"{tag} is present (use --force to rebuild)")
        return tag
    recipes = recipes_dir() / "base"
    if python_base is None and not offline and _registry_reachable(client):
        log(f"building {tag} from {REGISTRY_BASE}")
        client.images.build(path=str(recipes), dockerfile="Dockerfile.registry", tag=tag, rm=True, forcerm=True)
        return tag
    if os.geteuid() != 0:
        raise SandboxError("no registry answers and debootstrap needs root: run `evalkit sandbox build-base` as root")
    if shutil.which("debootstrap") is None:
        raise SandboxError("no registry answers and debootstrap is missing: apt-get install -y debootstrap")
    mirror = mirror or _host_mirror()
    command = ["bash", str(recipes / "debootstrap.sh"), tag, mirror]
    if python_base is None:
        log(f"no registry: building {tag} with debootstrap from {mirror} (about a minute)")
    else:
        log(f"building {tag} (Debian {python_base.suite}, Python {python_base.python_version}) from {mirror}")
        command += [python_base.suite, ",".join(python_base.extra_packages)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise SandboxError(f"base image build failed: {' | '.join(tail)}")
    return tag


def recipe_hash(recipe: Path, base_id: str) -> str:
    """12 hex digits of sha256 over the recipe's files (names and bytes) and the base image id."""
    digest = hashlib.sha256(base_id.encode())
    for path in sorted(p for p in recipe.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(recipe)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


_BASE_ARG = re.compile(r"^ARG BASE_IMAGE=(\S+)\s*$", re.MULTILINE)


def recipe_python_base(recipe: Path) -> PythonBase | None:
    """The Python base a recipe's Dockerfile names as its `BASE_IMAGE` default (gather writes one
    chosen by `requires-python`), or None for a recipe built on the default base."""
    found = _BASE_ARG.search((recipe / "Dockerfile").read_text())
    return next((b for b in PYTHON_BASES if found and b.image == found[1]), None)


def resolve_image(client: docker.DockerClient, image: str, base: str = BASE_IMAGE) -> str:
    """The Docker image for a task's `image` field: a recipe name is built (once) and tagged by
    content hash; anything else is taken as an image reference. A recipe naming a Python base is
    built on it (the base built first when missing)."""
    recipe = Path(image) if Path(image).is_absolute() else recipes_dir() / image  # absolute: a suite's own recipe
    if not (recipe / "Dockerfile").is_file():
        if not image_exists(client, image):
            raise SandboxError(f"image {image} is neither a recipe in {recipes_dir()} nor a local image")
        return image
    python_base = recipe_python_base(recipe) if base == BASE_IMAGE else None
    if python_base is not None:
        base = build_base_image(client, python_base.image, python_base=python_base, log=lambda _: None)
    tag = recipe_tag(client, recipe, base, recipe.name)
    with BUILD_LOCK:
        if not image_exists(client, tag):
            with tempfile.TemporaryDirectory(prefix="evalkit-recipe-") as tmp:
                context = with_host_files(recipe, Path(tmp) / recipe.name)
                build_image(client, context, tag, {"BASE_IMAGE": base}, f"recipe {recipe}")
    return tag


def wheel_cache() -> Path:
    """Where downloaded wheels are kept between runs (EVALKIT_CACHE, else ~/.cache/evalkit)."""
    return Path(os.environ.get("EVALKIT_CACHE", Path.home() / ".cache" / "evalkit")) / "wheels"


def pip_wheel(cache: Path, version: str = PIP_VERSION) -> Path:
    """A pip wheel for a build context (Debian's python has no pip), downloaded once by the host's pip."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"pip-{version}-*.whl"))
    if not found:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "-d", str(cache), f"pip=={version}"]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        found = sorted(cache.glob(f"pip-{version}-*.whl"))
        if result.returncode != 0 or not found:
            raise SandboxError(f"cannot download a pip wheel for an image build ({result.stderr.strip()[-160:]})")
    return found[-1]


def with_host_files(recipe: Path, context: Path) -> Path:
    """The recipe, or a copy at `context` completed with the host's files its Dockerfile names and
    a shipped recipe leaves out (the CA bundle, a pip wheel): they belong to the machine, not the
    suite, and the image's tag hashes the recipe as shipped, so a second run builds nothing."""
    dockerfile = (recipe / "Dockerfile").read_text()
    wanted: dict[str, Path] = {}
    if CA_FILE in dockerfile and not (recipe / CA_FILE).exists():
        if not HOST_CA_BUNDLE.is_file():
            raise SandboxError(f"recipe {recipe} needs the host's CA bundle, and {HOST_CA_BUNDLE} is missing")
        wanted[CA_FILE] = HOST_CA_BUNDLE
    for match in _PIP_WHEEL.finditer(dockerfile):
        if not (recipe / match[0]).exists():
            wanted[match[0]] = pip_wheel(wheel_cache(), match[1])
    if not wanted:
        return recipe
    shutil.copytree(recipe, context)
    for name, path in wanted.items():
        shutil.copyfile(path, context / name)
    return context


def recipe_tag(client: docker.DockerClient, recipe: Path, base: str, name: str) -> str:
    """`evalkit/<name>:<hash of the recipe's files and the base image id>`; one line when the base is missing."""
    try:
        base_id = client.images.get(base).id
    except docker.errors.ImageNotFound:
        raise SandboxError(f"base image {base} is missing: run `evalkit sandbox build-base`") from None
    return f"evalkit/{name}:{recipe_hash(recipe, base_id)}"


def build_image(
    client: docker.DockerClient, context: Path, tag: str, buildargs: dict[str, str], what: str, nocache: bool = False
) -> None:
    """Build the Dockerfile of `context` as `tag` (the caller holds BUILD_LOCK); a failure is one
    SandboxError naming `what` and the last line the failing step printed. `nocache`: every step
    run again (a first build's cost, measured where the engine already holds the layers)."""
    try:
        # forcerm: a failing step's container goes too (rm alone keeps it, unlabelled, unfindable)
        client.images.build(path=str(context), tag=tag, buildargs=buildargs, rm=True, forcerm=True, nocache=nocache)
    except docker.errors.BuildError as exc:
        said = _last_output(exc.build_log)
        msg = re.sub(r"The command '(.{50}).*?' returned", r"The command '\1...' returned", str(exc.msg), flags=re.S)
        raise SandboxError(f"building {what}: {msg}" + (f" (last output: {said})" if said else "")) from None
    except docker.errors.APIError as exc:
        raise SandboxError(f"building {what}: {exc.explanation or exc}") from None


def _last_output(build_log) -> str:
    """The last line the failing step printed, from the engine's build log (colour codes, which the
    engine puts around a step's stderr, taken out)."""
    streams = (str(entry.get("stream", "")) for entry in build_log or [] if isinstance(entry, dict))
    lines = [
        line.strip()
        for text in streams
        for line in without_colour(text).splitlines()
        if line.strip() and not line.strip().startswith(("Step ", "---> ", "Removing intermediate"))
    ]
    if not lines:
        return ""
    # pip's and the compiler's own words say why better than what a script echoes after them
    telling = [line for line in lines if _TELLING.search(line)]
    said = telling[-1] if telling else lines[-1]
    return said[:300] if said == lines[-1] else f"{said[:300]} | {lines[-1][:200]}"


_TELLING = re.compile(
    r"^ERROR: (?!Failed building wheel)|No matching distribution|fatal error:|error: command '|"
    r"requires a different Python|No module named|not found$"
)
