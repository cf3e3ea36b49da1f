"""The era of a gathered commit: which pytest and which PyPI its tests were written against, and
which Python base suits the repository (pure).

Old commits tested with today's pytest look broken when their conftest uses a hook a later major
removed (`pytest_cmdline_preparse` in 8, the `py.path` hook arguments such as
`pytest_collect_file(path, parent)` in 9). A commit's era is the pytest major current on its author
date: before 8.0 (2024-01-27) `pytest<8`, before 9.0 (2025-11-05) `pytest<9`, else today's; and
before Python 3.10 (2021-10-04) `python<3.10`, with pytest and PyPI as they were then (pytest 6.2,
MarkupSafe before 2.1 removed what Jinja 2 imported), on Python 3.9 unless the repository says
otherwise: 3.10 removed the `collections` ABC aliases and old pytests break on 3.11
(`KeyError: '__spec__'` from `py`'s apipkg), and no older Python is offered. The
era's recipe installs the runner with that ceiling, and PyPI is held to the era's end
(`--uploaded-prior-to`, pip >= 26.0) so plugins and libraries come as they were then; the
repository's own pins win (a ceiling of its own replaces the era's, a lower bound is kept beside
it). One hold per era, not per commit, so candidates of an era share their image.

The Python base is the oldest offered base (`python_bases.PYTHON_BASES`) that `requires-python`
allows and the version classifiers list (the oldest base when they list only older Pythons); a
repository declaring neither gets its era's Python, else keeps the default base.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from evalkit.sandbox.python_bases import PYTHON_BASES, PythonBase


@dataclass(frozen=True)
class Era:
    """The pytest of a commit's time: `ceiling` is the requirement's upper bound ('' for today's),
    `pypi_as_of` the date PyPI is held to (None: today's PyPI)."""

    name: str
    ceiling: str
    pypi_as_of: str | None
    python: str | None = None  # the Debian suite of a repository that declares no Python

    @property
    def python_base(self) -> PythonBase | None:
        return next((b for b in PYTHON_BASES if b.suite == self.python), None)

    @property
    def current(self) -> bool:
        return not self.ceiling


# (first day of the next major, its ceiling): a commit authored before that day belongs to the era.
ERAS: tuple[Era, ...] = (
    Era("pytest<4", "<4", "2018-11-13T00:00:00Z", python="bullseye"),
    Era("python<3.10", "<7", "2021-10-04T00:00:00Z", python="bullseye"),
    Era("pytest<8", "<8", "2024-01-27T00:00:00Z"),
    Era("pytest<9", "<9", "2025-11-05T00:00:00Z"),
)
CURRENT = Era("current", "", None)
_PYTEST = re.compile(r"^\s*pytest\s*(\[[^\]]*\])?\s*(?P<spec>[^;]*)", re.IGNORECASE)
_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d+)\.(\d+)\s*$")


def era_of(commit_date: str, eras: tuple[Era, ...] = ERAS) -> Era:
    """The era of an ISO 8601 author date (compared in UTC); an unreadable date is today's era."""
    try:
        when = datetime.fromisoformat(commit_date.replace("Z", "+00:00"))
    except ValueError:
        return CURRENT
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    for era in eras:
        if when < datetime.fromisoformat(era.pypi_as_of.replace("Z", "+00:00")):
            return era
    return CURRENT


def runner_requirement(era: Era, repo_pin: str | None) -> str:
    """The pytest requirement line: the repository's own when it caps or pins pytest, else its lower
    bound (if any) with the era's ceiling."""
    spec = ""
    if repo_pin and (match := _PYTEST.match(repo_pin)):
        spec = match["spec"].strip()
    if spec and not _allows_guard(spec):  # a pin older than evalkit's guard runs on: the era's line
        spec = ""
    if any(op in spec for op in ("<", "==", "~=", "===")):
        return f"pytest{spec}"
    parts = [p for p in (spec, era.ceiling) if p]
    return "pytest" + ",".join(parts)


# the oldest pytest evalkit's guard plugin loads in (verify/guard_plugin.py: 3.10 to 9); a repository
# pinning an older one (`pytest==2.7.2`, 2015) gets its era's line instead: its tests rarely need 2.x
GUARD_MIN_PYTEST = "3.10"


def _allows_guard(spec: str) -> bool:
    """Whether `spec` allows a pytest the guard loads in: no pin or ceiling of it below that."""
    try:
        allowed = SpecifierSet(spec)
    except InvalidSpecifier:
        return True
    least = Version(GUARD_MIN_PYTEST)
    for one in allowed:
        try:
            version = Version(one.version.replace(".*", ""))
        except InvalidVersion:
            continue
        pins = one.operator in ("==", "===", "~=", "<=") and version < least
        if pins or (one.operator == "<" and version <= least):
            return False
    return True


def _listed_versions(classifiers: list[str]) -> set[tuple[int, int]]:
    return {(int(m[1]), int(m[2])) for c in classifiers if (m := _CLASSIFIER.match(c.strip()))}


def python_base_for(
    requires_python: str | None, classifiers: list[str], bases: tuple[PythonBase, ...] = PYTHON_BASES
) -> PythonBase | None:
    """The oldest base allowed by `requires-python` and listed by the classifiers (either alone
    when the two agree on none); None when the repository declares neither or no base fits."""
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        allowed = SpecifierSet("")
    listed = _listed_versions(classifiers)
    if not requires_python and not listed:
        return None
    ordered = sorted(bases, key=lambda b: b.python)
    if listed and max(listed) < ordered[0].python and allowed.contains(f"{ordered[0].python_version}.0"):
        return ordered[0]  # only Pythons older than any base: the nearest one
    by_spec = [b for b in ordered if allowed.contains(f"{b.python_version}.0", prereleases=True)]
    by_classifier = [b for b in ordered if b.python in listed]
    both = [b for b in by_spec if b in by_classifier]
    for choice in (both, by_classifier if not requires_python else by_spec):
        if choice:
            return choice[0]
    return None
