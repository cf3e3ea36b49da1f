"""Canary tests: tests that must not pass, planted among the hidden tests of every guarded run.

Code under test runs inside the test process, so no list of tricks can say every way it may
make a test look passed (rewrite the reports, replace the runner's functions or test bodies,
invent the names the tests import). Whatever the way, it cannot tell which tests are meant to
fail unless it can tell the canaries apart, so a canary reported passed is evidence of tampering
that does not depend on the mechanism.

Each canary is a copy of the source text of one of the task's own tests (its decorators, comments
and formatting as written), changed by a few token edits (`canary_edits.py`):
- its name: the original's with one word swapped for another word of that module's test names,
  written nowhere in the module;
- `must_fail` (MUST_FAIL per run, from different tests): its last check turned around, by
  preference a compared value changed to another the module writes about as often, of its type
  and quotes (none a loose `__eq__` may take for it: "ABC" for "abc"), else to a neighbouring
  one (`== 3` to `== 4`, `"abc"` to `"abd"`, `True` to `False`, only letters and digits, never a
  character of an escape), else (tried over every test after those) its operator or method
  (`==` to `!=`, `assertIn` to `assertNotIn`), as a last resort a `not`. Only the last
  statement, so nothing the test cleans up after its checks is skipped. Where the original
  passes the copy fails, so a report in which both passed is tampering; an honest but wrong
  change may fail the original and pass the copy, which is no evidence (`canary_flags`).
- `must_error`: above its first statement, with the body's indentation (or added to an import
  already there), it imports from a package the module imports from a name the package does not
  have: by preference one the tests give a variable of their own and never write otherwise
  (`local_names`: like every name a new test imports, written in the tests and nowhere in the
  code), else one made from a name the module imports with one word changed, written nowhere.
The copy is placed among its siblings (same class, or module level), never next to its original:
on a side chosen at random, after a later definition or before the original with only
definitions between (none binding a name the copy reads as it is made: a decorator's cases).
Whatever fails (no check to turn, no place, a module that no longer compiles cleanly) skips that
canary. The limits of this disguise are measured by `benchmarks/canary_spotting.py`
(docs/design.md, "The canaries' limits").
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from evalkit.pyparse import parse_python
from evalkit.verify import canary_edits as edits
from evalkit.verify.canary_edits import Edit

CanaryKind = Literal["must_fail", "must_error"]
MUST_FAIL = 3  # must-fail canaries per run (one must-error): more chances that one is not spotted
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINITIONS = (*_FUNCTIONS, ast.ClassDef)
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Canary:
    """A planted test: its id (a parametrized copy's ids are this plus `[...]`), what it must do,
    and the test it copies."""

    test_id: str
    kind: CanaryKind
    copied_from: str

    def owns(self, test_id: str) -> bool:
        """Whether `test_id` is this canary's: its module and its name, whatever class path the
        report gives (a test inherited by another class is reported under that class)."""
        path, names = split_id(test_id)
        mine, own = split_id(self.test_id)
        return path == mine and bool(names) and names[-1] == own[-1]

    def original(self, test_id: str) -> str:
        """The id of the test the canary copies, for one of the canary's ids (same class path and
        parameters)."""
        head, _, tail = test_id.rpartition("::")
        name, bracket, params = tail.partition("[")
        return f"{head}::{self.copied_from.rsplit('::', 1)[1]}{bracket}{params}"


def split_id(test_id: str) -> tuple[str, list[str]]:
    """`tests/t.py::Class::test_x[1]` -> (`tests/t.py`, [`Class`, `test_x`])."""
    path, *names = test_id.split("::")
    if names:
        names[-1] = names[-1].split("[", 1)[0]
    return path, names


@dataclass(frozen=True)
class _Found:
    """A test's definition (the last of that name, as Python keeps) and the body it is one of."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    siblings: list[ast.stmt]
    index: int


