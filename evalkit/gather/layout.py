"""Where a repository keeps its tests, read at a commit: what gather splits off as the hidden tests.

Default globs (`tests/`, `test_*.py`...) miss projects that keep tests elsewhere: a style checker
keeps its test modules and the data files they read in `testsuite/`, and with the defaults that data
went into the reference change, so prompts sent the agent to edit the tests' own data. The project
says where its tests are, in this order (each recorded in the task's `metadata.test_paths`):

1. pytest's own configuration (`testpaths`, `python_files`) in pytest.ini, pyproject.toml, tox.ini or
   setup.cfg, the first that has a pytest section, as pytest reads them;
2. the folders its test modules live in, when the folder is named for tests or holds mostly test
   modules (a package folder with one `test_x.py` beside ten source modules stays source);
3. files and folders the test modules name by a relative path literal (data the tests open), unless
   they lie in a source package or at the top of the repository;
4. then the default globs. `--test-glob` replaces all of this.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evalkit.diffs import DEFAULT_TEST_GLOBS, is_test_path
from evalkit.gather.data_readers import MAX_MODULES_READ, data_readers, string_literals
from evalkit.gather.history import DEFAULT_PYTHON_FILES, AtCommit, git, is_test_module
from evalkit.gather.not_tasks import tree_code_lines

_TEST_FOLDER = re.compile(r"^(tests?|testing|testsuite|test_?suite|.+_tests?|unittests?|t)$", re.I)


@dataclass(frozen=True)
class TestLayout:
    """The globs (git `:(glob)` pathspecs) that are test at a commit, and where each came from."""

    __test__ = False  # not a pytest class

    globs: tuple[str, ...]
    origins: tuple[str, ...]  # "testsuite/** (tox.ini testpaths)", one per glob found before the defaults
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES  # how test modules are named (pytest's option)

    def describe(self) -> str:
        """For `metadata.test_paths`: the project's own globs and their origin, then the defaults."""
        return "; ".join([*self.origins, "default globs"])


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def pytest_settings(read: Callable[[str], str | None]) -> tuple[str, dict[str, list[str]]] | None:
    """(file, {"testpaths": [...], "python_files": [...]}) from the first configuration file that has
    a pytest section, in pytest's order; None when none has."""
    text = read("pytest.ini")
    if text is not None:
        return "pytest.ini", _ini_settings(text, "pytest") or {}
    text = read("pyproject.toml")
    if text:
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        pytest_table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        if isinstance(pytest_table, dict) and pytest_table:
            options = pytest_table.get("ini_options", pytest_table)
            if isinstance(options, dict):
                return "pyproject.toml", {k: _as_list(options.get(k)) for k in ("testpaths", "python_files")}
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        text = read(name)
        found = _ini_settings(text, section) if text else None
        if found is not None:
            return name, found
    return None


def _ini_settings(text: str, section: str) -> dict[str, list[str]] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return None
    return {k: parser.get(section, k, fallback="").split() for k in ("testpaths", "python_files")}


def _test_folders(files: list[str], patterns: tuple[str, ...]) -> list[str]:
    """Folders holding test modules that are named for tests or hold mostly test modules."""
    modules: dict[str, list[str]] = {}
    for path in files:
        if path.endswith(".py"):
            modules.setdefault(posixpath.dirname(path), []).append(path)
    found = []
    for folder, paths in sorted(modules.items()):
        tests = [p for p in paths if is_test_module(p, patterns)]
        if not folder or not tests:
            continue
        others = [p for p in paths if p not in tests and posixpath.basename(p) not in ("__init__.py", "conftest.py")]
        named = any(_TEST_FOLDER.match(part) for part in folder.split("/"))
        if named or len(tests) >= len(others):
            found.append(folder)
    return [f for f in found if not any(f.startswith(g + "/") for g in found)]  # outermost only


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def _opened_paths(
    modules: list[str], read: Callable[[str], str | None], files: set[str], folders: set[str], source_packages: set[str]
) -> set[str]:
    """Files and folders the test modules name by a relative path literal (from the repository's
    top or the module's folder), outside source packages and the top level."""
    found: set[str] = set()
    for module in modules[:MAX_MODULES_READ]:
        text = read(module)
        if not text:
            continue
        here = posixpath.dirname(module)
        for literal in string_literals(text):
            if not literal or len(literal) > 200 or "\n" in literal or literal.startswith(("/", "~")):
                continue
            for candidate in (literal, posixpath.join(here, literal) if here else literal):
                path = posixpath.normpath(candidate).rstrip("/")
                if path.startswith("..") or "/" not in path or not (path in files or path in folders):
                    continue
                if any(_within(path, pkg) or _within(pkg, path) for pkg in source_packages):
                    continue
                found.add(path)
    return found


