"""When the tests fail to even load on the base, is that because they are new? (pure)

A test module (or the conftest the test part changes) that imports a function the change adds
stops the whole run on the base: no report, which the scorer calls an environment that cannot run
the tests. For a candidate that is the expected before state, "these tests are new": every one of
them is missing before the change. It is only that when every import failure the run printed names
something the change adds (a top-level function, class or assignment, a re-export, or a new
module); any other failure (a missing dependency, a removed pytest hook) stays a broken environment.
"""

from __future__ import annotations

import re

from evalkit.gather.surface import module_name

_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '([\w.]+)'")
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_NO_ATTRIBUTE = re.compile(r"AttributeError: module '[\w.]+' has no attribute '(\w+)'")
_TOP_LEVEL = re.compile(r"^\+(?:async\s+def|def|class)\s+(\w+)|^\+(\w+)\s*(?::[^=]*)?=(?!=)", re.MULTILINE)
_REEXPORT = re.compile(r"^\+from\s+[\w.]+\s+import\s+\(?([\w\s,]+)\)?\s*$", re.MULTILINE)
_NEW_FILE = re.compile(r"^--- /dev/null\n\+\+\+ b/(\S+\.py)$", re.MULTILINE)


def names_added(patch: str) -> set[str]:
    """Top-level names the diff defines or re-exports, and the modules it creates (dotted)."""
    names = {m[1] or m[2] for m in _TOP_LEVEL.finditer(patch)}
    for found in _REEXPORT.finditer(patch):
        names |= {word.split(" as ")[-1].strip() for word in found[1].split(",") if word.strip()}
    modules = {module_name(path) for path in _NEW_FILE.findall(patch)}
    return names | modules


def tests_are_new(log: str, patch: str) -> bool:
    """True when the base run's import failures all name something `patch` adds (at least one):
    a name it defines or re-exports, or a module it creates."""
    names = set(_CANNOT_IMPORT.findall(log)) | set(_NO_ATTRIBUTE.findall(log))
    modules = set(_NO_MODULE.findall(log))
    if not names and not modules:
        return False
    added = names_added(patch)
    return all(n.split(".")[-1] in added for n in names) and all(m in added for m in modules)


tests_are_new.__test__ = False  # not a pytest test
