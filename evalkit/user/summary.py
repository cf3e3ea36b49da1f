"""The reference change in outline, for the simulated user: which files it touches and the public
names it adds, each with its kind ("function kvstore.store.Store.ttl"). Never a line of code: the
user answers as the developer who made the change, and must know its shape without quoting it.
Read from the diff alone (deterministic; no checkout), so a method's class is the one its hunk
shows, in its lines or in the hunk header."""

from __future__ import annotations

import re

from evalkit.diffs import parsed_diff

_DEFINITION = re.compile(r"^(?P<indent>\s*)(?:async\s+)?(?P<kind>def|class)\s+(?P<name>[A-Za-z_]\w*)")
_CONSTANT = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*(?::[^=]*)?=(?!=)")
_KINDS = {"def": "function", "class": "class"}


def _module(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    parts = parts[1:] if parts[0] in ("src", "lib") and len(parts) > 1 else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def _strip(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _names(hunk, module: str, added: bool) -> list[tuple[str, str]]:
    """(kind, qualified name) of what the hunk's added (or removed) lines define, nested in the
    classes its lines (or its header) show around them."""
    header = _DEFINITION.match(hunk.section_header or "")
    outer = [(0, header["name"])] if header and header["kind"] == "class" else []
    stack: list[tuple[int, str]] = []
    found = []
    for line in hunk:
        if line.is_added if not added else line.is_removed:
            continue
        text = line.value.rstrip("\n")
        match = _DEFINITION.match(text)
        constant = _CONSTANT.match(text)
        if not match:
            if constant and (line.is_added if added else line.is_removed):
                found.append(("constant", f"{module}.{constant['name']}"))
            continue
        indent = len(match["indent"].expandtabs())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        owners = [name for _, name in stack] or ([name for _, name in outer] if indent else [])
        if line.is_added if added else line.is_removed:
            found.append((_KINDS[match["kind"]], ".".join([module, *owners, match["name"]])))
        stack.append((indent, match["name"]))
    return found


def change_summary(patch: str) -> str:
    """Files changed (added/changed/removed) and the new public functions, classes and constants
    of Python files, one per line; no code."""
    files, new = [], []
    for patched in parsed_diff(patch):
        path = _strip(patched.source_file if patched.is_removed_file else patched.target_file)
        state = "added" if patched.is_added_file else "removed" if patched.is_removed_file else "changed"
        files.append(f"{path} ({state})")
        if not path.endswith(".py") or patched.is_removed_file:
            continue
        module = _module(path)
        before = {name for hunk in patched for _, name in _names(hunk, module, added=False)}
        for hunk in patched:
            for kind, name in _names(hunk, module, added=True):
                public = not any(part.startswith("_") for part in name.split("."))
                if public and name not in before and f"{kind} {name}" not in new:
                    new.append(f"{kind} {name}")
    lines = ["Files: " + ", ".join(files)]
    if new:
        lines.append("New names: " + ", ".join(new))
    return "\n".join(lines)
