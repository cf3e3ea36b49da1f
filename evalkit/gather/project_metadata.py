"""What a project's own metadata declares: its name, its dependencies and its test-like extras and
groups, read (never run) from pyproject.toml (PEP 621, PEP 735, Poetry, Hatch, PDM), setup.cfg and
a literal `setup(...)` in setup.py. Used by declared_needs.py, which adds the other files."""

from __future__ import annotations

import ast
import configparser
import contextlib
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evalkit.pyparse import parse_python

# extras, groups and environments whose dependencies run the tests; not docs, lint or typing
TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop", "development", "ci", "unit", "pytest")
_EXTRA_REFERENCE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]*)\]")


@dataclass(frozen=True)
class Need:
    """One requirement line and the file it was read from; `runtime` for the project's own install
    dependencies, which are never filtered as tools (a Sphinx extension needs Sphinx to be tested)."""

    requirement: str
    source: str
    runtime: bool = False


def normalised(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def toml_of(text: str | None) -> dict:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def ini_of(text: str | None) -> configparser.ConfigParser:
    """An ini file as configparser reads it without interpolation (`%` is common in tox.ini); empty
    when it does not parse."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    if text:
        try:
            parser.read_string(text)
        except configparser.Error:
            return configparser.ConfigParser(interpolation=None, strict=False)
    return parser


def lines_of(value: str) -> list[str]:
    """The entries of an ini list value: one a line, comments and blanks dropped."""
    found = []
    for raw in value.splitlines():
        line = raw.split(" #")[0].strip()
        if line and not line.startswith("#"):
            found.append(line)
    return found


def test_like(name: str) -> bool:
    return normalised(name) in TEST_EXTRAS


# Poetry's constraints as PEP 440 specifiers
def _caret(version: str) -> str:
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:3]]
    first = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
    upper = [*parts[:first], parts[first] + 1] + [0] * (len(parts) - first - 1)
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str:
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:3]]
    keep = 1 if len(parts) == 1 else 2
    upper = [*parts[: keep - 1], parts[keep - 1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def poetry_specifier(constraint: str) -> str:
    """`^1.2` → `>=1.2,<2`, `~1.2` → `>=1.2,<1.3`, `*` → any, `1.2` → `==1.2`; an `||` alternative,
    which PEP 440 cannot say, becomes any version."""
    constraint = constraint.strip()
    if not constraint or constraint == "*" or "||" in constraint or "|" in constraint:
        return ""
    parts = []
    for piece in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", constraint):
        piece = piece.strip()
        if piece.startswith("^"):
            parts.append(_caret(piece[1:].strip()))
        elif piece.startswith("~") and not piece.startswith("~="):
            parts.append(_tilde(piece[1:].strip()))
        elif piece[:1].isdigit():
            parts.append(f"=={piece}")
        elif piece and piece != "*":
            parts.append(piece)
    return ",".join(parts)


def poetry_requirement(name: str, spec: object, include_optional: bool = True) -> str | None:
    """A Poetry dependency table entry as a PEP 508 line; None for git, path and url dependencies
    (not on PyPI), `python` itself, and optional ones unless asked."""
    if normalised(name) == "python":
        return None
    if isinstance(spec, list):  # multiple constraints by Python version: any version
        return name
    if isinstance(spec, str):
        return name + poetry_specifier(spec)
    if not isinstance(spec, dict) or {"git", "path", "url", "file"} & spec.keys():
        return None
    if spec.get("optional") and not include_optional:
        return None
    extras = spec.get("extras") or []
    line = name + (f"[{','.join(extras)}]" if extras else "") + poetry_specifier(str(spec.get("version", "")))
    markers = [spec["markers"]] if isinstance(spec.get("markers"), str) and spec["markers"] else []
    markers += _python_markers(str(spec.get("python", "")))
    return f"{line}; {' and '.join(markers)}" if markers else line


def _python_markers(constraint: str) -> list[str]:
    """Poetry's `python = "~2.7"` as markers (enum34 is for Python 2 only and breaks Python 3)."""
    found = []
    for piece in poetry_specifier(constraint).split(","):
        if match := re.fullmatch(r"\s*(===|==|!=|<=|>=|~=|<|>)\s*([\w.*]+)\s*", piece):
            found.append(f'python_version {match.group(1)} "{match.group(2)}"')
    return found


def _strings(values: object) -> list[str]:
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _dependency_group(groups: dict, name: str, seen: set[str]) -> list[str]:
    """A PEP 735 group with its `{include-group = ...}` entries resolved (cycles cut)."""
    if name in seen or not isinstance(groups.get(name), list):
        return []
    seen.add(name)
    found: list[str] = []
    for entry in groups[name]:
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            found += _dependency_group(groups, entry["include-group"], seen)
    return found


def _poetry_table(table: object, include_optional: bool = True) -> list[str]:
    if not isinstance(table, dict):
        return []
    lines = (poetry_requirement(name, spec, include_optional) for name, spec in table.items())
    return [line for line in lines if line]


def pyproject_extra(data: dict, extra: str) -> list[str]:
    """An extra of the project: PEP 621 optional dependencies, else Poetry's `[tool.poetry.extras]`."""
    project = data.get("project", {})
    found = _strings(project.get("optional-dependencies", {}).get(extra))
    poetry = data.get("tool", {}).get("poetry", {})
    names = {normalised(n) for n in _strings(poetry.get("extras", {}).get(extra))}
    table = poetry.get("dependencies", {})
    if names and isinstance(table, dict):
        found += [r for n, spec in table.items() if normalised(n) in names and (r := poetry_requirement(n, spec))]
    return found


def from_pyproject(text: str) -> list[Need]:
    """The dependencies and test-like extras and groups a pyproject.toml declares."""
    data = toml_of(text)
    project, tool = data.get("project", {}), data.get("tool", {})
    source = "pyproject.toml"
    needs = [Need(r, source, runtime=True) for r in _strings(project.get("dependencies"))]
    poetry = tool.get("poetry", {})
    needs += [Need(r, source, runtime=True) for r in _poetry_table(poetry.get("dependencies"), False)]
    test: list[str] = []
    groups = data.get("dependency-groups", {})
    for extra in TEST_EXTRAS:
        test += pyproject_extra(data, extra)
        test += _dependency_group(groups, extra, set()) if isinstance(groups, dict) else []
    test += _poetry_table(poetry.get("dev-dependencies"))
    for name, group in poetry.get("group", {}).items():
        if test_like(name) and isinstance(group, dict):
            test += _poetry_table(group.get("dependencies"))
    for name, env in tool.get("hatch", {}).get("envs", {}).items():
        if isinstance(env, dict) and (name == "default" or normalised(name).startswith("test")):
            test += _strings(env.get("dependencies")) + _strings(env.get("extra-dependencies"))
            for feature in _strings(env.get("features")):
                test += pyproject_extra(data, feature)
    for name, group in tool.get("pdm", {}).get("dev-dependencies", {}).items():
        test += _strings(group) if test_like(name) else []
    return needs + [Need(r, source) for r in test]


def _setup_cfg_extras(parser: configparser.ConfigParser, extra: str) -> list[str]:
    return lines_of(parser.get("options.extras_require", extra, fallback=""))


def from_setup_cfg(text: str) -> list[Need]:
    """`install_requires`, `tests_require` and the test-like extras of setup.cfg."""
    parser = ini_of(text)
    install = lines_of(parser.get("options", "install_requires", fallback=""))
    needs = [Need(r, "setup.cfg", runtime=True) for r in install]
    test = lines_of(parser.get("options", "tests_require", fallback=""))
    for extra in TEST_EXTRAS:
        test += _setup_cfg_extras(parser, extra)
    return needs + [Need(r, "setup.cfg") for r in test]


def _literal(node: ast.AST, named: dict[str, object]) -> object:
    """A literal, allowing the names of earlier module-level literals, their `[key]` and `+` of
    lists (webargs: `"tests": [...] + FRAMEWORKS`); ValueError for anything else."""
    if isinstance(node, ast.Name) and node.id in named:
        return named[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, named), _literal(node.right, named)
        if isinstance(left, list | tuple) and isinstance(right, list | tuple):
            return [*left, *right]
        raise ValueError("not a list sum")
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        container, key = named.get(node.value.id), _literal(node.slice, named)
        if isinstance(container, dict) and isinstance(key, str) and key in container:
            return container[key]
        raise ValueError("not a known key")
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(element, named) for element in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k, named): _literal(v, named) for k, v in zip(node.keys, node.values, strict=True)}
    return ast.literal_eval(node)


