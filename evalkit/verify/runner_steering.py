"""What in a candidate change can steer the hidden tests, and how it is put back to the base.

The hidden tests decide a verdict only if the test runner is the one the task was validated with.
Everything in an agent's change that can alter how tests are collected, run or reported is put
back before they run (pure functions here; `guarded_run.py` does it in the scoring sandbox):

- whole files: everything under the test folders (`evalkit.diffs`, `conftest.py`
  anywhere included), new compiled code (`*.pyc` / `__pycache__/`, which an unchecked-hash pyc
  makes Python import instead of the source beside it; `*.so` / `*.pyd` extension modules, which
  win over a `.py` of the same name), `pytest.ini` / `.pytest.ini`, start-up hooks (`sitecustomize.py`,
  `usercustomize.py`, `*.pth`), modules that would shadow the runner at an import root (`pytest.py`,
  `_pytest/`, `pluggy/`, `py.py`, `evalkit_guard*`), and a `setup.py` that newly declares `pytest11`
  entry points;
- only the runner's settings of files that hold others too: `pyproject.toml` (`[tool.pytest]`,
  `[tool.pytest.ini_options]`, `pytest11` entry points of `[project.entry-points]` and
  `[tool.poetry.plugins]`), `setup.cfg` (`[tool:pytest]`, `pytest11` of `[options.entry_points]`),
  `tox.ini` (`[pytest]`). The rest of the agent's change to those files is kept.

A file the task's reference change touches is never put back whole: the reference must resolve.
Putting back is not by itself an accusation (an agent may add tests of its own); a restoration is
`steering` (and flagged `test_tampering`) when what was put back could change the outcome: runner
settings, start-up hooks, shadowing modules, new plugins, or a conftest / test file that defines
pytest hooks or plugins.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import tomli_w
from pydantic import BaseModel

from evalkit.diffs import is_test_path

STARTUP_HOOKS = ("sitecustomize.py", "usercustomize.py")
SHADOWING_ROOTS = ("pytest.py", "py.py", "_pytest", "pluggy", "iniconfig")
GUARD_PREFIX = "evalkit_guard"
PYTEST_INI = ("pytest.ini", ".pytest.ini")
COMPILED = (".pyc", ".pyo", ".so", ".pyd")
COMPILED_CODE = "compiled code that would be imported instead of the source"
STARTUP_HOOK = "start-up hook"
SHADOWS_RUNNER = "shadows the test runner"
IMPORT_ROOTS = ("", "src")

_HOOKS = re.compile(
    r"^\s*(?:async\s+)?def\s+pytest_\w+\s*\(|\bpytest_plugins\s*=|\bhookimpl\b|\bhookwrapper\b|\b_pytest\b|"
    r"\bpluginmanager\b",
    re.M,
)
_HEADER = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([^\s=:#;][^=:]*?)\s*[=:]")


class RestoredChange(BaseModel):
    """One part of the candidate put back to the base before the hidden tests ran."""

    path: str
    part: str  # "file", or the settings put back ("[tool:pytest]", "pytest11 entry points")
    reason: str
    steering: bool  # could have changed the outcome: flagged test_tampering

    def label(self) -> str:
        return self.path if self.part == "file" else f"{self.path} {self.part}"


@dataclass(frozen=True)
class FilePlan:
    """How one changed path is neutralised: put back whole, or only some settings edited."""

    path: str
    action: Literal["whole", "settings"]
    reason: str
    steering: bool


def _import_root_entries(path: str) -> list[str]:
    """The first component of `path` below each import root (the repository root, src/) it is in."""
    parts = path.split("/")
    entries = []
    for root in IMPORT_ROOTS:
        prefix = root.split("/") if root else []
        if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
            entries.append(parts[len(prefix)])
    return entries


def plan_for(path: str, reference_paths: Iterable[str] = (), new: bool = True) -> FilePlan | None:
    """What to do with one path the candidate changed (None: leave it as the agent made it).
    `new`: the base has no such file (only a new module can shadow the runner: editing pytest's
    own modules is a task in pytest's repository)."""
    name = posixpath.basename(path)
    whole_allowed = path not in set(reference_paths)
    entries = _import_root_entries(path)
    if new and (name.endswith(COMPILED) or "__pycache__/" in f"{path}/"):
        return FilePlan(path, "whole", COMPILED_CODE, True) if whole_allowed else None
    if name in STARTUP_HOOKS or name.endswith(".pth"):
        return FilePlan(path, "whole", STARTUP_HOOK, True) if whole_allowed else None
    if new and any(e in SHADOWING_ROOTS or e.startswith(GUARD_PREFIX) for e in entries):
        return FilePlan(path, "whole", SHADOWS_RUNNER, True) if whole_allowed else None
    if name in PYTEST_INI:
        return FilePlan(path, "whole", "pytest configuration", True) if whole_allowed else None
    if name in ("pyproject.toml", "setup.cfg", "tox.ini"):
        return FilePlan(path, "settings", "test-runner settings", True)
    if name == "setup.py":
        return FilePlan(path, "settings", "pytest11 entry points in setup.py", True)
    if is_test_path(path) and whole_allowed:
        return FilePlan(path, "whole", "a test file (the hidden tests own them)", False)
    return None


def defines_hooks(text: str | None) -> str | None:
    """The first line of a Python file that defines pytest hooks or plugins, if any."""
    if not text:
        return None
    match = _HOOKS.search(text)
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end != -1 else len(text)].strip()


