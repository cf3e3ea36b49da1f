"""The image recipe of one SWE-bench environment (repository, version): a Dockerfile and its context
files, rendered from the vendored spec and a chosen Python base. Pure: no Docker, no network, no
file reads; `write_recipe` writes the folder that `images.resolve_image` builds.

The output is byte-identical for the same inputs, so the image is tagged by content hash and shared
by every instance of that (repository, version). It holds what does not depend on the instance:
the spec's Debian packages, a venv at `ENV_PATH` (first on PATH) with a pinned pip, the spec's
`pip_packages`, and the requirements file when the spec's `packages` is "requirements.txt" (its
text given by the caller, read from the local repository at `environment_setup_commit`, never
fetched). Builds reach PyPI (and the Debian mirror, if https) through the host's CA bundle, copied
into the context: a mount is not part of the content hash.

The repository itself: given `source` (a tar of the tree at `environment_setup_commit`), the
image runs the spec's `pre_install` edits (sed pins in `setup.py`) and `install` (`pip install -e
.[test]`) on that tree at the workspace path, then empties the folder: what the install pulled in
stays, and the editable install points at the path where every sandbox later gets its own base
tree, so no sandbox needs a network or a build to import the code it tests. SWE-bench installs at
each instance's base commit instead; within a version the two share their install metadata, which
is what `environment_setup_commit` is for. pip 26 installs editable only the PEP 660 way, which
keeps the metadata beside the packages, so nothing in the emptied tree is needed.
The eval commands' exports become the image's ENV, their other commands (Django's locale-gen) run
at build. Conda-only specs (`environment.yml`, or `packages` listing conda packages) are refused.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.envs import EnvSpec, provenance
from evalkit.envs.swebench_specs import ENVIRONMENT_YML, REQUIREMENTS_FILE
from evalkit.errors import EvalkitError
from evalkit.sandbox.python_bases import BaseChoice

ENV_PATH = "/opt/env"
CA_FILE = "ca-bundle.crt"  # in a build context
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")  # copied there at build time
REQUIREMENTS_NAME = "requirements.txt"
CA_IN_IMAGE = "/etc/evalkit/ca-bundle.crt"
SOURCE_NAME = "source.tar"
INSTALL_NAME = "install.sh"
WORKSPACE = "/workspace"
# bullseye's venv pip (20.3) cannot install a pyproject-only project editable (PEP 660, pip 21.3),
# as sphinx 7.x is, nor hold PyPI to a date (--uploaded-prior-to, pip 26.0, the last for Python 3.9);
# one fixed pip for every base keeps the recipe, hence the image, deterministic.
PIP_VERSION = "26.0"
# PyPI as it was when SWE-bench Verified was published (2024-08-13), for every pip call of a build,
# build isolation included: SWE-bench's specs pin only what broke then, so a newer release breaks
# what they leave open (docutils 0.22 dropped `docutils.utils.roman`, which sphinx 3.x imports).
PYPI_AS_OF = "2024-08-13T00:00:00Z"
SYSTEM_PTH_NAME = "evalkit-env.pth"


def _system_pth(base: BaseChoice) -> str:
    """A .pth for the base's own Python that puts the environment's packages first on its path.
    tox-current-env runs `python` through a symlink to the venv's interpreter from a fake env of
    its own (`.tox/py39/bin`), where Python finds no pyvenv.cfg and starts as the system Python;
    SWE-bench's conda environment has no such gap. In the venv's interpreter this file is never read."""
    site = f"{ENV_PATH}/lib/python{base.base.python_version}/site-packages"
    first = "sys.path[:] = sys.path[k:] + sys.path[:k]"
    return f"import sys, site; k = len(sys.path); site.addsitedir({site!r}); {first}\n"



_APT_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
# Lines SWE-bench's harness drops from a requirements file: the repository itself and comments.
_NOT_A_REQUIREMENT = ("-e .", "#", ".[test")


@dataclass(frozen=True)
class EnvRecipe:
    """A recipe folder's content: the Dockerfile and the other context files (name → bytes)."""

    dockerfile: str
    files: dict[str, bytes] = field(default_factory=dict)


