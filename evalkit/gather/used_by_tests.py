"""What a commit's changed tests use: the identifiers and strings in the test functions the test part
adds or changes (the FAIL_TO_PASS candidates) and in the test modules' imports. Pure, stdlib `ast`.

Names the tests define themselves (helpers, fixtures, locals, parameters), builtins and private
names are left out: they are nothing the change under test has to provide."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from evalkit.pyparse import parse_python

_REGEX_META = re.compile(r"[.*+?^$()\[\]{}|]")
_MIN_MESSAGE = 4  # a shorter literal is too common to say anything


@dataclass
class UsedByTests:
    names: set[str] = field(default_factory=set)  # identifiers: attributes, calls, imports, keywords
    keywords: set[str] = field(default_factory=set)  # of those, the keyword arguments of calls
    options: set[str] = field(default_factory=set)  # string constants such as "--json"
    messages: set[str] = field(default_factory=set)  # literals matched with match= or `"..." in ...`


def _changed_nodes(before: str | None, after: str) -> list[ast.AST]:
    """The top-level statements of `after` that are new or differ from `before` (a test class counts
    by its methods), plus every import: the code the changed tests run."""
    tree = parse_python(after)
    old: dict[str, str] = {}
    if before:
        try:
            for node in parse_python(before).body:
                for item in _units(node):
                    old[_unit_name(item)] = ast.dump(item)
        except SyntaxError:
            old = {}
    nodes: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            nodes.append(node)
            continue
        for item in _units(node):
            if old.get(_unit_name(item)) != ast.dump(item):
                nodes.append(item)
    return nodes


def _units(node: ast.stmt) -> list[ast.stmt]:
    if isinstance(node, ast.ClassDef):
        return [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)] or [node]
    return [node]


def _unit_name(node: ast.stmt) -> str:
    return getattr(node, "name", "") or ast.dump(node)[:200]


def _literal(pattern: str, is_regex: bool) -> str:
    """The longest plain-text run of a `match=` pattern (the whole string for `in` checks)."""
    if not is_regex:
        return pattern
    text = []
    for run in re.split(r"(\\.)", pattern):  # an escaped character is literal, the rest may be syntax
        if run.startswith("\\"):
            text.append("\x00" if run[1].isalnum() else run[1])  # \d, \s...: a class, not text
        else:
            text.append(_REGEX_META.sub("\x00", run))
    return max("".join(text).split("\x00"), key=len, default="")


def _defined(nodes: list[ast.AST]) -> set[str]:
    found: set[str] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.arg):
                found.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
    return found


def _collect(nodes: list[ast.AST], usage: UsedByTests) -> None:
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Attribute):
                usage.names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                usage.names.add(node.id)
            elif isinstance(node, ast.keyword) and node.arg:
                usage.names.add(node.arg)
                usage.keywords.add(node.arg)
                if node.arg == "match" and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    usage.messages.add(_literal(node.value.value, is_regex=True))
            elif isinstance(node, ast.ImportFrom):
                usage.names.update(a.name for a in node.names if a.name != "*")
                usage.names.update((node.module or "").split("."))
            elif isinstance(node, ast.Import):
                usage.names.update(part for a in node.names for part in a.name.split("."))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("--"):
                usage.options.add(node.value.split("=", 1)[0])
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
                left = node.left
                if isinstance(left, ast.Constant) and isinstance(left.value, str):
                    usage.messages.add(left.value)


def used_by_tests(modules: dict[str, tuple[str | None, str | None]]) -> UsedByTests:
    """What the changed tests use, from {path: (text before, text after)} of the touched test
    modules; a module that does not parse is left out."""
    usage = UsedByTests()
    local: set[str] = set()
    for before, after in modules.values():
        if not after:
            continue
        try:
            nodes = _changed_nodes(before, after)
        except SyntaxError:
            continue
        _collect(nodes, usage)
        local |= _defined(nodes)
    usage.names = {
        n for n in usage.names if not n.startswith("_") and n not in local and not hasattr(builtins, n) and n != "self"
    }
    usage.keywords &= usage.names
    usage.messages = {m.strip() for m in usage.messages if len(m.strip()) >= _MIN_MESSAGE}
    return usage