class ModuleReading:
    """One test module's source, parsed and read once for every canary tried in it (a task tries a
    dozen, and a module of a thousand tests costs a tenth of a second per walk)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = parse_python(source)  # raises SyntaxError or ValueError: no canary there
        self.lines = source.splitlines(keepends=True)
        if self.lines and not self.lines[-1].endswith("\n"):
            self.lines[-1] += "\n"
        self._project_names: dict[frozenset[str], dict[str, list[str]]] = {}

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the module, walked once (each walk of a large module is its own cost)."""
        return list(ast.walk(self.tree))

    @cached_property
    def test_words(self) -> list[str]:
        return _test_words(self.tree, self.nodes)

    @cached_property
    def used_words(self) -> list[str]:
        return sorted({w.lower() for n in self.nodes if isinstance(n, ast.Name) for w in edits.words(n.id)})

    @cached_property
    def literals(self) -> edits.LiteralPool:
        return edits.module_literals(self.lines, self.tree, self.nodes)

    @cached_property
    def warnings(self) -> list[str] | None:
        return _compile_warnings(self.source, "<test module>")

    def project_names(self, packages: set[str]) -> dict[str, list[str]]:
        key = frozenset(packages)
        if key not in self._project_names:
            self._project_names[key] = _project_names(self.tree, packages, self.nodes)
        return self._project_names[key]


def _find(tree: ast.Module, names: list[str]) -> _Found | None:
    body: list[ast.stmt] = tree.body
    for i, name in enumerate(names):
        last = i == len(names) - 1
        kinds = _FUNCTIONS if last else (ast.ClassDef,)
        found = [n for n, node in enumerate(body) if isinstance(node, kinds) and node.name == name]
        if not found:
            return None
        if last:
            return _Found(body[found[-1]], body, found[-1])  # type: ignore[arg-type]
        body = body[found[-1]].body  # type: ignore[attr-defined]
    return None


def _test_words(tree: ast.Module, nodes: Sequence[ast.AST] | None = None) -> list[str]:
    names = {
        n.name
        for n in (ast.walk(tree) if nodes is None else nodes)
        if isinstance(n, _FUNCTIONS) and n.name.lower().startswith("test")
    }
    found = sorted({w for name in names for w in edits.words(name)[1:]})
    return [w for w in found if w.lower() != "test"]


def _canary_name(original: str, reading: ModuleReading, rng: random.Random, taken: set[str]) -> str | None:
    """A sibling-like name written nowhere in the module (no fixture, no parameter, no other
    test of that name) and not given to another canary: a word of the module's test names
    swapped in, else (a module of one test) a word of the names it uses."""
    used = reading.used_words
    for pool in (reading.test_words, [w for w in used if len(w) > 2 and w.isalpha()]):
        for name in edits.sibling_names(original, pool, rng):
            if name not in taken and not re.search(rf"\b{re.escape(name)}\b", reading.source):
                return name
    return None


def _checked_statement(body: list[ast.stmt]) -> ast.stmt | None:
    """The test's last statement, or the last of a `with` block it ends with (its exit still runs)."""
    statement = body[-1] if body else None
    while isinstance(statement, ast.With | ast.AsyncWith) and statement.body:
        statement = statement.body[-1]
    return statement


def _must_fail_edits(
    lines: list[str], node: ast.AST, rng: random.Random, strict: int, pool: edits.LiteralPool
) -> list[Edit]:
    """The edits turning the last check around: a compared value changed (`strict` 2: that only),
    else its operator flipped (1), else a `not` (0). A flipped operator or an added `not` is a
    tell (the copy is the one with `!=`, the one with `not`), a value from the module is none.
    Only the last: the copy then does all the original does before failing, and no clean-up after
    the check is skipped (sqlparse's keyword tests reset a global lexer after their checks: a copy
    failing before the reset broke every later test of the module)."""
    statement = _checked_statement(node.body)  # type: ignore[attr-defined]
    if statement is None:
        return []
    changed = edits.value_edits(lines, statement, rng, pool)
    if changed or strict >= 2:
        return changed
    return edits.flip_edits(lines, statement) or ([] if strict else edits.not_edits(lines, statement))