def _refuse(spec: EnvSpec, why: str) -> EvalkitError:
    return EvalkitError(f"{spec.repo} {spec.version}: {why}")


def _requirements_text(spec: EnvSpec, requirements: str | None) -> str | None:
    """The requirements to install, as SWE-bench keeps them; None when the spec names none."""
    if spec.packages == ENVIRONMENT_YML:
        raise _refuse(spec, "its environment is a conda environment.yml; evalkit builds pip-only environments")
    if spec.packages not in (None, REQUIREMENTS_FILE):
        raise _refuse(spec, f"its packages ({spec.packages}) are installed with conda; evalkit builds pip-only ones")
    if spec.packages is None:
        if requirements is not None:
            raise ValueError(f"{spec.repo} {spec.version}: the spec names no requirements file, yet one was given")
        return None
    if requirements is None:
        where = " or ".join(spec.requirements_paths) or "a requirements file"
        raise _refuse(spec, f"needs {where} from the repository at its environment_setup_commit; none was found")
    kept = [line.rstrip() for line in requirements.splitlines() if line.strip()]
    kept = [line for line in kept if not line.strip().startswith(_NOT_A_REQUIREMENT)]
    included = [line for line in kept if line.strip().startswith(("-r", "--requirement"))]
    if included:
        raise _refuse(spec, f"its requirements include another file ({included[0].strip()}); inline it first")
    return "".join(f"{line}\n" for line in kept)


def _apt_packages(spec: EnvSpec) -> tuple[str, ...]:
    """The spec's apt-get packages, plus `locales` when its eval commands run locale-gen (Django)."""
    wanted = list(spec.apt_packages)
    if any("locale-gen" in command for command in spec.eval_commands):
        wanted.append("locales")
    for name in wanted:
        if not _APT_NAME.fullmatch(name):
            raise _refuse(spec, f"apt package {name!r} is not a Debian package name")
    return tuple(dict.fromkeys(wanted))


def _install_script(spec: EnvSpec) -> str:
    """Unpack the environment commit's tree at the workspace path, edit and install it as the spec
    says, and leave the folder empty for the sandboxes."""
    return "\n".join(
        [
            "#!/bin/sh",
            f"# {spec.repo} {spec.version}: the spec's pre_install edits and install, on the tree at its",
            "# environment_setup_commit. Written by evalkit.sandbox.env_recipe.",
            "set -eu",
            f"cd {WORKSPACE}",
            f"tar --no-same-owner -xf /etc/evalkit/{SOURCE_NAME}",
            *spec.repo_edits,
            spec.install or "true",
            f"find {WORKSPACE} -mindepth 1 -delete",
            "",
        ]
    )


def _eval_setup(spec: EnvSpec) -> list[str]:
    """Dockerfile lines for the eval commands: exports as ENV, the rest (locale-gen) run once."""
    lines = [f"ENV {name}={shlex.quote(value)}" for name, value in spec.env.items()]
    lines += [f"RUN {command}" for command in spec.eval_commands if not command.startswith("export ")]
    return lines


def _label(key: str, value: str) -> str:
    return f"org.evalkit.env.{key}={json.dumps(value)}"


