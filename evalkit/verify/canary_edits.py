"""The token edits that make a canary out of a copy of a test's source text.

Every edit is a change to the original's own characters (one name, one value, one operator, one
import), never a rewrite: the copy keeps its neighbours' formatting, and differs from its original
in ways the same module's tests differ from each other. Positions are the module's (1-based lines,
0-based character columns); `ast` gives byte columns, converted here.
"""

from __future__ import annotations

import ast
import keyword
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# An `assertX(a, b)` whose first two arguments must be equal: a changed value makes it fail.
EQUAL_METHODS = {
    "assertEqual",
    "assertEquals",
    "assertListEqual",
    "assertTupleEqual",
    "assertDictEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertCountEqual",
    "assertIs",
}
FLIPPED_METHODS = {
    "assertEqual": "assertNotEqual",
    "assertNotEqual": "assertEqual",
    "assertTrue": "assertFalse",
    "assertFalse": "assertTrue",
    "assertIn": "assertNotIn",
    "assertNotIn": "assertIn",
    "assertIs": "assertIsNot",
    "assertIsNot": "assertIs",
    "assertIsNone": "assertIsNotNone",
    "assertIsNotNone": "assertIsNone",
}
FLIPPED_OPERATORS = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.Lt: ">=",
    ast.GtE: "<",
    ast.Gt: "<=",
    ast.LtE: ">",
}
_OPERATOR_TEXT = re.compile(r"not\s+in|is\s+not|==|!=|<=|>=|<|>|in|is")
_WORD = re.compile(r"\w+")
_STRING = re.compile(r"(?P<prefix>[rRbBuU]{0,2})(?P<quote>'''|\"\"\"|'|\")(?P<body>.*)(?P=quote)$", re.S)


@dataclass(frozen=True)
class Edit:
    """Replace `length` characters at (`line`, `col`) of the module by `text` (length 0: insert)."""

    line: int
    col: int
    length: int
    text: str


def char_col(lines: list[str], line: int, byte_col: int) -> int:
    """`ast`'s UTF-8 byte column as a character column of `lines[line - 1]`."""
    return len(lines[line - 1].encode()[:byte_col].decode(errors="ignore"))


def start(lines: list[str], node: ast.AST) -> tuple[int, int]:
    return node.lineno, char_col(lines, node.lineno, node.col_offset)  # type: ignore[attr-defined]


