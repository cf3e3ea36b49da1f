"""A module's canonical form at each stage of a mechanical sweep: what a reformat, a version bump,
a sweep of type annotations, a syntax upgrade (pyupgrade) or dropping old Pythons would change is set
aside, so two versions of a module compare equal when only such a sweep lies between them. Stages
are cumulative (OLD_PYTHONS sets aside all of them). Docstrings keep their words until DOCS, laid out
alike; `ast.unparse` lays out the rest. Pure, stdlib `ast`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from evalkit.pyparse import parse_python

FORMATTING, DOCS, VERSION, ANNOTATIONS, UPGRADE, OLD_PYTHONS = range(6)
COMPAT_MODULE = re.compile(r"^(_?compat|_compat\w*|six|py\dcompat)$")  # a module of helpers for old Pythons

_VERSION_NAMES = {"__version__", "VERSION", "version", "__version_info__", "version_info"}
_TYPING_MODULES = {"typing", "typing_extensions", "collections.abc"}
_TYPE_FACTORIES = {"TypeVar", "ParamSpec", "NewType", "TypeVarTuple"}
_TYPING_NAMES = {"Union", "Optional", "Callable", "Dict", "List", "Tuple", "Type", "Literal", "Mapping", "Sequence"}
_OS_ERRORS = {"IOError", "EnvironmentError", "WindowsError", "socket.error", "select.error"}
_PY2_NAMES = {
    "text_type": "str", "unicode": "str", "string_types": "str", "basestring": "str", "binary_type": "bytes",
    "integer_types": "int", "long": "int", "xrange": "range", "unichr": "chr", "raw_input": "input", "izip": "zip",
    "imap": "map", "ifilter": "filter", "izip_longest": "zip_longest", "range_type": "range",
}  # fmt: skip
_PY2_ITER = {"iteritems": "items", "itervalues": "values", "iterkeys": "keys"}
_PY2_DECORATORS = {
    "implements_to_string", "implements_iterator", "implements_bool", "python_2_unicode_compatible",
    "add_metaclass", "native_string_result",
}  # fmt: skip
_PY2_MEMBERS = {"__nonzero__", "__unicode__", "__div__", "__idiv__", "__rdiv__", "__getslice__", "__cmp__", "next"}
_PY_FLAG = re.compile(r"^(IS_)?(PY|PYTHON)_?(\d+K?)(_PLUS)?$")
_SAFE = (ast.Expression, ast.Constant, ast.Tuple, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Subscript, ast.Slice,
         ast.cmpop, ast.boolop, ast.unaryop, ast.expr_context)  # fmt: skip


def dotted(node: ast.AST) -> str:
    """`sys.version_info` for that attribute chain; "" for anything but names and attributes."""
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _flag(name: str) -> bool | None:
    """What a compat flag (PY2, PY3K, PY36_PLUS, six.PY3) says on today's Python; None if not one."""
    match = _PY_FLAG.match(name.rsplit(".", 1)[-1])
    if not match:
        return None
    version, plus = match.group(3), bool(match.group(4))
    if plus or version.startswith("2"):
        return plus or version.startswith("3")  # PY36_PLUS, PY2, PY27
    return True if version in ("3", "3K") else None  # PY35 alone may mean "exactly 3.5"


