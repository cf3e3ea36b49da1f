"""Tests that live in data: the test modules that read the data files a commit's test part changes.

A style checker keeps most of its tests as data (`testsuite/E26.py`, `testing/data/*.txt`) read by
a parametrised module that rarely changes: a new check comes with new data and no change to any
test module, and was rejected as "the test part changes no test module". The modules to run for
such a commit are those that read the data, found at the commit: test modules in the data's folder
or a folder above it whose string literals name the data file, a folder on the way to it
(`os.path.join(here, "testsuite")`, `Path(__file__).parent / "fixtures"`), or a glob matching it
(`glob("data/*.md")`). A module in the data's own folder that lists its folder (`os.listdir`,
`glob`, `iterdir` with no literal naming it) reads it as well. The modules that name a file itself
win over those that only reach its folder: every plugin's test module names `fixtures`, one names
`colon_fence.md`.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from evalkit.pyparse import parse_python

# a glob over files (`*.md`, `data/*.txt`), not a query's wildcard (`*`, `foo[*].bar`)
_GLOB = re.compile(r"^[\w./-]*\*[\w*-]*\.[\w*]+$")
_LISTS_FOLDER = re.compile(r"\b(listdir|scandir|iterdir|glob|walk)\s*\(")
# a module that builds paths: only then is a bare folder name (`"testsuite"`, `"data"`) a path
_BUILDS_PATHS = re.compile(r"__file__|os\.path|pathlib|\bPath\b|\bglob\b|listdir|\bopen\(|read_text|datadir|rootdir")
MAX_MODULES_READ = 400  # test modules read at one commit


@lru_cache(maxsize=4096)  # a test module is read at every commit of a walk, mostly unchanged
def string_literals(source: str) -> frozenset[str]:
    """The string constants of a module (empty when it does not parse)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _file_names(data: str, module_folder: str) -> set[str]:
    """How a module in `module_folder` names `data` itself: its file name, or its path from the
    module's folder or from the top."""
    return {posixpath.basename(data), posixpath.relpath(data, module_folder or "."), data}


def _folder_names(data: str, module_folder: str) -> set[str]:
    """The folders between the module's folder and `data`, by path and by name, and the data's
    folder from the top (not the folders above the module: every module names its own `tests`)."""
    names = {posixpath.dirname(data)} - {""}
    folder = posixpath.dirname(posixpath.relpath(data, module_folder or "."))
    while folder:
        names |= {folder, posixpath.basename(folder)}
        folder = posixpath.dirname(folder)
    return names


def _as_path(literal: str) -> str:
    path = literal.strip().removeprefix("./").rstrip("/")
    return path if len(path) <= 200 else ""


def _named(path: str, names: set[str]) -> bool:
    return bool(path) and (path in names or any(path.endswith("/" + n) for n in names if "/" in n))


def how_read(module: str, text: str, data: str) -> int:
    """How surely the test module (`text` at the commit) reads the data file: 2 when it names the
    file (or its stem beside its extension: `load(name + ".txt")`), 1 when it names a folder on the
    way while building paths, a glob matching it, or lists the data's folder, its own; else 0."""
    folder = posixpath.dirname(module)
    if folder and not (data + "/").startswith(folder + "/"):
        return 0
    paths = {_as_path(literal) for literal in string_literals(text)} - {""}
    stem, extension = posixpath.splitext(posixpath.basename(data))
    if any(_named(p, _file_names(data, folder)) for p in paths):
        return 2
    if len(stem) >= 3 and stem in paths and extension and extension in paths:
        return 2
    folders = _folder_names(data, folder) if _BUILDS_PATHS.search(text) else set()
    globbed = any(_GLOB.match(p) and fnmatch.fnmatch(posixpath.basename(data), posixpath.basename(p)) for p in paths)
    if any(_named(p, folders) for p in paths) or globbed:
        return 1
    return int(posixpath.dirname(data) == folder and bool(_LISTS_FOLDER.search(text)))


def data_readers(data: Iterable[str], modules: Iterable[str], read: Callable[[str], str | None]) -> list[str]:
    """The test modules (`modules`: those in the tree at the commit; `read`: a file's text there)
    that read any of the `data` files, sorted: for each file, the modules that name it, else those
    that reach it through its folder (every plugin's module names `fixtures`; one names `abbr.txt`)."""
    wanted = list(data)
    surely: dict[str, dict[str, int]] = {d: {} for d in wanted}
    for module in sorted(modules)[:MAX_MODULES_READ]:
        folder = posixpath.dirname(module)
        near = [d for d in wanted if not folder or (d + "/").startswith(folder + "/")]
        text = read(module) if near else None
        for d in near if text else ():
            if level := how_read(module, text, d):
                surely[d][module] = level
    found = set()
    for levels in surely.values():
        best = max(levels.values(), default=0)
        found |= {m for m, level in levels.items() if level == best}
    return sorted(found)