def end(lines: list[str], node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, char_col(lines, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def segment(lines: list[str], node: ast.AST) -> str:
    (l1, c1), (l2, c2) = start(lines, node), end(lines, node)
    if l1 == l2:
        return lines[l1 - 1][c1:c2]
    return lines[l1 - 1][c1:] + "".join(lines[l1 : l2 - 1]) + lines[l2 - 1][:c2]


def apply(lines: list[str], edits: list[Edit]) -> list[str]:
    """`lines` (with their ends) with `edits` made, last first so earlier positions hold."""
    out = list(lines)
    for edit in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        text = out[edit.line - 1]
        out[edit.line - 1] = text[: edit.col] + edit.text + text[edit.col + edit.length :]
    return "".join(out).splitlines(keepends=True)


def _neighbour(char: str, rng: random.Random) -> str:
    """A character next to `char` in its own range (a-z, A-Z, 0-9)."""
    for low, high in (("a", "z"), ("A", "Z"), ("0", "9")):
        if low <= char <= high:
            options = [c for c in (chr(ord(char) - 1), chr(ord(char) + 1)) if low <= c <= high]
            return rng.choice(options)
    raise ValueError(char)


def _string_positions(text: str) -> list[int]:
    """Offsets in a one-token string literal's text of the characters that may change: ASCII
    letters and digits of its body, none of them part of an escape (`\\n` must never become
    `\\j`, `\\x41` never `\\x4G`), in raw strings none right after a backslash either."""
    match = _STRING.match(text)
    if match is None:
        return []
    first, body = match.start("body"), match.group("body")
    raw = "r" in match.group("prefix").lower()
    found, i = [], 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            follow = body[i + 1 : i + 2]
            if raw:
                i += 2
            elif follow == "x":
                i += 4
            elif follow in ("u", "U"):
                i += 6 if follow == "u" else 10
            elif follow == "N":
                close = body.find("}", i)
                i = close + 1 if close > 0 else len(body)
            elif follow.isdigit():
                i += 2
                while i < len(body) and body[i].isdigit():
                    i += 1
            else:
                i += 2
            continue
        if char.isascii() and char.isalnum():
            found.append(first + i)
        i += 1
    return found


@dataclass(frozen=True)
class LiteralPool:
    """The one-line literals (numbers, strings, bytes) a module writes, as written, each once with
    its value, and how often the module writes each word: read once per module, for every canary
    tried in it."""

    texts: tuple[str, ...] = ()
    values: tuple[object, ...] = ()
    counts: Counter = field(default_factory=Counter)

    def __bool__(self) -> bool:
        return bool(self.texts)


def module_literals(lines: list[str], tree: ast.AST, nodes: Sequence[ast.AST] | None = None) -> LiteralPool:
    """The values a canary's changed check may take (`LiteralPool`), so the copy compares with a
    value its neighbours use rather than one made up (a made-up value is rarer in the repository
    than the original's)."""
    nodes = list(ast.walk(tree)) if nodes is None else nodes  # `nodes`: the tree's, walked already
    docstrings = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    found: dict[str, object] = {}  # as written -> its value (the node's own: no parse per literal)
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and id(node) not in docstrings
            and isinstance(node.value, int | float | str | bytes)
            and not isinstance(node.value, bool)
            and node.lineno == node.end_lineno
        ):
            text = segment(lines, node)
            if "\n" not in text and len(text) <= 80:
                found.setdefault(text, node.value)
    texts, values = tuple(found), tuple(found.values())
    return LiteralPool(texts, values, Counter(_WORD.findall("".join(lines))))


def _differs_plainly(value: object, other: object) -> bool:
    """Whether `other` is a value of `value`'s type that no loose equality takes for it (a
    case-insensitive or space-blind `__eq__` of the code under test: "A" for "a", "1 " for "1")."""
    if type(other) is not type(value) or other == value:
        return False
    if isinstance(value, str | bytes):
        return value.lower().strip() != other.lower().strip()  # type: ignore[union-attr]
    return True


def _commonness(text: str, counts: Counter) -> int:
    """How often the module writes the rarest word of a literal (a literal of no word: never)."""
    return min((counts[w] for w in _WORD.findall(text)), default=0)


def _pool_edit(lines: list[str], node: ast.Constant, text: str, pool: LiteralPool, rng: random.Random) -> Edit | None:
    """An edit replacing the literal `node` (written `text`) by another literal of the module, of
    the same type and, for a string, the same prefix and quotes: one of the few the module writes
    about as often as the original (counting the copy's), so which of the two tests compares with
    the rarer value says nothing about which is the copy."""
    match = _STRING.match(text)
    shape = (match.group("prefix").lower(), match.group("quote")) if match else None
    options = []
    for option, other in zip(pool.texts, pool.values, strict=True):
        other_match = _STRING.match(option)
        if (other_match and (other_match.group("prefix").lower(), other_match.group("quote"))) == shape and (
            _differs_plainly(node.value, other)
        ):
            options.append(option)
    if not options:
        return None
    counts = pool.counts
    target = _commonness(text, counts)
    rng.shuffle(options)
    options.sort(key=lambda option: abs(math.log1p(_commonness(option, counts) + 1) - math.log1p(target)))
    line, col = start(lines, node)
    return Edit(line, col, len(text), rng.choice(options[:3]))


def _value_edit(
    lines: list[str], node: ast.Constant, rng: random.Random, pool: LiteralPool | None = None
) -> Edit | None:
    """An edit turning the literal `node` into another value of its type: by preference one the
    module writes elsewhere (`pool`), else a neighbouring one (3 -> 4, "abc" -> "abd", True ->
    False), checked by reading the edited literal back."""
    text = segment(lines, node)
    value = node.value
    if not isinstance(value, bool) and pool and (edit := _pool_edit(lines, node, text, pool, rng)) is not None:
        return edit
    if isinstance(value, bool):
        options = [(0, len(text), str(not value))]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        options = [(len(text) - 1, 1, _neighbour(text[-1], rng))] if text[-1:].isdigit() else []
    elif isinstance(value, str | bytes) and "\n" not in text:
        options = [(i, 1, _neighbour(text[i], rng)) for i in _string_positions(text)]
    else:
        options = []
    rng.shuffle(options)
    for offset, length, replacement in options:
        changed = text[:offset] + replacement + text[offset + length :]
        try:
            other = ast.literal_eval(changed)
        except (ValueError, SyntaxError):
            continue
        if _differs_plainly(value, other):
            line, col = start(lines, node)
            return Edit(line, col + offset, length, replacement)
    return None


def _literals(node: ast.AST) -> list[ast.Constant]:
    """The literals of an expected value whose change changes what it equals: the value itself,
    the items of a list or tuple, a dict's values (not set items or dict keys: two may merge)."""
    if isinstance(node, ast.Constant) and node.value is not None and node.value is not Ellipsis:
        return [node]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _literals(node.operand)
    items: list[ast.AST] = []
    if isinstance(node, ast.List | ast.Tuple):
        items = list(node.elts)
    elif isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        items = list(node.values)
    return [literal for item in items for literal in _literals(item)]


def _self_call(statement: ast.stmt) -> ast.Call | None:
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return statement.value
    return None


def value_edits(
    lines: list[str], statement: ast.stmt, rng: random.Random, pool: LiteralPool | None = None
) -> list[Edit]:
    """Edits (one wanted) changing a value a passing check compares for equality (to one of
    `pool`, the module's literals, by preference)."""
    compared: list[ast.AST] = []
    if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare):
        test = statement.test
        if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            compared = [test.left, test.comparators[0]]
        elif len(test.ops) == 1 and isinstance(test.ops[0], ast.Is | ast.IsNot):
            compared = [n for n in (test.left, test.comparators[0]) if isinstance(getattr(n, "value", None), bool)]
    elif (call := _self_call(statement)) is not None and call.func.attr in EQUAL_METHODS:  # type: ignore[attr-defined]
        compared = call.args[:2]
        if call.func.attr == "assertIs":  # type: ignore[attr-defined]
            compared = [n for n in compared if isinstance(getattr(n, "value", None), bool)]
    literals = [literal for node in compared for literal in _literals(node)]
    rng.shuffle(literals)
    for literal in literals:
        if (edit := _value_edit(lines, literal, rng, pool)) is not None:
            return [edit]
    return []


