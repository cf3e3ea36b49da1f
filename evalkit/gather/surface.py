"""The public surface of Python modules: what a caller can name (top-level functions, classes and
constants, methods, parameters, attributes, CLI options), each with the signature it has in the
source and the first line of its docstring. Pure, stdlib `ast`; bodies are never kept."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from evalkit.gather.sentences import sentences, shorten
from evalkit.pyparse import parse_python

_MAX_DEFAULT = 40  # a longer default value is shown as "..."


@dataclass(frozen=True)
class Definition:
    """One name a module defines: `qualname` ("Cart.apply_code", "estimate(zone)" for a parameter)."""

    name: str  # what a caller writes
    qualname: str
    kind: str  # function, class, method, parameter, attribute, constant, option
    signature: str
    path: str
    owner: str = ""  # the function of a parameter, the class of a method or attribute
    summary: str = ""  # first line of the docstring


def module_name(path: str) -> str:
    """ "src/pkg/mod.py" → "pkg.mod"; a package's __init__.py is the package."""
    parts = path.removesuffix(".py").split("/")
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _default(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _MAX_DEFAULT else "..."


def _arg(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg + (f": {ast.unparse(arg.annotation)}" if arg.annotation else "")
    if default is not None:
        text += f" = {_default(default)}" if arg.annotation else f"={_default(default)}"
    return text


def arguments(args: ast.arguments) -> str:
    """The parameter list as written, defaults shortened."""
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = [_arg(a, d) for a, d in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if args.vararg:
        parts.append("*" + _arg(args.vararg, None))
    elif args.kwonlyargs:
        parts.append("*")
    parts += [_arg(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        parts.append("**" + _arg(args.kwarg, None))
    return ", ".join(parts)


def _summary(node: ast.AST) -> str:
    doc = ast.get_docstring(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
    if not doc:
        return ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())  # a first line may stop mid-sentence
    return shorten(sentences(paragraph)[0], 100)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    decorators = {ast.unparse(d) for d in node.decorator_list}
    marks = "".join(f"@{d} " for d in ("classmethod", "staticmethod") if d in decorators)
    return f"{marks}{prefix} {node.name}({arguments(node.args)}){returns}"


def _is_property(node: ast.AST) -> bool:
    return any(ast.unparse(d).endswith(("property", ".setter")) for d in getattr(node, "decorator_list", []))


def _callable(node: ast.FunctionDef | ast.AsyncFunctionDef, path: str, owner: str) -> list[Definition]:
    qual = f"{owner}.{node.name}" if owner else node.name
    summary = _summary(node)
    if _is_property(node):
        returns = f": {ast.unparse(node.returns)}" if node.returns else ""
        return [Definition(node.name, qual, "attribute", f"{qual}{returns} (property)", path, owner, summary)]
    kind = "method" if owner else "function"
    found = [Definition(node.name, qual, kind, _function(node), path, owner, summary)]
    args = node.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        if arg.arg not in ("self", "cls"):
            found.append(Definition(arg.arg, f"{qual}({arg.arg})", "parameter", found[0].signature, path, qual))
    return found


def _attributes(cls: ast.ClassDef, path: str) -> list[Definition]:
    found: dict[str, Definition] = {}

    def add(target: ast.expr, annotation: ast.expr | None) -> None:
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if not name or name in found:
            return
        shown = f"{cls.name}.{name}" + (f": {ast.unparse(annotation)}" if annotation else "")
        found[name] = Definition(name, f"{cls.name}.{name}", "attribute", shown, path, cls.name)

    for node in cls.body:
        if isinstance(node, ast.AnnAssign):
            add(node.target, node.annotation)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                add(target, None)
    for method in (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(method):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
                        add(target, annotation)
    return list(found.values())


def _options(tree: ast.Module, path: str) -> list[Definition]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        flags = [f for f in flags if f.startswith("--")]
        helps = [k.value.value for k in node.keywords if k.arg == "help" and isinstance(k.value, ast.Constant)]
        for flag in flags:
            summary = str(helps[0]).strip().splitlines()[0][:100] if helps else ""
            found.append(Definition(flag, flag, "option", " / ".join(flags), path, summary=summary))
    return found


def definitions(text: str, path: str) -> list[Definition]:
    """Every public name `text` defines, in source order; [] when it does not parse."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return []
    found: list[Definition] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += _callable(node, path, "")
        elif isinstance(node, ast.ClassDef):
            bases = ", ".join(ast.unparse(b) for b in node.bases + node.keywords)
            signature = f"class {node.name}({bases})" if bases else f"class {node.name}"
            found.append(Definition(node.name, node.name, "class", signature, path, summary=_summary(node)))
            found += _attributes(node, path)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found += _callable(item, path, node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found.append(Definition(target.id, target.id, "constant", target.id, path))
    found += _options(tree, path)
    public = [d for d in found if not d.owner.startswith("_")]  # a private class's members are private
    return [d for d in public if not d.name.startswith("_") or d.name == "__init__"]