def render_recipe(
    spec: EnvSpec, base: BaseChoice, requirements: str | None, ca_bundle: bytes, source: bytes | None = None
) -> EnvRecipe:
    """The recipe of `spec`'s environment on `base` (with the repository installed when `source`,
    its tree as a tar, is given); an environment pip cannot build is an EvalkitError naming the
    repository, version and why."""
    reqs = _requirements_text(spec, requirements)
    apt = _apt_packages(spec)
    origin = provenance()
    facts = {
        "repo": spec.repo,
        "version": spec.version,
        "python": spec.python,
        "base": base.base.image,
        "approximate": "true" if base.approximate else "false",
        "swebench": f"{origin.package} {origin.version}",
        "pypi_as_of": PYPI_AS_OF,
    }
    lines = [
        f"# Environment {spec.repo} {spec.version}, from {origin.package} {origin.version}'s install specs",
        f"# ({origin.module}). Python {spec.python} wanted; base {base.base.image} has Python "
        f"{base.base.python_version}{' (approximate)' if base.approximate else ''}.",
        "# Written by evalkit.sandbox.env_recipe.",
        f"ARG BASE_IMAGE={base.base.image}",
        "FROM ${BASE_IMAGE}",
        "USER root",
        "LABEL " + " \\\n      ".join(_label(key, value) for key, value in facts.items()),
        f"COPY {CA_FILE} {CA_IN_IMAGE}",
        f"ENV PIP_CERT={CA_IN_IMAGE} PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1",
    ]
    if apt:
        apt_cert = f"-o Acquire::https::CAInfo={CA_IN_IMAGE}"
        lines.append(
            f"RUN apt-get {apt_cert} update \\\n"
            f" && DEBIAN_FRONTEND=noninteractive apt-get {apt_cert} install -y --no-install-recommends "
            f"{' '.join(apt)} \\\n"
            " && apt-get clean && rm -rf /var/lib/apt/lists/*"
        )
    files = {CA_FILE: ca_bundle, SYSTEM_PTH_NAME: _system_pth(base).encode()}
    lines.append(f"COPY {SYSTEM_PTH_NAME} /etc/evalkit/{SYSTEM_PTH_NAME}")
    lines.append(
        f"RUN python3 -m venv {ENV_PATH} \\\n && {ENV_PATH}/bin/python -m pip install pip=={PIP_VERSION} \\\n"
        " && system_site=$(python3 -c 'import site; print(site.getsitepackages()[0])') \\\n"
        f' && mkdir -p "$system_site" && cp /etc/evalkit/{SYSTEM_PTH_NAME} "$system_site/000-{SYSTEM_PTH_NAME}"'
    )
    lines.append(f"ENV PATH={ENV_PATH}/bin:$PATH VIRTUAL_ENV={ENV_PATH} PIP_UPLOADED_PRIOR_TO={PYPI_AS_OF}")
    if spec.pip_packages:
        lines.append("RUN python -m pip install " + " ".join(shlex.quote(p) for p in spec.pip_packages))
    if reqs is not None:
        files[REQUIREMENTS_NAME] = reqs.encode()
        lines.append(f"COPY {REQUIREMENTS_NAME} /etc/evalkit/{REQUIREMENTS_NAME}")
        lines.append(f"RUN python -m pip install -r /etc/evalkit/{REQUIREMENTS_NAME}")
    lines += _eval_setup(spec)
    if source is not None and spec.install:
        files[SOURCE_NAME] = source
        files[INSTALL_NAME] = _install_script(spec).encode()
        lines.append(f"COPY {SOURCE_NAME} {INSTALL_NAME} /etc/evalkit/")
        lines.append(f"RUN sh /etc/evalkit/{INSTALL_NAME} && rm /etc/evalkit/{SOURCE_NAME}")
    lines += [f"RUN chown -R 1000:1000 {ENV_PATH}", f"WORKDIR {WORKSPACE}"]
    return EnvRecipe("\n".join(lines) + "\n", dict(sorted(files.items())))


def write_recipe(recipe: EnvRecipe, folder: Path) -> Path:
    """Write the recipe into `folder` (created; files not in the recipe removed, so the content
    hash is the recipe's alone) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {"Dockerfile": recipe.dockerfile.encode(), **recipe.files}
    for stale in folder.iterdir():
        if stale.is_file() and stale.name not in wanted:
            stale.unlink()
    for name, content in wanted.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
    return folder