# -- pyproject.toml ---------------------------------------------------------------------------------
TOML_RUNNER_KEYS: tuple[tuple[str, ...], ...] = (
    ("tool", "pytest"),
    ("project", "entry-points", "pytest11"),
    ("tool", "poetry", "plugins", "pytest11"),
)


def _get(data: dict, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _set(data: dict, path: tuple[str, ...], value: object) -> None:
    *parents, last = path
    for key in parents:
        data = data.setdefault(key, {})
    if value is None:
        data.pop(last, None)
    else:
        data[last] = value


def _prune_empty(data: dict, path: tuple[str, ...]) -> None:
    """Drop tables the restoration emptied (`[project.entry-points]` with nothing left)."""
    for depth in range(len(path) - 1, 0, -1):
        parent = _get(data, path[: depth - 1]) if depth > 1 else data
        table = _get(data, path[:depth])
        if isinstance(parent, dict) and table == {}:
            parent.pop(path[depth - 1], None)


def restore_toml_settings(base: str | None, after: str) -> tuple[str, list[str]] | None:
    """`after` with the runner's tables as in `base`; None when they already match. Unreadable
    TOML on either side gives the base text back whole (part `file`)."""
    try:
        base_data = tomllib.loads(base) if base is not None else {}
        after_data = tomllib.loads(after)
    except tomllib.TOMLDecodeError:
        return (base or "", ["file"]) if base != after else None
    changed = [p for p in TOML_RUNNER_KEYS if _get(after_data, p) != _get(base_data, p)]
    if not changed:
        return None
    for path in changed:
        _set(after_data, path, _get(base_data, path))
        _prune_empty(after_data, path)
    return tomli_w.dumps(after_data), ["[" + ".".join(p) + "]" for p in changed]


# -- setup.cfg / tox.ini -------------------------------------------------------------------------------
INI_RUNNER_SECTIONS = {"setup.cfg": ("tool:pytest",), "tox.ini": ("pytest",)}
INI_RUNNER_KEYS = {"setup.cfg": (("options.entry_points", "pytest11"),)}


def _blocks(text: str) -> list[tuple[str | None, list[str]]]:
    """The file as (section name, lines) blocks; the lines before the first header have None."""
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            blocks.append((header.group(1).strip(), [line]))
        else:
            blocks[-1][1].append(line)
    return blocks


def _section_text(text: str | None, section: str) -> str:
    return "".join("".join(lines) for name, lines in _blocks(text or "") if name == section)


def _key_lines(lines: list[str], key: str) -> tuple[list[str], list[str]]:
    """A section's lines split into (the key with its continuation lines, the rest)."""
    mine, rest, inside = [], [], False
    for line in lines:
        match = _KEY.match(line)
        if match:
            inside = match.group(1).strip() == key
        elif line.strip() and not line[0].isspace():
            inside = False  # a header or a comment at column 0 ends a value
        (mine if inside else rest).append(line)
    return mine, rest


def _parsed(text: str | None) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return None
    return parser


def _items(parser: configparser.RawConfigParser, section: str) -> dict[str, str] | None:
    return dict(parser.items(section)) if parser.has_section(section) else None


def restore_ini_settings(kind: str, base: str | None, after: str) -> tuple[str, list[str]] | None:
    """`after` (a setup.cfg or tox.ini) with the runner's sections and keys as in `base`; None when
    they already match. An unreadable file gives the base text back whole."""
    base_cfg, after_cfg = _parsed(base), _parsed(after)
    if after_cfg is None or base_cfg is None:
        return (base or "", ["file"]) if base != after else None
    text, parts = after, []
    for section in INI_RUNNER_SECTIONS.get(kind, ()):
        if _items(after_cfg, section) == _items(base_cfg, section) and after.count(f"[{section}]") <= 1:
            continue
        kept = [(name, lines) for name, lines in _blocks(text) if name != section]
        restored = _section_text(base, section)
        text = "".join("".join(lines) for _, lines in kept)
        if restored:
            text += ("" if text.endswith("\n") or not text else "\n") + restored
        parts.append(f"[{section}]")
    for section, key in INI_RUNNER_KEYS.get(kind, ()):
        mine = (_items(after_cfg, section) or {}).get(key)
        theirs = (_items(base_cfg, section) or {}).get(key)
        if mine == theirs:
            continue
        base_lines = _key_lines(next((lines for name, lines in _blocks(base or "") if name == section), []), key)[0]
        blocks = []
        for name, lines in _blocks(text):
            if name == section:
                _, rest = _key_lines(lines, key)
                lines = rest[:1] + base_lines + rest[1:]
            blocks.append((name, lines))
        if base_lines and not any(name == section for name, _ in blocks):
            blocks.append((section, [f"[{section}]\n", *base_lines]))
        text = "".join("".join(lines) for _, lines in blocks)
        parts.append(f"{key} entry points")
    return (text, parts) if parts else None


def restore_settings(path: str, base: str | None, after: str) -> tuple[str, list[str]] | None:
    """The runner-settings restoration for one mixed file (see the module docstring)."""
    name = posixpath.basename(path)
    if name == "pyproject.toml":
        return restore_toml_settings(base, after)
    if name in INI_RUNNER_SECTIONS:
        return restore_ini_settings(name, base, after)
    if name == "setup.py":
        if "pytest11" in after and "pytest11" not in (base or ""):
            return base or "", ["file"]
        return None
    return None
