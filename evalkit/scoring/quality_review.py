"""What a reviewer sends back that neither ruff nor the hygiene rules see: warnings silenced, code
duplicated, documentation lost, lines rewritten without a change in meaning. Pure: the change's
files before and after in, findings out (each with its file and line, the evidence the
leaderboard shows).

Each rule reads Python's own tree (`ast`) or tokens, so it holds for any layout of the code:
- `suppressions`: an added line whose comment silences a checker (`# noqa`, `# type: ignore`,
  `# pyright: ignore`, `# pylint: disable`, `# nosec`, `# pragma: no cover`);
- `duplicates`: a function the change adds whose body (docstring aside, as the tree says: names,
  values, calls) is another function's in a touched file, ten statements and expressions or more: a dead copy
  (`parse_old`) or a pasted one;
- `docs`: a function or class that had a docstring in the base and has none after, or a new one
  without a docstring where the reference's function of the same name has one or where most of
  the file's functions have one (the file's convention);
- `churn`: statements whose tree is unchanged but whose text (comments aside) is not: re-quoted,
  re-spaced, re-wrapped code, counted in lines; and a touched file the reference leaves alone
  whose whole tree is unchanged (a cosmetic edit of an unrelated file).
Which of these the reference change itself shows is the task's own (`quality.py` subtracts it)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from evalkit.pyparse import parse_python

SUPPRESSION = re.compile(
    r"#.*?\b(noqa\b|type:\s*ignore|pyright:\s*ignore|pylint:\s*disable|nosec\b|pragma:\s*no\s*cover)", re.I
)
MIN_DUPLICATE_NODES = 10  # statements and expressions: a body this size is no accident twice
CONVENTION_SHARE = 0.6  # documented share of a file's functions above which a new one should be too
MIN_DOCUMENTED_STATEMENTS = 3  # functions this short go undocumented in documented code too

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # lines as Python numbers them (not at \f)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Finding:
    """One thing a reviewer would point at: the file, the line (after the change; 0 for a whole
    file), and what it is."""

    path: str
    line: int
    what: str


@dataclass(frozen=True)
class Touched:
    """One touched Python file: its text in the base (None: new) and after (None: deleted), and the
    line numbers (after) the change adds."""

    path: str
    before: str | None
    after: str | None
    added: frozenset[int]


def _tree(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return parse_python(text)
        except (SyntaxError, ValueError):
            return None


def suppressions(files: list[Touched]) -> list[Finding]:
    """Added lines that silence a checker, where the base file had no line of the same text."""
    found = []
    for file in files:
        if file.after is None:
            continue
        old = set((file.before or "").splitlines())
        lines = file.after.splitlines()
        for number in sorted(file.added):
            line = lines[number - 1] if 0 < number <= len(lines) else ""
            if (match := SUPPRESSION.search(line)) and line not in old:
                found.append(Finding(file.path, number, f"silences a checker: `{match.group(0).strip()}`"))
    return found


def undocumented_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The function's statements, its docstring left out."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def _body_dump(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, int] | None:
    body = undocumented_body(function)
    size = sum(isinstance(node, ast.stmt | ast.expr) for part in body for node in ast.walk(part))
    if size < MIN_DUPLICATE_NODES:
        return None
    return ast.dump(ast.Module(body=body, type_ignores=[])), size


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (node for node in ast.walk(tree) if isinstance(node, _FUNCTIONS))


def duplicates(files: list[Touched]) -> list[Finding]:
    """Functions whose `def` line the change adds and whose body is another function's."""
    bodies: dict[str, list[tuple[str, int, str]]] = {}
    trees = [(file, _tree(file.after)) for file in files]
    for file, tree in trees:
        for function in _functions(tree) if tree else ():
            if (dumped := _body_dump(function)) is not None:
                bodies.setdefault(dumped[0], []).append((file.path, function.lineno, function.name))
    found = []
    for file, tree in trees:
        for function in _functions(tree) if tree else ():
            if function.lineno not in file.added or (dumped := _body_dump(function)) is None:
                continue
            place = (file.path, function.lineno)
            added = {(f.path, n) for f in files for n in f.added}
            # the first of a group the change adds is not a copy; every later one, or one of an
            # existing function, is
            others = [o for o in bodies[dumped[0]] if o[:2] != place and (o[:2] not in added or o[:2] < place)]
            if others:
                path, line, name = others[0]
                found.append(Finding(file.path, function.lineno, f"`{function.name}` repeats `{name}` ({path}:{line})"))
    return found


_PRINTS = ("print", "pprint", "pp", "ic", "print_exc", "print_stack")
_STREAMS = ("stdout", "stderr")


