"""The test dependencies a repository declares, wherever it declares them, read and never run.

Besides the project's metadata (project_metadata.py): tox's `[testenv]` (tox.ini, setup.cfg's
`[tox:tox]`, pyproject's `[tool.tox]`), a noxfile's test sessions, a Pipfile, and requirements
files at the top, in `requirements/` and `reqs/`, their `-r` includes followed. What cannot come
from PyPI (editable installs, URLs, local paths) is skipped, and so are the tools that never run
the tests (`NOT_FOR_TESTS`): a repository that lints in tox need not lint in its image.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evalkit.gather.project_metadata import (
    TEST_EXTRAS,
    Need,
    from_pyproject,
    from_setup_cfg,
    from_setup_py,
    ini_of,
    lines_of,
    normalised,
    project_extras,
    project_name,
    toml_of,
)
from evalkit.pyparse import parse_python

Read = Callable[[str], str | None]

# Tools that never run the tests: environment managers, release and docs tooling (docs themes:
# `*-theme`), coverage uploaders, linters and type checkers. A linter stays when a pytest plugin
# the configuration loads runs it (`--mypy`).
NOT_FOR_TESTS = frozenset({
    "tox", "nox", "pre-commit", "twine", "build", "check-manifest", "bump2version", "bumpversion",
    "codecov", "coveralls", "hatch", "pdm", "poetry", "pipenv", "flit",
    "pip-tools",
    "flake8", "pylint", "mypy", "black", "isort", "ruff", "furo", "alabaster", "myst-parser",
})  # fmt: skip
NOT_FOR_TESTS_PREFIXES = ("sphinx", "mkdocs", "flake8-", "types-", "tox-")
REQUIREMENT_FILES = (
    "requirements.txt", "requirements-dev.txt", "requirements-test.txt", "requirements_dev.txt",
    "requirements_test.txt", "test-requirements.txt", "dev-requirements.txt", "requirements/test.txt",
    "requirements/tests.txt", "requirements/dev.txt",
)  # fmt: skip
REQUIREMENT_FOLDERS = ("requirements", "reqs")
# words of a requirements file's name: one that runs the tests or installs the project, or not
_RUNS_TESTS = {*TEST_EXTRAS, "requirements", "reqs", "base", "install", "main", "default", "common", "runtime"}
_NOT_TESTS = {"docs", "doc", "lint", "linting", "typing", "mypy", "release", "publish", "style", "benchmark"}
# tox factors that pin the oldest supported versions on purpose, not the ones to test with
_OLDEST_FACTORS = {"lowest", "min", "mindeps", "minimum", "oldest", "oldestdeps"}
_INCLUDE = re.compile(r"^(?:-r|--requirement)\s*=?\s*(\S+)")
_FACTORS = re.compile(r"^\s*(!?[\w.{}-]+(?:\s*,\s*!?[\w.{}-]+)*)\s*:\s*(?!//)(.*)$")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
MAX_INCLUDE_DEPTH = 5


@dataclass(frozen=True)
class DeclaredNeeds:
    needs: list[Need]
    project: str | None  # the project's own normalised name: never installed from PyPI
    notes: list[str]


def pip_requirement(line: str) -> str | None:
    """The PyPI requirement of one requirements line, without `--hash` options; None for an option,
    an editable or local install, a URL or a direct reference."""
    line = line.split(" #")[0].strip()
    line = re.split(r"\s+--?[a-z]", line)[0].strip()  # `pkg==1 --hash=sha256:...`
    if not line or line.startswith(("#", "-", ".", "/", "~")) or "://" in line or line.startswith("git+"):
        return None
    if " @ " in line or not _NAME.match(line):
        return None
    name = _NAME.match(line).group(1)
    if "/" in name or line.endswith((".whl", ".tar.gz", ".zip")):
        return None
    return line


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\n", " ").splitlines()


def requirements_file(read: Read, path: str, depth: int = 0, seen: set[str] | None = None) -> list[Need]:
    """The requirements of a pip requirements file, `-r` includes (relative to it) followed up to
    `MAX_INCLUDE_DEPTH` deep; `-c` constraints files are not requirements and are skipped."""
    seen = set() if seen is None else seen
    text = read(path) if path not in seen and depth <= MAX_INCLUDE_DEPTH else None
    if not text:
        return []
    seen.add(path)
    needs: list[Need] = []
    for line in _logical_lines(text):
        line = line.split(" #")[0].strip()
        if include := _INCLUDE.match(line):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), include.group(1)))
            needs += requirements_file(read, target, depth + 1, seen) if runs_tests(target) else []
        elif requirement := pip_requirement(line):
            needs.append(Need(requirement, path))
    return needs


def runs_tests(path: str) -> bool:
    """False for a requirements file whose name says docs, lint or typing (click's dev.txt includes
    docs.txt and typing.txt beside tests.txt)."""
    stem = posixpath.splitext(posixpath.basename(path).lower())[0]
    return not set(re.split(r"[-_.]+", stem)) & _NOT_TESTS


def requirement_files(listing: Callable[[str], list[str]]) -> list[str]:
    """The requirements files to read: the usual names, then the top-level `*requirements*` files and
    those of `requirements/` and `reqs/` whose name says they run the tests (not docs or lint). A
    pip-tools `x.in` is read instead of its compiled `x.txt`: the era's hold picks the versions."""
    listed = [p for p in listing("") if "requirements" in posixpath.basename(p).lower()]
    for folder in REQUIREMENT_FOLDERS:
        listed += listing(folder)
    found = list(REQUIREMENT_FILES)
    for path in listed:
        stem, ext = posixpath.splitext(posixpath.basename(path).lower())
        if ext not in (".txt", ".in") or not runs_tests(path) or not set(re.split(r"[-_.]+", stem)) & _RUNS_TESTS:
            continue
        if path not in found:
            found.append(path)
    compiled = [p for p in found if p.endswith(".txt") and f"{p[:-4]}.in" in listed]
    return list(dict.fromkeys(f"{p[:-4]}.in" if p in compiled else p for p in found))


