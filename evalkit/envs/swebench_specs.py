"""SWE-bench's per-(repository, version) install specs, read from the tables vendored beside this file.

`swebench_specs.json` is written by `scripts/vendor_swebench_specs.py` from swebench 4.1.0's
`harness/constants/python.py` (the 5.x wheel dropped these tables), provenance included. Lookups are
exact: an unknown repository or version gives None, and the caller decides whether to approximate
an environment or refuse the task.
"""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SPECS_FILE = Path(__file__).with_name("swebench_specs.json")
REQUIREMENTS_FILE = "requirements.txt"  # `packages` values naming a file rather than listing packages
ENVIRONMENT_YML = "environment.yml"


class Provenance(BaseModel):
    """Where the vendored tables came from, so a reader can fetch the same wheel and compare."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str
    version: str
    wheel: str
    wheel_sha256: str
    module: str = Field(description="Path of the module inside the wheel.")
    module_sha256: str
    tables: dict[str, str] = Field(description="JSON key → the module's name for that table.")
    vendored_on: str
    generator: str


class SpecsFile(BaseModel):
    """The vendored document as written by the generator script."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provenance: Provenance
    specs: dict[str, dict[str, dict[str, Any]]]
    requirements_paths: dict[str, list[str]]
    environment_yml_paths: dict[str, list[str]]


class EnvSpec(BaseModel):
    """One (repository, version) environment as SWE-bench specifies it; `raw` keeps its original keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str
    version: str
    python: str = Field(description='Python version, "3.9".')
    packages: str | None = Field(
        None, description='"requirements.txt", "environment.yml", or conda-style packages separated by spaces.'
    )
    pip_packages: tuple[str, ...] = Field((), description="Installed with pip before the repository.")
    pre_install: tuple[str, ...] = Field((), description="Shell commands run in the repository before install.")
    install: str | None = Field(None, description="Installs the repository itself.")
    test_cmd: str | None = Field(None, description="The test command; test files are appended to it.")
    eval_commands: tuple[str, ...] = Field((), description="Shell commands run before the tests.")
    execute_test_as_nonroot: bool = False
    no_use_env: bool = False
    nano_cpus: int | None = None
    requirements_paths: tuple[str, ...] = Field(
        (), description="Candidate requirement files in the repository, first found wins (packages=requirements.txt)."
    )
    environment_yml_paths: tuple[str, ...] = Field((), description="Candidate environment.yml files, likewise.")
    raw: dict[str, Any] = Field(description="The table entry exactly as vendored.")

    @property
    def apt_packages(self) -> tuple[str, ...]:
        """Debian packages the pre-install commands install with apt-get, in order."""
        found: list[str] = []
        for command in self.pre_install:
            for step in command.split("&&"):
                words = shlex.split(step)
                while words and "=" in words[0]:  # a leading VAR=value, as DEBIAN_FRONTEND=noninteractive
                    words.pop(0)
                if words[:1] == ["apt-get"] and "install" in words:
                    found += [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
        return tuple(dict.fromkeys(found))

    @property
    def repo_edits(self) -> tuple[str, ...]:
        """The pre-install commands without apt-get: mostly `sed` pins in the repository's files
        (sphinx, django); matplotlib's also fetch qhull with wget, which an offline build cannot do."""
        return tuple(c for c in self.pre_install if "apt-get" not in c)

    @property
    def env(self) -> dict[str, str]:
        """Variables the eval commands export (`export NAME=value`)."""
        found: dict[str, str] = {}
        for command in self.eval_commands:
            words = shlex.split(command)
            if words[:1] == ["export"]:
                for assignment in words[1:]:
                    name, _, value = assignment.partition("=")
                    found[name] = value
        return found


@cache
def vendored() -> SpecsFile:
    """The vendored tables, read and checked once."""
    return SpecsFile.model_validate_json(SPECS_FILE.read_text())


def provenance() -> Provenance:
    """Package, version, wheel hash, module path and date of the vendored tables."""
    return vendored().provenance


def spec_for(repo: str, version: str) -> EnvSpec | None:
    """The environment SWE-bench specifies for `repo` ("owner/name") at `version` ("3.2"), or None."""
    tables = vendored()
    entry = tables.specs.get(repo, {}).get(str(version))
    if entry is None:
        return None
    return EnvSpec(
        repo=repo,
        version=str(version),
        requirements_paths=tuple(tables.requirements_paths.get(repo, ())),
        environment_yml_paths=tuple(tables.environment_yml_paths.get(repo, ())),
        raw=entry,
        **entry,
    )


def python_version(spec: EnvSpec) -> tuple[int, int]:
    """The spec's Python as (major, minor), for choosing the nearest base image."""
    major, minor = spec.python.split(".")[:2]
    return int(major), int(minor)
