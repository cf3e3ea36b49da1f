"""Tests that live in data: the test modules that read the data files a commit's test part changes.

A style checker keeps most of its tests as data (`testsuite/E26.py`, `testing/data/*.txt`) read by
a parametrised module that rarely changes: a new check comes with new data and no change to any
test module, and was rejected as "the test part changes no test module". The modules to run for
such a commit are those that read the data, found at the commit: test modules in the data's folder
or a folder above it whose string literals name the data file, a folder on the way to it
(`os.path.join(here, "testsuite")`, `Path(__file__).parent / "fixtures"`), or a glob matching it
(`glob("data/*.md")`). A module in the data's own folder that lists its folder (`os.listdir`,
`glob`, `iterdir` with no literal naming it) reads it as well.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from evalkit.pyparse import parse_python

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


def _names_of(data: str, module_folder: str, folders_too: bool) -> set[str]:
    """How a module in `module_folder` can name `data`: its file name, its path from the module's
    folder or the top, and (`folders_too`) the folders on the way."""
    rel = posixpath.relpath(data, module_folder or ".")
    names = {posixpath.basename(data), rel, data}
    if not folders_too:
        return names
    folder = posixpath.dirname(rel)
    while folder:
        names.add(folder)
        names.add(posixpath.basename(folder))
        folder = posixpath.dirname(folder)
    data_folder = posixpath.dirname(data)
    if data_folder:
        names |= {data_folder, posixpath.basename(data_folder)}
    return names


def _names(literal: str, names: set[str], data: str) -> bool:
    path = literal.strip().removeprefix("./").rstrip("/")
    if not path or len(path) > 200:
        return False
    if path in names or any(path.endswith("/" + n) for n in names if "/" in n):
        return True
    return "*" in path and (fnmatch.fnmatch(posixpath.basename(data), posixpath.basename(path)))


def reads_data(module: str, text: str, data: str) -> bool:
    """The test module (`text` at the commit) reads the data file: it lies in the data's folder or
    above it and names it, a folder on the way, or a glob matching it, or lists its own folder."""
    folder = posixpath.dirname(module)
    if folder and not (data + "/").startswith(folder + "/"):
        return False
    names = _names_of(data, folder, folders_too=bool(_BUILDS_PATHS.search(text)))
    if any(_names(literal, names, data) for literal in string_literals(text)):
        return True
    return posixpath.dirname(data) == folder and bool(_LISTS_FOLDER.search(text))


def data_readers(data: Iterable[str], modules: Iterable[str], read: Callable[[str], str | None]) -> list[str]:
    """The test modules (`modules`: those in the tree at the commit; `read`: a file's text there)
    that read any of the `data` files, sorted."""
    wanted = list(data)
    found = []
    for module in sorted(modules)[:MAX_MODULES_READ]:
        folder = posixpath.dirname(module)
        near = [d for d in wanted if not folder or (d + "/").startswith(folder + "/")]
        if near and (text := read(module)) and any(reads_data(module, text, d) for d in near):
            found.append(module)
    return found
