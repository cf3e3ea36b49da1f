"""The interface a gathered task's prompt must give: the public names the changed tests use that the
base lacks and the reference change adds (functions, classes, methods, new parameters of existing
functions, attributes, constants, modules, CLI options, and the message strings the tests match),
each with its signature as in the patched source. Deterministic and pure: file texts in, a short
markdown section out, never a function body.

A name the tests need that neither the interface nor the prompt gives (set with `setattr`, spelled
in a data file, made by a decorator...) leaves the task *underspecified*: an agent could only
guess it, so the task would measure luck (SWE-bench Verified dropped such tasks by hand)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from evalkit.diffs import diff_line_starts
from evalkit.gather.sentences import shorten
from evalkit.gather.surface import Definition, definitions, module_name
from evalkit.gather.used_by_tests import UsedByTests
from evalkit.pyparse import parse_python

# (words, whole words?) → those of them found anywhere in the base tree's Python files
BaseSearch = Callable[[list[str], bool], set[str]]
_MIN_MESSAGE = 8  # a shorter message start is too common to say anything
_MAX_SUMMARY = 70  # characters of a docstring's first line
Texts = dict[str, tuple[str | None, str | None]]  # path → (text at base, text with the change)


@dataclass(frozen=True)
class InterfaceItem:
    name: str
    kind: str  # function, class, method, parameter, attribute, constant, module, option, message
    signature: str
    path: str = ""
    owner: str = ""
    summary: str = ""

    def line(self, summary: bool = True) -> str:
        text = {
            "method": f"`{self.signature.replace(' ' + self.name + '(', ' ' + self.owner + '.' + self.name + '(', 1)}`",
            "parameter": f"`{self.signature}`: new parameter `{self.name}`",
            "option": f"command-line option `{self.signature}`",
            "message": f'message text "{self.signature}"',
        }.get(self.kind, f"`{self.signature}`")
        return f"- {text}" + (f": {shorten(self.summary, _MAX_SUMMARY)}" if self.summary and summary else "")


@dataclass
class Interface:
    items: list[InterfaceItem] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)  # new names and strings the tests use
    # of those, the ones no item names (a parameter shown in a listed signature is given once the
    # section is in the prompt: `underspecified` reads the whole prompt)
    missing: list[str] = field(default_factory=list)

    def render(self, summaries: bool = True) -> str:
        """A markdown section: the items under their module, then options and messages; each with
        the first line of its docstring or help when `summaries`."""
        if not self.items:
            return ""
        lines = ["Interface (new in this change):"]
        modules = {i.path: i for i in self.items if i.kind == "module"}
        for path in dict.fromkeys(i.path for i in self.items if i.path):
            new = modules.get(path)
            lines.append(f"`{path}`" + (f" (new module `{new.signature}`)" if new else "") + ":")
            lines += [i.line(summaries) for i in self.items if i.path == path and i.kind != "module"]
        lines += [i.line(summaries) for i in self.items if not i.path]
        return "\n".join(lines)


def added_text(patch: str) -> str:
    """The lines a diff adds, joined (what the reference change writes)."""
    lines = diff_line_starts(patch)
    return "\n".join(line[1:] for line in lines if line.startswith("+") and not line.startswith("+++"))


def _new(after: list[Definition], before: list[Definition]) -> list[Definition]:
    old = {d.qualname for d in before}
    return [d for d in after if d.qualname not in old]


def _item(d: Definition) -> InterfaceItem:
    return InterfaceItem(d.name, d.kind, d.signature, d.path, d.owner, d.summary)


def _definition_items(sources: Texts, usage: UsedByTests) -> list[InterfaceItem]:
    """New definitions of the touched modules whose names the tests use; a parameter only when its
    function is not itself listed (the function's signature already shows it)."""
    items: list[InterfaceItem] = []
    for path, (before, after) in sorted(sources.items()):
        if after is None:
            continue
        module = module_name(path)
        if before is None and module.split(".")[-1] in usage.names:
            items.append(InterfaceItem(module.split(".")[-1], "module", module, path))
        old = definitions(before or "", path)
        existing = {d.qualname for d in old}
        new = _new(definitions(after, path), old)
        listed = {d.qualname for d in new if d.name in usage.names and d.kind != "parameter"}
        for d in new:
            if d.name not in usage.names or d.kind == "option":
                continue
            if d.kind == "parameter":
                owner_class = d.owner.removesuffix(".__init__")
                if d.name not in usage.keywords or d.owner not in existing or f"{owner_class}.{d.name}" in listed:
                    continue  # only a new keyword of an existing function, and not twice
            items.append(_item(d))
    return items


def defined_words(sources: Texts) -> set[str]:
    """The names the patched modules define, however (def, class, parameter, module or class level
    assignment, `obj.name = ...`, keyword argument, or a string that is just the name, as for
    `setattr` or a dict key): the names a change can add. Imported and merely called names are not
    among them, so a test and a change that both use `Decimal` or `Path.read_bytes` make no interface."""
    found: set[str] = set()
    for _, after in sources.values():
        try:
            tree = parse_python(after or "")
        except SyntaxError:
            continue
        top = {id(n) for n in tree.body} | {id(n) for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.arg | ast.keyword) and node.arg:
                found.add(node.arg)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                found.add(node.value)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and id(node) in top:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return found


def _written(message: str, added: str) -> str:
    """The longest start of `message` the change writes (a matched message is often formatted:
    "cannot parse range '1.0'" from f"cannot parse range {text!r}"); "" when under _MIN_MESSAGE."""
    for end in range(len(message), _MIN_MESSAGE - 1, -1):
        if message[:end] in added:
            return message[:end].strip() if len(message[:end].strip()) >= _MIN_MESSAGE else ""
    return ""


def _string_items(sources: Texts, usage: UsedByTests, added: str, base_has: BaseSearch) -> list[InterfaceItem]:
    options = sorted(o for o in usage.options if re.search(re.escape(o) + r"(?![\w-])", added))
    options = sorted(set(options) - base_has(options, False)) if options else []
    items = []
    for option in options:
        found = [d for path, (_, after) in sorted(sources.items()) if after for d in definitions(after, path)]
        match = next((d for d in found if d.kind == "option" and d.name == option), None)
        items.append(_item(match) if match else InterfaceItem(option, "option", option))
    messages = sorted({found for m in usage.messages if (found := _written(m, added))})
    for message in sorted(set(messages) - base_has(messages, False)) if messages else []:
        items.append(InterfaceItem(message, "message", message))
    return items


def extract_interface(sources: Texts, tests: UsedByTests, patch: str, base_has: BaseSearch) -> Interface:
    """The interface of a reference change (`sources`: the touched source modules; `patch`: the
    source part) for what the changed tests use (`tests`)."""
    added = added_text(patch)
    items = _definition_items(sources, tests) + _string_items(sources, tests, added, base_has)
    unique = list({(i.kind, i.signature, i.name): i for i in items}.values())
    candidates = sorted(tests.names & defined_words(sources))
    new_names = set(candidates) - base_has(candidates, True) if candidates else set()
    given = {i.name for i in unique} | {i.name.lstrip("-").replace("-", "_") for i in unique if i.kind == "option"}
    needed = sorted(new_names | {i.name for i in unique if i.kind in ("option", "message")})
    return Interface(unique, needed, sorted(new_names - given))


def underspecified(interface: Interface, prompt: str) -> list[str]:
    """The names the tests need that neither the interface nor the prompt's own words give."""
    return [n for n in interface.missing if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", prompt)]