def flip_edits(lines: list[str], statement: ast.stmt) -> list[Edit]:
    """Edits turning a check's operator or method around (`==` to `!=`, `in` to `not in`,
    `assertTrue` to `assertFalse`)."""
    if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare):
        test = statement.test
        flipped = FLIPPED_OPERATORS.get(type(test.ops[0])) if len(test.ops) == 1 else None
        (l1, c1), (l2, c2) = end(lines, test.left), start(lines, test.comparators[0])
        if flipped is None or l1 != l2:
            return []
        between = lines[l1 - 1][c1:c2]
        found = _OPERATOR_TEXT.search(between)
        return [Edit(l1, c1 + found.start(), found.end() - found.start(), flipped)] if found else []
    call = _self_call(statement)
    if call is not None and (flipped := FLIPPED_METHODS.get(call.func.attr)) is not None:  # type: ignore[attr-defined]
        line, col = end(lines, call.func)
        return [Edit(line, col - len(call.func.attr), len(call.func.attr), flipped)]  # type: ignore[attr-defined]
    return []


def not_edits(lines: list[str], statement: ast.stmt) -> list[Edit]:
    """The last resort: `assert c` as `assert not c` (or a `not` taken away)."""
    if not isinstance(statement, ast.Assert):
        return []
    test = statement.test
    line, col = start(lines, test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner_line, inner_col = start(lines, test.operand)
        return [Edit(line, col, inner_col - col, "")] if inner_line == line else []
    if isinstance(test, ast.Name | ast.Call | ast.Attribute | ast.Subscript):
        return [Edit(line, col, 0, "not ")]
    return []


def words(name: str) -> list[str]:
    """`test_read_Config` -> [test, read, Config]; `testReadConfig` -> [test, Read, Config]."""
    return [w for w in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name) if w]


def _join(parts: list[str], like: str) -> str:
    """`parts` joined as `like` is: snake_case, or CamelCase when it has capitals and no `_`."""
    bare = like.lstrip("_")
    camel = "_" not in bare and any(c.isupper() for c in bare[1:])
    return like[: len(like) - len(bare)] + ("".join(parts) if camel else "_".join(parts))


def sibling_names(name: str, pool: list[str], rng: random.Random) -> list[str]:
    """Names made from `name` with one word swapped for a word of `pool` (then, for a name of
    one word, one word added), in random order: how sibling tests and functions are named."""
    parts = words(name)
    made: list[str] = []
    first = 1  # the first word (`test`) stays, even alone (`def test`): the runner collects by it
    present = {p.lower() for p in parts}
    for i in range(first, len(parts)):
        for word in pool:
            if word.lower() in present:
                continue
            word = word.capitalize() if parts[i][:1].isupper() else word.lower() if parts[i].islower() else word
            made.append(_join([*parts[:i], word, *parts[i + 1 :]], name))
    if len(parts) <= 2:
        for word in (w for w in pool if w.lower() not in present):
            made.append(_join([*parts, word.lower() if parts[-1].islower() else word.capitalize()], name))
    rng.shuffle(made)
    return [m for m in dict.fromkeys(made) if m.isidentifier() and not keyword.iskeyword(m) and m != name]


def missing_name(
    bases: list[str], pool: list[str], rng: random.Random, exists: Callable[[str], bool], tries: int = 12
) -> str | None:
    """A name that reads like one of `bases` (the names a package is seen to export) with a word
    changed, and that `exists` says is written nowhere."""
    candidates = [n for base in rng.sample(bases, len(bases)) for n in sibling_names(base, pool, rng)[:4]]
    for name in dict.fromkeys(candidates[: tries * 2]):
        if tries <= 0:
            break
        tries -= 1
        if not exists(name):
            return name
    return None