def _project_names(
    tree: ast.Module, packages: set[str], nodes: Sequence[ast.AST] | None = None
) -> dict[str, list[str]]:
    """The modules of the repository's own packages the test module imports, each with the names
    it is seen to take from them (imported by name, or read as attributes of the module)."""
    found: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}
    nodes = list(ast.walk(tree)) if nodes is None else nodes
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in packages:
                found.setdefault(node.module, set()).update(a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in packages:
                    aliases[alias.asname or alias.name] = alias.name
    for node in nodes:
        if isinstance(node, ast.Attribute) and (dotted := _dotted(node.value)) in aliases:
            found.setdefault(aliases[dotted], set()).add(node.attr)
    return {m: sorted(n for n in names if not n.startswith("__")) for m, names in found.items() if names}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (head := _dotted(node.value)) is not None:
        return f"{head}.{node.attr}"
    return None


def _body_start(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    """The first statement after the docstring, when it starts a line of its own."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if not body or body[0].lineno <= node.lineno:
        return None
    line, col = edits.start(lines, body[0])
    return body[0] if not lines[line - 1][:col].strip() else None


def read_module(source: str) -> ModuleReading | None:
    """The source read, None when it does not parse."""
    try:
        return ModuleReading(source)
    except (SyntaxError, ValueError):
        return None


def read_modules(sources: Iterable[str]) -> dict[str, ModuleReading | None]:
    """Each source read (None: it does not parse), by its text: for `local_names` and `plant`."""
    return {source: read_module(source) for source in sources}


def local_names(sources: Iterable[str] | dict[str, ModuleReading | None]) -> list[str]:
    """Names the test modules give their own variables and parameters and never write otherwise
    (not as an attribute, an import, a definition or a word of a string, so no test can set them
    on a package by name): the names a must-error canary may import from a package that does not
    have them, written in the tests like every name a new test imports, not made up. Longer,
    several-word names first (they read like a package's own), the order otherwise the modules'."""
    seen: dict[str, None] = {}
    other: set[str] = set()
    readings = sources if isinstance(sources, dict) else read_modules(sources)
    for reading in readings.values():
        if reading is None:
            continue
        tree = reading.tree
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]  # one walk, knowing what is inside a function
        while stack:
            node, inside = stack.pop()
            stack.extend(
                (child, inside or isinstance(node, _FUNCTIONS)) for child in reversed(list(ast.iter_child_nodes(node)))
            )
            if isinstance(node, _FUNCTIONS):
                args = node.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                    if arg is not None:
                        seen.setdefault(arg.arg)
            elif inside and isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                seen.setdefault(node.id)
            if isinstance(node, ast.Attribute):
                other.add(node.attr)
            elif isinstance(node, ast.alias):
                other.update((node.asname or node.name).split("."))
                other.update(node.name.split("."))
            elif isinstance(node, _DEFINITIONS):
                other.add(node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                other.update(re.findall(r"\w+", node.value))
            elif isinstance(node, ast.keyword) and node.arg:
                other.add(node.arg)
    kept = [
        n
        for n in seen
        if n not in other
        and len(n) > 3
        and not n.startswith("_")
        and not n.lower().startswith("test")
        and not keyword.iskeyword(n)
        and n not in _BUILTINS
        and n not in ("self", "cls")
    ]
    return sorted(kept, key=lambda n: -len(edits.words(n)))


def _must_error_edits(
    reading: ModuleReading,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    rng: random.Random,
    packages: set[str],
    exists: Callable[[str], bool],
    borrowed: Sequence[str],
    tested: frozenset[str],
) -> list[Edit]:
    lines = reading.lines
    first = _body_start(lines, node)
    modules = reading.project_names(packages)
    if first is None or not modules:
        return []
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }
    # the module the test itself takes names from, by preference
    order = sorted(modules, key=lambda m: (not set(modules[m]) & used, rng.random()))
    known = {name for names in modules.values() for name in names}
    pool = sorted({w.lower() for name in known for w in edits.words(name) if len(w) > 2})
    pool = pool + [w for w in reading.test_words if len(w) > 2 and w.lower() not in pool]

    def written(name: str) -> bool:  # a made-up name: written nowhere at all
        return name in known or name in used or name in tested or exists(name)

    several = [n for n in borrowed if len(edits.words(n)) > 1] or list(borrowed)
    for module in order[:2]:
        name = next((n for n in rng.sample(several, min(len(several), 12)) if n not in used and not exists(n)), None)
        name = name or edits.missing_name(modules[module], pool or ["value"], rng, written)
        if name is None:
            continue
        if isinstance(first, ast.ImportFrom) and first.module == module and first.level == 0:
            line, col = edits.end(lines, first)
            if first.lineno == first.end_lineno:
                closing = lines[line - 1][:col].endswith(")")
                return [Edit(line, col - 1 if closing else col, 0, f", {name}")]
        line, col = edits.start(lines, first)
        return [Edit(line, 0, 0, f"{lines[line - 1][:col]}from {module} import {name}\n")]
    return []


def _name_edit(lines: list[str], node: ast.AST, name: str) -> Edit | None:
    text = lines[node.lineno - 1]  # type: ignore[attr-defined]
    found = re.search(rf"\bdef\s+({re.escape(node.name)})\b", text)  # type: ignore[attr-defined]
    return Edit(node.lineno, found.start(1), len(node.name), name) if found else None  # type: ignore[attr-defined]


def _ends_its_line(lines: list[str], node: ast.AST) -> bool:
    line, col = edits.end(lines, node)
    rest = lines[line - 1][col:].strip()
    return not rest or rest.startswith("#")


def _gap(lines: list[str], found: _Found) -> int:
    """Blank lines between the original and its neighbours, as the module writes them."""
    following = found.siblings[found.index + 1] if found.index + 1 < len(found.siblings) else None
    if following is not None:
        top = min([following.lineno, *(d.lineno for d in getattr(following, "decorator_list", []))])
        count = 0
        while top - 2 - count > found.node.end_lineno - 1 and not lines[top - 2 - count].strip():
            count += 1
        if count:
            return count
    return 1 if found.node.col_offset else 2


def _made_with(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a definition reads as it is made: its decorators, defaults and annotations."""
    args = node.args
    parts = [
        *node.decorator_list,
        *args.defaults,
        *(d for d in args.kw_defaults if d is not None),
        node.returns,
        *(a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a),
    ]
    return {n.id for part in parts if part is not None for n in ast.walk(part) if isinstance(n, ast.Name)}


def _places(lines: list[str], found: _Found, strict: int, rng: random.Random) -> list[int]:
    """Indices of the siblings the copy may follow, one side of the original chosen at random
    (so "the later of a near-identical pair" is a coin toss): after a later definition, or before
    the original with only definitions between (none of them binding a name the copy reads as it
    is made), never next to it unless not strict (then right after it)."""
    siblings, index = found.siblings, found.index
    after = [j for j in range(index + 1 if strict else index, len(siblings)) if isinstance(siblings[j], _DEFINITIONS)]
    before, needs = [], _made_with(found.node)
    for k in range(index - 2, -1, -1):
        between = siblings[k + 1]
        if not isinstance(between, _DEFINITIONS) or between.name in needs:
            break
        before.append(k)
    sides = [kept for side in (after, before) if (kept := [j for j in side if _ends_its_line(lines, siblings[j])])]
    return rng.choice(sides) if sides else []


def _compile_warnings(text: str, path: str) -> list[str] | None:
    """The warnings compiling `text` gives (an invalid escape), None when it does not compile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            compile(text, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
    return sorted(str(w.message) for w in caught)


def _compiles_as_cleanly(reading: ModuleReading, after: str, path: str) -> bool:
    """Whether `after` compiles with no warning the module as read did not give."""
    old, new = reading.warnings, _compile_warnings(after, path)
    return new is not None and (old is None or len(new) <= len(old))


def plant_one(
    source: str,
    test_id: str,
    kind: CanaryKind,
    rng: random.Random,
    packages: set[str],
    exists: Callable[[str], bool],
    taken: set[str],
    strict: int = 0,
    borrowed: Sequence[str] = (),
    tested: frozenset[str] = frozenset(),
    reading: ModuleReading | None = None,
    readings: dict[str, ModuleReading | None] | None = None,
) -> tuple[str, Canary] | None:
    """`source` (the module of `test_id`) with one canary of `kind` copied from that test, or None
    when that test cannot give one. `strict`: never next to the original, only symmetric edits (1),
    only a changed value (2). `reading`: the module as read already (`ModuleReading(source)`);
    `readings`: where the planted module's reading is kept, by its text."""
    try:
        reading = reading if reading is not None and reading.source == source else ModuleReading(source)
    except (SyntaxError, ValueError):
        return None
    path, names = split_id(test_id)
    found = _find(reading.tree, names) if names else None  # type: ignore[arg-type]
    if found is None:
        return None
    lines = reading.lines
    node = found.node
    top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    if lines[top - 1][: edits.char_col(lines, node.lineno, node.col_offset)].strip() or not _ends_its_line(lines, node):
        return None
    name = _canary_name(node.name, reading, rng, taken)
    renamed = _name_edit(lines, node, name) if name else None
    if kind == "must_fail":
        changes = _must_fail_edits(lines, node, rng, strict, reading.literals)
    else:
        changes = _must_error_edits(reading, node, rng, packages, exists, borrowed, tested)  # type: ignore[arg-type]
    places = _places(lines, found, strict, rng)
    if renamed is None or not changes or not places:
        return None
    shifted = [Edit(e.line - top + 1, e.col, e.length, e.text) for e in [renamed, *changes]]
    copy = edits.apply(lines[top - 1 : node.end_lineno], shifted)
    after = found.siblings[rng.choice(places)].end_lineno
    planted = "".join([*lines[:after], *["\n"] * _gap(lines, found), *copy, *lines[after:]])
    if (
        not _compiles_as_cleanly(reading, planted, path)
        or (after_reading := _still_found(planted, names, name)) is None
    ):
        return None
    if readings is not None:  # the next canary planted in this module starts from this reading
        readings[planted] = after_reading
    canary_id = "::".join([path, *names[:-1], name])
    return planted, Canary(canary_id, kind, test_id.split("[", 1)[0])


def _still_found(planted: str, names: list[str], name: str) -> ModuleReading | None:
    """The planted module, read, when it still defines the original and now the canary, in their
    class; None when it does not."""
    reading = read_module(planted)
    if reading is None:
        return None
    tree = reading.tree
    found = _find(tree, names) is not None and _find(tree, [*names[:-1], name]) is not None  # type: ignore[arg-type]
    return reading if found else None


def plant(
    sources: dict[str, str],
    fail_to_pass: Iterable[str],
    pass_to_pass: Iterable[str],
    rng: random.Random,
    packages: set[str],
    exists: Callable[[str], bool],
    borrowed: Sequence[str] | None = None,
    readings: dict[str, ModuleReading | None] | None = None,
) -> tuple[dict[str, str], list[Canary]]:
    """One must-error canary (from PASS_TO_PASS tests first) and MUST_FAIL must-fail canaries
    (FAIL_TO_PASS first), each from a different test chosen at random (tests of one case before
    parametrized ones: a copy runs every case, and each failing case costs a failure report), strict
    placings and edits tried over every test before looser ones (a changed value before a flipped
    operator before a `not`); the changed sources and the canaries. `exists(name)`: whether the
    repository writes `name` anywhere but in `sources` (its code, its other files); `borrowed`: the
    names a must-error canary may borrow (`local_names(sources)` when not given: a caller that has
    looked them up already passes those); `readings`: the modules read already, by their text
    (`read_modules`)."""
    changed: dict[str, str] = {}
    canaries: list[Canary] = []
    f2p, p2p = sorted(set(fail_to_pass)), sorted(set(pass_to_pass))
    cases = Counter(t.split("[", 1)[0] for t in [*f2p, *p2p])
    for tests in (f2p, p2p):
        rng.shuffle(tests)
        tests.sort(key=lambda t: cases[t.split("[", 1)[0]] > 1)  # a copy runs all its cases: one first
    # the must-error one first: the must-fail ones may take every test of a small task
    wanted: list[tuple[CanaryKind, list[str], int]] = [
        ("must_error", p2p + f2p, 1),
        ("must_fail", f2p + p2p, MUST_FAIL),
    ]
    copied: set[str] = set()
    taken: set[str] = set()
    borrowed = local_names(sources.values()) if borrowed is None else borrowed
    tested = frozenset(w for text in sources.values() for w in re.findall(r"\w+", text))
    readings = {} if readings is None else readings  # by source text: each module read once

    def read(source: str) -> ModuleReading | None:
        if source not in readings:
            readings[source] = read_module(source)
        return readings[source]

    for kind, order, count in wanted:
        made = 0
        for strict in (2, 1, 0) if kind == "must_fail" else (1, 0):
            for test_id in order:
                original = test_id.split("[", 1)[0]
                path, _ = split_id(test_id)
                source = changed.get(path, sources.get(path))
                if made >= count or original in copied or source is None or (reading := read(source)) is None:
                    continue
                try:
                    planted = plant_one(
                        source, test_id, kind, rng, packages, exists, taken, strict, borrowed, tested, reading, readings
                    )
                except Exception:  # noqa: BLE001 - a canary not planted is never a reason to fail a run
                    planted = None
                if planted is not None:
                    changed[path], canary = planted
                    canaries.append(canary)
                    copied.add(original)
                    taken.add(canary.test_id.rsplit("::", 1)[-1])
                    made += 1
    return changed, canaries