def _module_literals(tree: ast.Module) -> dict[str, object]:
    """Module-level `NAME = literal` and `NAME["key"] = literal` assignments, in order."""
    named: dict[str, object] = {}
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            if isinstance(target, ast.Name):
                named[target.id] = _literal(statement.value, named)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                container, key = named.get(target.value.id), _literal(target.slice, named)
                if isinstance(container, dict) and isinstance(key, str):
                    container[key] = _literal(statement.value, named)
    return named


def _setup_call_keywords(text: str) -> dict[str, object]:
    """The literal keyword values of setup.py's `setup(...)` call (module-level literals passed by
    name count: marshmallow's extras_require=EXTRAS_REQUIRE). Parsed, never run."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return {}
    named = _module_literals(tree)
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup"):
            continue
        for keyword in node.keywords:
            if keyword.arg is not None:
                with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    found[keyword.arg] = _literal(keyword.value, named)
    return found


def _literal_list(value: object) -> list[str]:
    return [r for r in value if isinstance(r, str)] if isinstance(value, list | tuple) else []


def _setup_py_extra(keywords: dict[str, object], extra: str) -> list[str]:
    extras = keywords.get("extras_require")
    return _literal_list(extras.get(extra)) if isinstance(extras, dict) else []


def from_setup_py(text: str) -> list[Need]:
    """`install_requires`, `tests_require` and the test-like extras of setup.py's `setup(...)`, when
    they are literals (Jinja 3.0 keeps its one dependency, MarkupSafe, only there)."""
    keywords = _setup_call_keywords(text)
    needs = [Need(r, "setup.py", runtime=True) for r in _literal_list(keywords.get("install_requires"))]
    test = _literal_list(keywords.get("tests_require"))
    for extra in TEST_EXTRAS:
        test += _setup_py_extra(keywords, extra)
    return needs + [Need(r, "setup.py") for r in test]


def project_extras(read: Callable[[str], str | None], extras: Iterable[str], name: str | None) -> list[Need]:
    """The named extras of the project (tox `extras =`, nox `.[test]`), from whichever metadata file
    declares them; an extra naming the project's own other extras (`dev = ["pkg[test]"]`) is followed."""
    pending, seen, found = list(extras), set(), []
    while pending:
        extra = pending.pop(0).strip()
        if not extra or extra in seen:
            continue
        seen.add(extra)
        lines: list[tuple[str, str]] = []
        if text := read("pyproject.toml"):
            lines += [(r, "pyproject.toml") for r in pyproject_extra(toml_of(text), extra)]
        if text := read("setup.cfg"):
            lines += [(r, "setup.cfg") for r in _setup_cfg_extras(ini_of(text), extra)]
        if text := read("setup.py"):
            lines += [(r, "setup.py") for r in _setup_py_extra(_setup_call_keywords(text), extra)]
        for line, source in lines:
            own = _EXTRA_REFERENCE.match(line)
            if own and name and normalised(own.group(1)) == name:
                pending += own.group(2).split(",")
            else:
                found.append(Need(line, source))
    return found


def project_name(read: Callable[[str], str | None]) -> str | None:
    """The project's own distribution name, normalised: pyproject `[project]` or `[tool.poetry]`,
    setup.cfg `[metadata]`, or a literal `name=` of setup.py."""
    data = toml_of(read("pyproject.toml"))
    name = data.get("project", {}).get("name") or data.get("tool", {}).get("poetry", {}).get("name")
    if not name and (cfg := read("setup.cfg")):
        name = ini_of(cfg).get("metadata", "name", fallback=None)
    if not name and (setup := read("setup.py")):
        name = _setup_call_keywords(setup).get("name")
    return normalised(name.strip()) if isinstance(name, str) and name.strip() else None
