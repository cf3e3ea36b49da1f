"""How to install and test a gathered repository, and the image recipe that does it.

Dependencies are read, never executed: `[project]` dependencies and test/dev extras and
dependency groups of pyproject.toml, `install_requires` / test extras of setup.cfg, and the usual
requirements files. No dependency beyond pytest means the stock `python` recipe. Otherwise a
recipe folder is written beside the suite: the base image plus a venv (with the system site
packages, so Debian's pytest stays) into which pip installs the requirements at build time.
Builds reach PyPI only through the CA bundle copied into the recipe (`--ca-bundle`, default the
host's); the agent phase still runs without network.
"""

from __future__ import annotations

import configparser
import hashlib
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import EvalkitError

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements_dev.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
)
TEST_EXTRAS = ("test", "tests", "testing", "dev")
ALREADY_THERE = {"pytest"}  # in the base image
INSTALL_PROJECT = "python -m pip install --quiet --no-deps --no-build-isolation --no-index -e ."
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")

DOCKERFILE = """\
# Written by `evalkit gather`: {repo}'s test dependencies over evalkit's base image.
ARG BASE_IMAGE=evalkit/base:latest
FROM ${{BASE_IMAGE}}
USER root
COPY . /opt/evalkit-env/
RUN python3 -m venv --system-site-packages --without-pip /opt/venv \\
 && /opt/venv/bin/python /opt/evalkit-env/{pip_wheel}/pip install --no-cache-dir --disable-pip-version-check \\
      --cert /opt/evalkit-env/ca-bundle.crt /opt/evalkit-env/{pip_wheel} -r /opt/evalkit-env/requirements.txt \\
 && rm -rf /opt/evalkit-env && chown -R 1000:1000 /opt/venv
# The test command installs the project itself (editable, offline, as the sandbox user): metadata
# only, the code stays in /workspace. setuptools-scm has no git history there, hence a version.
ENV PATH=/opt/venv/bin:$PATH PYTHONPATH={pythonpath} PYTHONDONTWRITEBYTECODE=1 \\
    SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /workspace
"""


@dataclass(frozen=True)
class Environment:
    requirements: list[str] = field(default_factory=list)  # pip requirement lines
    sources: list[str] = field(default_factory=list)  # files they came from
    src_layout: bool = False
    notes: list[str] = field(default_factory=list)
    installable: bool = False  # a pyproject with a build system, or setup.py / setup.cfg
    build_requires: list[str] = field(default_factory=list)

    @property
    def pythonpath(self) -> str:
        return "/workspace/src:/workspace" if self.src_layout else "/workspace"

    @property
    def test_command(self) -> str:
        """pytest, after an offline editable install of the project when it is installable: its
        metadata (importlib.metadata.version, entry points) then exists, and the code is still
        imported from /workspace."""
        if not self.installable:
            return "python -m pytest"
        return f"{INSTALL_PROJECT} >/dev/null 2>&1; python -m pytest"


def _requirement_lines(text: str) -> list[str]:
    lines = []
    for raw in text.splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith(("#", "-e", "--", ".")) or line.startswith("-r"):
            continue
        lines.append(line)
    return lines


def _from_pyproject(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {})
    found = list(project.get("dependencies", []))
    for extra in TEST_EXTRAS:
        found += project.get("optional-dependencies", {}).get(extra, [])
        found += [g for g in data.get("dependency-groups", {}).get(extra, []) if isinstance(g, str)]
    return found


def _from_setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found = _requirement_lines(parser.get("options", "install_requires", fallback=""))
    for extra in TEST_EXTRAS:
        found += _requirement_lines(parser.get("options.extras_require", extra, fallback=""))
    return found


def detect_environment(read: Callable[[str], str | None], has_folder: Callable[[str], bool]) -> Environment:
    """What the repository at its base commit needs to run its tests (pure given `read`)."""
    requirements: list[str] = []
    sources: list[str] = []
    for name, parse in (("pyproject.toml", _from_pyproject), ("setup.cfg", _from_setup_cfg)):
        text = read(name)
        if text:
            found = parse(text)
            if found:
                requirements += found
                sources.append(name)
    for name in REQUIREMENT_FILES:
        text = read(name)
        if text:
            requirements += _requirement_lines(text)
            sources.append(name)
    notes = []
    if read("setup.py") and not sources:
        notes.append("setup.py is not executed: its install_requires are not read")
    pyproject = read("pyproject.toml")
    build: list[str] = []
    if pyproject:
        try:
            build = list(tomllib.loads(pyproject).get("build-system", {}).get("requires", []))
        except tomllib.TOMLDecodeError:
            build = []
    installable = bool(build) or bool(read("setup.py")) or bool(read("setup.cfg"))
    if installable and not build:
        build = ["setuptools>=61", "wheel"]
    requirements += build
    unique: dict[str, str] = {}
    for requirement in requirements:
        match = _NAME.match(requirement)
        if match and match.group(1).lower().replace("_", "-") not in ALREADY_THERE:
            unique.setdefault(match.group(1).lower().replace("_", "-"), requirement)
    return Environment(sorted(unique.values()), sources, has_folder("src"), notes, installable, build)


def _pip_wheel(dest: Path) -> str:
    """A pip wheel for the image (Debian's python has no pip), downloaded by the host's pip."""
    found = sorted(dest.glob("pip-*.whl"))
    if not found:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(dest),
                "pip",
            ],
            capture_output=True,
            text=True,
        )
        found = sorted(dest.glob("pip-*.whl"))
        if result.returncode != 0 or not found:
            raise EvalkitError(f"cannot download a pip wheel for the image ({result.stderr.strip()[-160:]})")
    return found[-1].name


def write_recipe(env: Environment, repo_name: str, suite_dir: Path, ca_bundle: Path = HOST_CA_BUNDLE) -> str:
    """Write the recipe folder and return the task `image` value (relative to a task folder);
    'python' when the stock recipe is enough."""
    if not env.requirements and not env.src_layout and not env.installable:
        return "python"
    if not ca_bundle.is_file():
        raise EvalkitError(f"--ca-bundle {ca_bundle}: no such file; image builds need it to reach PyPI")
    slug = re.sub(r"[^a-z0-9]+", "-", repo_name.lower()).strip("-") or "repo"
    digest = hashlib.sha256("\n".join(env.requirements).encode()).hexdigest()[:8]
    recipe = suite_dir / "_env" / f"{slug}-{digest}"
    recipe.mkdir(parents=True, exist_ok=True)
    (recipe / "requirements.txt").write_text("".join(f"{r}\n" for r in env.requirements))
    shutil.copyfile(ca_bundle, recipe / "ca-bundle.crt")
    wheel = _pip_wheel(recipe)
    (recipe / "Dockerfile").write_text(DOCKERFILE.format(repo=repo_name, pip_wheel=wheel, pythonpath=env.pythonpath))
    return f"../_env/{recipe.name}"