def read_layout(files: list[str], read: Callable[[str], str | None]) -> TestLayout:
    """The test globs of a tree (`files`: every path in it; `read`: a path's text or None)."""
    globs: list[str] = []
    origins: list[str] = []

    def add(glob: str, origin: str) -> None:
        covered = is_test_path(glob.removesuffix("/**") + "/x.py" if glob.endswith("/**") else glob)
        if glob not in globs and not covered:
            globs.append(glob)
            origins.append(f"{glob} ({origin})")

    folders = {posixpath.dirname(p) for p in files} - {""}
    folders |= {f.rsplit("/", i)[0] for f in list(folders) for i in range(1, f.count("/") + 1)}
    packages = {posixpath.dirname(p) for p in files if p.endswith("/__init__.py")}
    source_packages = {p for p in packages if not any(_TEST_FOLDER.match(part) for part in p.split("/"))}
    settings = pytest_settings(read)
    patterns = DEFAULT_PYTHON_FILES
    testpaths: list[str] = []
    if settings:
        name, values = settings
        testpaths = [p.strip("/") for p in values.get("testpaths", []) if p.strip("/") not in ("", ".")]
        for path in testpaths:  # a testpath that is the package itself (tests inside it) only narrows the search
            if not any(_within(path, pkg) or _within(pkg, path) for pkg in source_packages):
                add(path if path in files else f"{path}/**", f"{name} testpaths")
        if values.get("python_files"):
            patterns = tuple(values["python_files"])
            for pattern in patterns:
                add(f"**/{pattern}", f"{name} python_files")
    in_testpaths = [p for p in files if not testpaths or any(_within(p, t) for t in testpaths)]
    modules = [p for p in in_testpaths if is_test_module(p, patterns)]
    test_folders = _test_folders(in_testpaths, patterns)
    for folder in test_folders:
        add(f"{folder}/**", "the test modules' folder")
    tested = tuple(f"{f}/" for f in test_folders)
    for path in sorted(_opened_paths(modules, read, set(files), folders, source_packages)):
        if not path.startswith(tested):
            add(path if path in files else f"{path}/**", "opened by the tests")
    return TestLayout((*globs, *DEFAULT_TEST_GLOBS), tuple(origins), patterns)


class TreeReader:
    """The layout of a repository at each commit of a walk: one `git ls-tree` per commit, and each
    file's text read once per blob (from one commit to the next most files do not change)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._text = lru_cache(maxsize=4096)(self._read_blob)
        self._blobs = lru_cache(maxsize=2)(self._list_blobs)  # layout and screening read the same commit

    def _read_blob(self, blob: str) -> str:
        return git(self.repo, "cat-file", "blob", blob)

    def _list_blobs(self, commit: str) -> dict[str, str]:
        blobs: dict[str, str] = {}
        for entry in git(self.repo, "ls-tree", "-r", "-z", commit).split("\0"):
            meta, _, path = entry.partition("\t")
            fields = meta.split()
            if len(fields) == 3 and fields[1] == "blob":
                blobs[path] = fields[2]
        return blobs

    def _reader(self, commit: str) -> Callable[[str], str | None]:
        blobs = self._blobs(commit)
        return lambda path: self._text(blobs[path]) if path in blobs else None

    def layout(self, commit: str) -> TestLayout:
        return read_layout(sorted(self._blobs(commit)), self._reader(commit))

    def at_commit(self, commit: str, globs: tuple[str, ...], patterns: tuple[str, ...]) -> AtCommit:
        """What screening reads from the tree at `commit` (`globs`: its test part)."""
        files, read = sorted(self._blobs(commit)), self._reader(commit)
        modules = [p for p in files if is_test_module(p, patterns) and is_test_path(p, globs)]
        return AtCommit(
            source_code_lines=lambda: tree_code_lines(files, read, globs),
            data_readers=lambda data: data_readers(data, modules, read),
        )