def _tox_line(line: str) -> list[str]:
    """The requirements of one tox `deps` line: a factor prefix (`py38: foo`) stripped, a factor of
    the oldest versions dropped, `{[...]}` substitutions skipped, old tox's `deps = a b` split."""
    if factored := _FACTORS.match(line):
        factors = set(re.split(r"[\s,!{}-]+", factored.group(1).lower()))
        if factors & _OLDEST_FACTORS:
            return []
        line = factored.group(2).strip()
    if "{" in line:
        return []
    if " " in line and not re.search(r"[<>=!~;\[@]", line):
        return line.split()
    return [line]


def _tox_env(parser: configparser.ConfigParser, read: Read, source: str) -> tuple[list[Need], list[str]]:
    """The deps and extras of tox's `[testenv]`, or of a test-like env when `[testenv]` has no deps."""
    sections = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")]
    chosen = [s for s in sections if s == "testenv" and parser.get(s, "deps", fallback="").strip()]
    for section in sections:
        env = section.partition(":")[2].strip()
        if not chosen and (env in TEST_EXTRAS or re.fullmatch(r"py(py)?\d*", env)):
            chosen = [section]
    if not chosen and "testenv" in sections:
        chosen = ["testenv"]
    needs: list[Need] = []
    extras: list[str] = []
    for section in chosen:
        for line in lines_of(parser.get(section, "deps", fallback="")):
            if include := _INCLUDE.match(line):
                needs += requirements_file(read, posixpath.normpath(include.group(1).replace("{toxinidir}/", "")))
                continue
            needs += [Need(r, source) for entry in _tox_line(line) if (r := pip_requirement(entry))]
        value = parser.get(section, "extras", fallback="") or parser.get("testenv", "extras", fallback="")
        for line in lines_of(value):  # `extras = tests, toml` or one a line, factors as in deps
            extras += [name for entry in _tox_line(line.replace(",", " ")) for name in entry.split()]
    return needs, extras


def from_tox(read: Read, project: str | None) -> list[Need]:
    """tox's test environment from tox.ini, setup.cfg's `[tox:tox]` or pyproject's `[tool.tox]`
    (its `legacy_tox_ini`, or tox 4's `env_run_base`)."""
    needs: list[Need] = []
    extras: list[str] = []
    for source, text in (("tox.ini", read("tox.ini")), ("setup.cfg", read("setup.cfg"))):
        parser = ini_of(text)
        if text and (source == "tox.ini" or parser.has_section("tox:tox")):
            found, named = _tox_env(parser, read, source)
            needs, extras = needs + found, extras + named
    tox = toml_of(read("pyproject.toml")).get("tool", {}).get("tox", {})
    if isinstance(tox.get("legacy_tox_ini"), str):
        found, named = _tox_env(ini_of(tox["legacy_tox_ini"]), read, "pyproject.toml")
        needs, extras = needs + found, extras + named
    base = tox.get("env_run_base", {})
    if isinstance(base, dict):
        deps = [d for d in base.get("deps", []) if isinstance(d, str)]
        needs += [Need(r, "pyproject.toml") for d in deps if (r := pip_requirement(d))]
        extras += [e for e in base.get("extras", []) if isinstance(e, str)]
    return needs + project_extras(read, extras, project)


