"""The repair loop: a candidate whose tests do not run gets its environment fixed by class and its
tests run again, a bounded number of rounds, each round recorded (repair.py says the classes).

A repaired environment is remembered by the recipe it started from (`RepairBook`), so every later
candidate of that recipe starts repaired instead of failing the same way first: on a repository
whose addopts need pytest-cov, one candidate pays the rounds and the rest build nothing new.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from evalkit.gather.environment import Environment
from evalkit.gather.era import ERAS, Era
from evalkit.gather.project_metadata import normalised
from evalkit.gather.repair import Fix, LossClass, Tried, diagnose, next_fix
from evalkit.gather.validate import CandidateTests
from evalkit.sandbox.python_bases import PYTHON_BASES

MAX_ROUNDS = 4  # fixes tried on one candidate; each round runs its tests again
_DEFAULT_PYTHON = (3, 11)  # evalkit/base:latest is bookworm's


@dataclass(frozen=True)
class EnvChoice:
    """An environment, its era, and the task `image` value its recipe was written as."""

    env: Environment
    era: Era
    image: str
    fixes: tuple[Fix, ...] = ()  # the repairs that made it


@dataclass
class RepairedTests:
    tests: CandidateTests
    choice: EnvChoice
    rounds: list[str] = field(default_factory=list)  # "unknown option: install pytest-cov → ran"
    loss: str = ""  # the class of a candidate lost to its environment ("" when it ran)


class RepairBook:
    """The environments repaired in one gather, by the image the candidate started from; writes
    recipes one at a time (they are shared files)."""

    def __init__(self, write: Callable[[Environment, Era], str]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._repaired: dict[str, EnvChoice] = {}

    def start(self, choice: EnvChoice) -> EnvChoice:
        with self._lock:
            return self._repaired.get(choice.image, choice)

    def write(self, env: Environment, era: Era) -> str:
        with self._lock:
            return self._write(env, era)

    def remember(self, started: EnvChoice, repaired: EnvChoice) -> None:
        with self._lock:
            self._repaired.setdefault(started.image, repaired)


def _base_python(env: Environment, era: Era) -> tuple[int, int]:
    base = env.python_base or era.python_base
    return base.python if base else _DEFAULT_PYTHON


def _older_bases(env: Environment, era: Era) -> list[str]:
    """The Debian suites of the bases older than the one in use, newest first."""
    current = _base_python(env, era)
    return [b.suite for b in sorted(PYTHON_BASES, key=lambda b: b.python, reverse=True) if b.python < current]


def _day(commit_date: str) -> str:
    """An ISO author date as the UTC instant pip's upload hold takes."""
    when = datetime.fromisoformat(commit_date.replace("Z", "+00:00"))
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def older_runner(era: Era) -> str:
    """The ceiling of the pytest major before the era's ("<9" for today's), "" when there is none."""
    ceilings = [e.ceiling for e in sorted(ERAS, key=lambda e: e.pypi_as_of or "", reverse=True)]
    if not era.ceiling:
        return ceilings[0] if ceilings else ""
    lower = [c for c in ceilings if int(c.lstrip("<")) < int(era.ceiling.lstrip("<"))]
    return lower[0] if lower else ""


def tried_of(choice: EnvChoice, runner: str = "pytest") -> Tried:
    env, era = choice.env, choice.era
    return Tried(
        requirements=[*env.requirements, runner],
        dropped_options=[t.split("=", 1)[0] for t in env.dropped_options if t.startswith("-")],
        apt_packages=env.apt_packages,
        older_bases_left=len(_older_bases(env, era)),
        held_to_commit_date=any(f.hold_to_commit_date for f in choice.fixes),
        older_runner=older_runner(era),
        fixes=choice.fixes,
    )


def apply_fix(choice: EnvChoice, fix: Fix, commit_date: str) -> tuple[Environment, Era]:
    """The environment and era with `fix` made (pure)."""
    env, era = choice.env, choice.era
    dropped = set(fix.drop_requirements)
    requirements = [r for r in env.requirements if normalised(Environment.requirement_name(r)) not in dropped]
    requirements += [r for r in fix.add_requirements if r not in requirements]
    env = dataclasses.replace(
        env,
        requirements=requirements,
        apt_packages=tuple(dict.fromkeys([*env.apt_packages, *fix.apt_packages])),
        python_suite=_older_bases(env, era)[0] if fix.older_python else env.python_suite,
        notes=[*env.notes, f"repaired: {fix.describe()}"],
    )
    if fix.drop_options:
        env = env.without_options(fix.drop_options)
    if fix.hold_to_commit_date:
        era = dataclasses.replace(era, pypi_as_of=_day(commit_date))
    if fix.runner_ceiling:  # the era's name stays: metadata.era says the time, the recipe the pytest
        era = dataclasses.replace(era, ceiling=fix.runner_ceiling)
    return env, era


def repaired_tests(
    start: EnvChoice,
    run: Callable[[EnvChoice], CandidateTests],
    book: RepairBook,
    commit_date: str,
    local: Callable[[str], bool],
    plugin_of_option: Callable[[str], str | None],
    max_rounds: int = MAX_ROUNDS,
) -> RepairedTests:
    """The candidate's tests, run again after each fix while they fail for an environment class
    that has a fix left; `local(module)`: a top-level name that is the project's own."""
    choice = book.start(start)
    tests = run(choice)
    rounds: list[str] = []
    diagnosis = None
    while tests.reason and len(rounds) < max_rounds:
        diagnosis = diagnose(tests.output, local)
        fix = next_fix(diagnosis, tried_of(choice), plugin_of_option) if diagnosis else None
        if fix is None:
            break
        env, era = apply_fix(choice, fix, commit_date)
        choice = EnvChoice(env, era, book.write(env, era), (*choice.fixes, fix))
        tests = run(choice)
        rounds.append(f"{fix.describe()} → {'ran' if tests.environment == 'ran' else 'still not running'}")
        if tests.environment == "ran":
            book.remember(start, choice)
    loss = ""
    if tests.reason and tests.environment != "ran":
        found = diagnose(tests.output, local) or diagnosis
        loss = str(found.loss) if found else str(LossClass.OTHER)
    return RepairedTests(tests, choice, rounds, loss)


def project_names(listing: list[str], added: list[str]) -> set[str]:
    """Every name an import of the project's own could start with: the folders and the Python
    modules of the tree (`listing`, its paths) and of the files the change adds (a test module
    imports `helpers` from its own folder, `src/pkg` imports as `pkg`)."""
    names: set[str] = set()
    for path in [*listing, *added]:
        parts = path.split("/")
        names.update(parts[:-1])
        if parts[-1].endswith(".py"):
            names.add(parts[-1][:-3])
    return names