def version_test(test: ast.expr) -> bool | None:
    """A version test (`sys.version_info >= (3, 8)`, `not PY2`) evaluated on a Python 3.99; None
    when it asks anything else."""

    class Today(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            name = dotted(node)
            if name == "sys.version_info":
                return ast.Tuple([ast.Constant(3), ast.Constant(99), ast.Constant(0)], ast.Load())
            flag = _flag(name) if name.startswith("six.") else None
            return ast.Constant(flag) if flag is not None else self.generic_visit(node)

        def visit_Name(self, node: ast.Name) -> ast.AST:
            flag = _flag(node.id)
            return ast.Constant(flag) if flag is not None else node

    expression = ast.fix_missing_locations(ast.Expression(Today().visit(_copy(test))))
    if not all(isinstance(n, _SAFE) for n in ast.walk(expression)):
        return None
    try:
        return bool(eval(compile(expression, "<version test>", "eval"), {"__builtins__": {}}))  # constants only
    except Exception:
        return None


def _copy(node: ast.expr) -> ast.expr:
    return parse_python(ast.unparse(node), mode="eval").body


class Canonical(ast.NodeTransformer):
    """A module with what the stages up to `stage` change set aside (it rewrites the tree it visits)."""

    def __init__(self, stage: int, known: set[str] | None = None) -> None:
        self.stage = stage
        # version tests and tried imports are resolved in the base, and after the change only those
        # the base has too: a shim the change adds (for Python < 3.13) is new code, not a sweep
        self.known = known
        self.in_class = False

    def _resolves(self, node: ast.AST) -> bool:
        return self.stage >= OLD_PYTHONS and (self.known is None or _compat_key(node) in self.known)

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return self._statements(body) or [ast.Pass()]

    def _statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        kept: list[ast.stmt] = []
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                if self.stage >= DOCS:
                    continue  # docstrings, and strings documenting attributes
                if isinstance(statement.value.value, str):  # a reformat reindents and rewraps them
                    statement = ast.Expr(ast.Constant(" ".join(statement.value.value.split())))
            result = self.visit(statement)
            kept += result if isinstance(result, list) else [result] if result is not None else []
        return _imports_sorted(kept)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, name, None), list) and getattr(node, name):
                setattr(node, name, self._body(getattr(node, name)))
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody"):
                continue
            if isinstance(value, list):
                new = [self.visit(v) if isinstance(v, ast.AST) else v for v in value]
                setattr(node, field, [v for v in new if v is not None])
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(node.value)  # u"" and "" alike

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST | None:
        outer, self.in_class = self.in_class, True
        try:
            return self._class(node)
        finally:
            self.in_class = outer

    def _class(self, node: ast.ClassDef) -> ast.AST | None:
        if self.stage >= ANNOTATIONS:
            node.bases = [
                b for b in node.bases if dotted(getattr(b, "value", b)).split(".")[-1] not in {"Generic", "Protocol"}
            ]
        if self.stage >= UPGRADE:
            node.bases = [b for b in node.bases if dotted(b) != "object"]
        if self.stage >= OLD_PYTHONS:
            node.decorator_list = [d for d in node.decorator_list if not self._py2_decorator(d)]
            node.keywords = [k for k in node.keywords if k.arg != "metaclass"]
            node.bases = [a for b in node.bases for a in self._unwrapped_base(b)]
        return self.generic_visit(node)

    def _unwrapped_base(self, base: ast.expr) -> list[ast.expr]:
        if isinstance(base, ast.Call) and dotted(base.func).endswith("with_metaclass"):
            return [b for b in base.args[1:] if dotted(b) != "object"]
        return [base]

    def _py2_decorator(self, node: ast.expr) -> bool:
        return dotted(node.func if isinstance(node, ast.Call) else node).split(".")[-1] in _PY2_DECORATORS

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST | None:
        if self.stage >= ANNOTATIONS:
            if any(dotted(d).split(".")[-1] == "overload" for d in node.decorator_list):
                return None
            node.returns = None
            for arg in [
                *node.args.posonlyargs,
                *node.args.args,
                *node.args.kwonlyargs,
                node.args.vararg,
                node.args.kwarg,
            ]:
                if arg is not None:
                    arg.annotation = None
        if self.stage >= OLD_PYTHONS and self.in_class and node.name in _PY2_MEMBERS:
            return None
        outer, self.in_class = self.in_class, False
        try:
            return self.generic_visit(node)
        finally:
            self.in_class = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if self.stage < ANNOTATIONS:
            return self.generic_visit(node)
        if node.value is None:  # a bare declaration; in a class it may be a dataclass field
            return (
                self.generic_visit(ast.AnnAssign(node.target, ast.Name("_", ast.Load()), None, 1))
                if self.in_class
                else None
            )
        return self.visit(ast.Assign([node.target], node.value))

    def visit_Assign(self, node: ast.Assign) -> ast.AST | None:
        names = {dotted(t) for t in node.targets}
        if self.stage >= VERSION and names <= _VERSION_NAMES and isinstance(node.value, ast.Constant | ast.Tuple):
            return None
        if self.stage >= ANNOTATIONS:
            factory = dotted(node.value.func).split(".")[-1] if isinstance(node.value, ast.Call) else ""
            alias = dotted(node.value.value) if isinstance(node.value, ast.Subscript) else ""
            if (
                factory in _TYPE_FACTORIES
                or alias.split(".")[-1] in _TYPING_NAMES
                or alias.startswith(("t.", "typing."))
            ):
                return None
        if (
            self.stage >= OLD_PYTHONS
            and names
            and all(n in _PY2_NAMES or _flag(n) is not None or n in _PY2_MEMBERS or n == "__metaclass__" for n in names)
        ):
            return None
        return self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> ast.AST | None:
        if self.stage >= VERSION and node.arg == "version" and isinstance(node.value, ast.Constant):
            return None
        return self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | None:
        module = node.module or ""
        if self.stage >= ANNOTATIONS and (
            module in _TYPING_MODULES or (module == "__future__" and [a.name for a in node.names] == ["annotations"])
        ):
            return None
        if self.stage >= UPGRADE and module == "__future__":
            return None
        if self.stage >= OLD_PYTHONS and (
            COMPAT_MODULE.match(module.split(".")[-1])
            or module.startswith("six.")
            or (module == "io" and [a.name for a in node.names] == ["open"])
        ):
            return None
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST | None:
        names = {a.name for a in node.names}
        if self.stage >= ANNOTATIONS and names <= _TYPING_MODULES:
            return None
        if self.stage >= OLD_PYTHONS and names <= {"six"}:
            return None
        return node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt] | None:
        if self.stage >= ANNOTATIONS and dotted(node.test).split(".")[-1] == "TYPE_CHECKING":
            return self._statements(node.orelse)
        if self._resolves(node) and (today := version_test(node.test)) is not None:
            return self._statements(node.body if today else node.orelse)
        return self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        if self._resolves(node) and (today := version_test(node.test)) is not None:
            return self.visit(node.body if today else node.orelse)
        return self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> ast.AST | list[ast.stmt]:
        if tried_import(node) and self._resolves(node):
            return self._statements(node.body)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node = self.generic_visit(node)
        name = dotted(node.func)
        if self.stage >= ANNOTATIONS and name.split(".")[-1] == "cast" and len(node.args) == 2:
            return node.args[1]
        if self.stage >= UPGRADE:
            if name == "super" and len(node.args) == 2:
                return ast.Call(node.func, [], node.keywords)
            if name == "open" and len(node.args) == 2 and getattr(node.args[1], "value", None) == "r":
                return ast.Call(node.func, node.args[:1], node.keywords)
            if (
                name == "set"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.List | ast.Tuple)
                and node.args[0].elts
            ):
                return ast.Set(node.args[0].elts)
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"
                and isinstance(node.func.value, ast.Constant)
            ):
                return _formatted([*node.args, *(k.value for k in node.keywords)])
        if self.stage >= OLD_PYTHONS:
            method = node.func.attr if isinstance(node.func, ast.Attribute) else name
            if method in _PY2_ITER:
                target = (
                    node.func.value
                    if isinstance(node.func, ast.Attribute) and not node.args
                    else (node.args or [node.func])[0]
                )
                return ast.Call(ast.Attribute(target, _PY2_ITER[method], ast.Load()), [], [])
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        if self.stage < UPGRADE:
            return self.generic_visit(node)
        return _formatted([v.value for v in node.values if isinstance(v, ast.FormattedValue)])

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if (
            self.stage >= UPGRADE
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            return _formatted(node.right.elts if isinstance(node.right, ast.Tuple) else [node.right])
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if self.stage >= UPGRADE and node.id in _OS_ERRORS:
            return ast.Name("OSError", node.ctx)
        if self.stage >= OLD_PYTHONS and node.id in _PY2_NAMES:
            return ast.Name(_PY2_NAMES[node.id], node.ctx)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = dotted(node)
        if self.stage >= UPGRADE and name in _OS_ERRORS:
            return ast.Name("OSError", node.ctx)
        if self.stage >= OLD_PYTHONS and name.startswith("six."):
            last = name.rsplit(".", 1)[-1]
            return ast.Name(_PY2_NAMES.get(last, last), node.ctx)
        return self.generic_visit(node)


def _imports_sorted(body: list[ast.stmt]) -> list[ast.stmt]:
    """Each run of imports in one order, a name per `import` and the names of a `from` sorted: as
    isort leaves them."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for statement in [*body, None]:
        if isinstance(statement, ast.Import):
            run += [ast.Import([alias]) for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom):
            names = sorted(statement.names, key=lambda a: (a.name, a.asname or ""))
            run.append(ast.ImportFrom(statement.module, names, statement.level))
        else:
            out += sorted(run, key=ast.unparse) + ([statement] if statement is not None else [])
            run = []
    return out


def _formatted(values: Iterable[ast.expr]) -> ast.expr:
    """Any string formatting (f-string, `.format`, `%`) as the expressions it formats."""
    shown = sorted({ast.unparse(v) for v in values})
    return ast.Call(ast.Name("FORMAT", ast.Load()), [ast.Constant(s) for s in shown], [])


def _compat_key(node: ast.AST) -> str:
    return ast.unparse(node.test) if isinstance(node, ast.If | ast.IfExp) else ast.unparse(node)


def tried_import(node: ast.Try) -> bool:
    """`try: import x` with a fallback when it fails (an old Python's module or name)."""
    caught = {dotted(e) for h in node.handlers for e in (getattr(h.type, "elts", None) or [h.type])}
    return bool(node.handlers) and caught <= {"ImportError", "ModuleNotFoundError", "NameError"}


def canonical_pair(before: str | None, after: str | None, stage: int) -> tuple[ast.Module, ast.Module] | None:
    """Both sides of a module canonical at `stage`; None when one does not parse."""
    try:
        old, new = parse_python(before or ""), parse_python(after or "")
    except (SyntaxError, ValueError):
        return None
    known = {
        _compat_key(n)
        for n in ast.walk(old)
        if (isinstance(n, ast.If | ast.IfExp) and version_test(n.test) is not None)
        or (isinstance(n, ast.Try) and tried_import(n))
    }
    return Canonical(stage).visit(old), Canonical(stage, known).visit(new)


def statements(tree: ast.Module) -> list[str]:
    """A canonical module as text, a line per simple statement (what two versions compare by)."""
    return ast.unparse(ast.fix_missing_locations(tree)).splitlines() if tree.body else []


def names_in(tree: ast.AST) -> set[str]:
    """The names a module defines or uses (functions, classes, parameters, variables, attributes)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Name | ast.Attribute | ast.arg | ast.keyword | ast.alias):
            found.add(getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "arg", None) or "")
    return found