def _session_name(function: ast.FunctionDef) -> str | None:
    """The nox session a function defines (`@nox.session`, `@session(name=...)`), or None."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call else decorator
        if getattr(target, "attr", getattr(target, "id", "")) not in ("session", "parametrize"):
            continue
        for keyword in call.keywords if call else []:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return function.name
    return None


def _install_arguments(function: ast.FunctionDef, constants: dict[str, list[str]]) -> list[str]:
    found: list[str] = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "install"):
            continue
        for argument in node.args:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.append(argument.value)
            elif isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name):
                found += constants.get(argument.value.id, [])
    return found


def from_noxfile(read: Read, project: str | None) -> list[Need]:
    """The `session.install(...)` literals of noxfile.py's test sessions (named like test, unit or
    pytest; every session when none is): `-r file` followed, `.[extra]` read as the project's extra."""
    text = read("noxfile.py")
    try:
        tree = parse_python(text) if text else None
    except SyntaxError:
        tree = None
    if tree is None:
        return []
    constants: dict[str, list[str]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            try:
                value = ast.literal_eval(statement.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                constants[statement.targets[0].id] = list(value)
    sessions = {n: f for f in tree.body if isinstance(f, ast.FunctionDef) and (n := _session_name(f))}
    tests = [f for n, f in sessions.items() if re.search(r"test|unit|pytest", n)] or list(sessions.values())
    needs: list[Need] = []
    extras: list[str] = []
    for function in tests:
        arguments = _install_arguments(function, constants)
        for index, argument in enumerate(arguments):
            argument = argument.removeprefix("-e").strip()
            if argument in ("-r", "--requirement") and index + 1 < len(arguments):
                needs += requirements_file(read, arguments[index + 1])
            elif (include := _INCLUDE.match(argument)) and argument != "-r":
                needs += requirements_file(read, include.group(1))
            elif own := re.fullmatch(r"\.\[([^\]]+)\]", argument):
                extras += own.group(1).split(",")
            elif index == 0 or arguments[index - 1] not in ("-r", "--requirement", "-c"):
                needs += [Need(r, "noxfile.py")] if (r := pip_requirement(argument)) else []
    return needs + project_extras(read, extras, project)


def from_pipfile(text: str) -> list[Need]:
    """Pipfile's `[packages]` and `[dev-packages]` (`"*"` is any version); git, path and editable
    entries are not on PyPI."""
    data = toml_of(text)
    needs: list[Need] = []
    for section, runtime in (("packages", True), ("dev-packages", False)):
        for name, spec in data.get(section, {}).items():
            if isinstance(spec, dict):
                if {"git", "path", "file", "editable"} & spec.keys():
                    continue
                extras = spec.get("extras") or []
                version = str(spec.get("version", "*"))
                name = name + (f"[{','.join(extras)}]" if extras else "")
            else:
                version = str(spec)
            line = name if version.strip() in ("*", "") else name + version.strip()
            needs.append(Need(line, "Pipfile", runtime))
    return needs


def runs_no_tests(requirement: str, plugin_tools: Iterable[str] = ()) -> bool:
    """Whether a requirement is one of `NOT_FOR_TESTS` and no pytest plugin in use needs it."""
    match = _NAME.match(requirement)
    name = normalised(match.group(1)) if match else ""
    if any(name == tool or name.startswith(f"{tool}-") for tool in plugin_tools):
        return False
    return name in NOT_FOR_TESTS or name.startswith(NOT_FOR_TESTS_PREFIXES) or name.endswith("-theme")


def declared_needs(read: Read, listing: Callable[[str], list[str]] = lambda folder: []) -> DeclaredNeeds:
    """Every requirement the repository declares for its tests, in reading order (pure given `read`
    and `listing`): metadata first, then tox, nox, Pipfile and requirements files."""
    project = project_name(read)
    needs: list[Need] = []
    for name, parse in (("pyproject.toml", from_pyproject), ("setup.cfg", from_setup_cfg), ("setup.py", from_setup_py)):
        if text := read(name):
            needs += parse(text)
    notes = []
    if read("setup.py") and not needs:
        notes.append("setup.py is not executed: install_requires not given as a literal list are not read")
    needs += from_tox(read, project) + from_noxfile(read, project)
    if text := read("Pipfile"):
        needs += from_pipfile(text)
    seen: set[str] = set()
    for path in requirement_files(listing):
        needs += requirements_file(read, path, seen=seen)
    return DeclaredNeeds(needs, project, notes)