def _called(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _print_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (_called(node.func) in _PRINTS or _stream_write(node.func)):
            yield node


def _stream_write(func: ast.expr) -> bool:
    """`sys.stderr.write(...)` or `sys.stdout.write(...)`: a print by another name."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "write"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in _STREAMS
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "sys"
    )


def _enclosing(tree: ast.AST) -> dict[int, str]:
    """Line -> the dotted name of the innermost function or class holding it ("" at module level)."""
    where: dict[int, str] = {}
    for name, node in sorted(_qualified(tree).items(), key=lambda item: item[1].lineno):
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            where[line] = name  # later (inner) definitions overwrite
    return where


def printing_places(files: list[Touched]) -> frozenset[tuple[str, str]]:
    """(path, enclosing name) of every print call in the files after the change (the reference's)."""
    places = set()
    for file in files:
        if (tree := _tree(file.after)) is not None:
            where = _enclosing(tree)
            places |= {(file.path, where.get(call.lineno, "")) for call in _print_calls(tree)}
    return frozenset(places)


def debug_prints(files: list[Touched], reference_printing: frozenset[tuple[str, str]]) -> list[Finding]:
    """Print calls the change adds: `print` (or `sys.stderr.write`, `sys.stdout.write`) in a
    function (or at module level) that printed nothing in the base, `pprint`, `ic` and
    `traceback.print_exc` anywhere; unless the reference prints there too. A command that
    prints is not debugging, a parser that starts to is."""
    found = []
    for file in files:
        after = _tree(file.after)
        if after is None:
            continue
        base = _tree(file.before)
        printed = set()
        if base is not None:
            where = _enclosing(base)
            printed = {where.get(call.lineno, "") for call in _print_calls(base)}
        where = _enclosing(after)
        for call in _print_calls(after):
            place = where.get(call.lineno, "")
            plain = _called(call.func) == "print" or _stream_write(call.func)
            if plain and place in printed:
                continue  # it printed before: a command, a report
            if call.lineno in file.added and (file.path, place) not in reference_printing:
                found.append(Finding(file.path, call.lineno, f"a debug print in `{place or 'the module'}`"))
    return found


def _qualified(tree: ast.AST) -> dict[str, ast.AST]:
    """Every function and class by its dotted name within the module."""
    named: dict[str, ast.AST] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFINITIONS):
                name = f"{prefix}{child.name}"
                named.setdefault(name, child)
                visit(child, name + ".")

    visit(tree, "")
    return named


def _documented(node: ast.AST) -> bool:
    return ast.get_docstring(node, clean=False) is not None  # type: ignore[arg-type]


def _size(node: ast.AST) -> int:
    return sum(isinstance(n, ast.stmt) for n in ast.walk(node)) - 1


def docs(files: list[Touched], reference_documented: frozenset[tuple[str, str]]) -> list[Finding]:
    """Docstrings lost: removed from a definition that had one, or missing from a new one that the
    reference documents (`reference_documented`: (path, name) pairs) or that the file's
    convention asks for."""
    found = []
    for file in files:
        after = _tree(file.after)
        if after is None:
            continue
        base = _qualified(_tree(file.before) or ast.Module(body=[], type_ignores=[]))
        functions = [n for n in base.values() if isinstance(n, _FUNCTIONS) and _size(n) >= MIN_DOCUMENTED_STATEMENTS]
        convention = bool(functions) and sum(map(_documented, functions)) / len(functions) >= CONVENTION_SHARE
        for name, node in _qualified(after).items():
            if _documented(node):
                continue
            old = base.get(name)
            touched = not file.added.isdisjoint(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            if old is not None and _documented(old):
                lost = True
            elif not touched:
                lost = False
            elif (file.path, name) in reference_documented:
                lost = True  # the maintainers' version of it has one
            else:
                lost = old is None and convention and isinstance(node, _FUNCTIONS)
                lost = lost and _size(node) >= MIN_DOCUMENTED_STATEMENTS
            if lost:
                found.append(Finding(file.path, node.lineno, f"`{name}` has no docstring"))
    return found


def documented_names(files: list[Touched]) -> frozenset[tuple[str, str]]:
    """(path, name) of every definition with a docstring after the change (the reference's)."""
    return frozenset(
        (file.path, name)
        for file in files
        if (tree := _tree(file.after)) is not None
        for name, node in _qualified(tree).items()
        if _documented(node)
    )


def _code_text(text: str) -> str | None:
    """The statement's text without its comments, blank lines and indentation: what a re-quoting,
    re-spacing or re-wrapping changes and a re-indenting (into a new block) or a comment does not."""
    lines = text.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, col = token.start
                lines[row - 1] = lines[row - 1][:col]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return "\n".join(stripped for line in lines if (stripped := line.strip()))


def _segment(lines: list[str], node: ast.stmt) -> str:
    """`ast.get_source_segment` over lines split once (it splits the whole source each call)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset or 0
    if first == last:
        return lines[first].encode()[start:end].decode(errors="replace")
    head = lines[first].encode()[start:].decode(errors="replace")
    tail = lines[last].encode()[:end].decode(errors="replace")
    return "".join([head, *lines[first + 1 : last], tail])


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.stmt):
            yield child


def _shapes(tree: ast.AST, interned: dict[tuple, int]) -> dict[int, int]:
    """id(node) -> a number equal for two nodes exactly when their trees are (`ast.dump` without
    positions), built bottom-up through `interned` in one pass: dumping each statement anew costs
    the depth of the file times its size."""
    shapes: dict[int, int] = {}

    def shape(value: object) -> object:
        if isinstance(value, ast.AST):
            return shapes[id(value)]
        if isinstance(value, list):
            return tuple(shape(v) for v in value)
        return (type(value).__name__, value)

    for node in _post_order(tree):
        key = (type(node).__name__, *(shape(getattr(node, name, None)) for name in node._fields))
        shapes[id(node)] = interned.setdefault(key, len(interned))
    return shapes


def _post_order(tree: ast.AST) -> Iterator[ast.AST]:
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in ast.iter_child_nodes(node))


def cosmetic_lines(file: Touched) -> list[Finding]:
    """Statements the change rewrote without changing them: same tree, other tokens. The outermost
    such statement counts (the lines of it the change adds), not each statement inside it."""
    before, after = _tree(file.before), _tree(file.after)
    if before is None or after is None or file.before is None or file.after is None:
        return []
    interned: dict[tuple, int] = {}
    old_shapes, new_shapes = _shapes(before, interned), _shapes(after, interned)
    by_shape: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(before):
        if isinstance(node, ast.stmt):
            by_shape.setdefault(old_shapes[id(node)], []).append(node)
    old_lines, new_lines = _LINES.findall(file.before), _LINES.findall(file.after)
    texts: dict[int, set[str | None]] = {}  # read only for shapes the change touches
    found: list[Finding] = []

    def visit(parent: ast.AST) -> None:
        for node in _statements(parent):
            shape = new_shapes[id(node)]
            if shape not in by_shape:
                visit(node)  # changed: look inside
                continue
            lines = [n for n in range(node.lineno, (node.end_lineno or node.lineno) + 1) if n in file.added]
            if not lines:
                continue
            if shape not in texts:
                texts[shape] = {_code_text(_segment(old_lines, old)) for old in by_shape[shape]}
            if _code_text(_segment(new_lines, node)) in texts[shape]:
                continue  # the same code: moved, re-indented or commented, not rewritten
            found.extend(Finding(file.path, line, "rewritten without a change in meaning") for line in lines)

    visit(after)
    return found


def _line_form(line: str) -> tuple[str, ...] | None:
    """A line's tokens but comments and spacing, each string as its value: two lines of one form
    say the same thing however they are quoted or spaced."""
    kept: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if token.type == tokenize.STRING:
                try:
                    kept.append(repr(ast.literal_eval(token.string)))
                    continue
                except (ValueError, SyntaxError):
                    pass
            kept.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # a line that opens a bracket: its tokens so far
    return tuple(kept) or None


def cosmetic_hunk_lines(file: Touched, hunks: list[tuple[list[str], list[tuple[int, str]]]]) -> list[Finding]:
    """Added lines that say what a line the same hunk removes said, in other quotes or spacing
    (`hunks`: each hunk's removed texts and (line, text) added)."""
    found = []
    for removed, added in hunks:
        raw = Counter(line.strip() for line in removed)
        forms = Counter(form for line in removed if (form := _line_form(line)) is not None)
        for number, line in added:
            if raw[line.strip()]:
                raw[line.strip()] -= 1
                continue
            form = _line_form(line)
            if form is not None and forms[form] > 0:
                forms[form] -= 1
                found.append(Finding(file.path, number, "rewritten without a change in meaning"))
    return found


def unchanged_tree(file: Touched) -> bool:
    """The file's tree is the base's: the change to it is cosmetic (comments, quotes, spacing)."""
    before, after = _tree(file.before), _tree(file.after)
    if before is None or after is None or file.before == file.after:
        return False
    return ast.dump(before) == ast.dump(after)
