"""Base images per Python version: which Debian suite gives which `python3`, and how a wanted
version is matched to one.

Debian ships one Python per release and the host's apt mirror is the only offline source, so a
base is a Debian suite (debootstrap, see `sandboxes/base/debootstrap.sh`) and a task gets the
suite whose Python is its version. When none matches, the nearest is taken and flagged
`approximate`: the oldest newer Python (code written for 3.8 or 3.10 mostly runs on 3.9 or 3.11,
while older interpreters lack its syntax), else the newest there is (for 3.14 and later).
The host's mirror served bullseye, bookworm and trixie (checked 2026-12, see docs/design.md);
buster and older are archived and not served.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalkit.errors import EvalkitError

DEFAULT_BASE_IMAGE = "evalkit/base:latest"  # `evalkit sandbox build-base`: no Python chosen
# Pip and venv let environments install per-version pins; Python 3.9's distutils is a separate
# Debian package that old setup.py files import (3.12 removed it, so trixie has none).
_PIP = ("python3-pip", "python3-venv")


@dataclass(frozen=True)
class PythonBase:
    """One Debian suite's base image and the `python3` it carries."""

    suite: str
    python: tuple[int, int]
    extra_packages: tuple[str, ...]

    @property
    def image(self) -> str:
        return f"evalkit/base-{self.suite}:latest"

    @property
    def python_version(self) -> str:
        return f"{self.python[0]}.{self.python[1]}"


PYTHON_BASES: tuple[PythonBase, ...] = (
    PythonBase("bullseye", (3, 9), (*_PIP, "python3-distutils")),
    PythonBase("bookworm", (3, 11), _PIP),
    PythonBase("trixie", (3, 13), _PIP),
)


@dataclass(frozen=True)
class BaseChoice:
    """The base chosen for a wanted Python version; `approximate` when its Python differs."""

    wanted: str
    base: PythonBase
    approximate: bool


def parse_python_version(text: str) -> tuple[int, int]:
    """'3.9', '3.9.7' or ' 3.10 ' → (major, minor); anything else is a user error."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*", text)
    if match is None:
        raise EvalkitError(f"python version {text!r} is not MAJOR.MINOR (e.g. 3.9)")
    return int(match[1]), int(match[2])


def base_for_suite(suite: str, bases: tuple[PythonBase, ...] = PYTHON_BASES) -> PythonBase:
    """The base of a Debian suite by name; an unknown suite is a user error naming the known ones."""
    for base in bases:
        if base.suite == suite:
            return base
    known = ", ".join(b.suite for b in bases)
    raise EvalkitError(f"no Python base for Debian suite {suite!r}: choose one of {known}")


def choose_base(wanted: str, bases: tuple[PythonBase, ...] = PYTHON_BASES) -> BaseChoice:
    """The base whose Python is `wanted`, else the oldest newer one, else the newest (approximate)."""
    version = parse_python_version(wanted)
    ordered = sorted(bases, key=lambda b: b.python)
    for base in ordered:
        if base.python == version:
            return BaseChoice(wanted, base, approximate=False)
    newer = [b for b in ordered if b.python > version]
    return BaseChoice(wanted, newer[0] if newer else ordered[-1], approximate=True)
