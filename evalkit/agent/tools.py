"""The agent's tools as OpenAI function-calling schemas. The names are the contract between the
agent loop, the built-in server's policies and the interaction scorer."""

from __future__ import annotations


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_PATH = {"type": "string", "description": "Path relative to the repository root (or absolute)."}

TOOL_SCHEMAS: list[dict] = [
    _tool(
        "bash",
        "Run a shell command in the repository (persistent shell: cd and exports persist).",
        {"command": {"type": "string"}, "timeout": {"type": "number", "description": "Seconds."}},
        ["command"],
    ),
    _tool("read_file", "Read a text file.", {"path": _PATH}, ["path"]),
    _tool(
        "write_file",
        "Create or overwrite a file with the given content.",
        {"path": _PATH, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _tool(
        "edit",
        "Replace one exact occurrence of old_string with new_string in a file.",
        {"path": _PATH, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
        ["path", "old_string", "new_string"],
    ),
    _tool(
        "search",
        "Search file contents for a regular expression (ripgrep).",
        {"pattern": {"type": "string"}, "path": {"type": "string", "description": "Folder or file; default ."}},
        ["pattern"],
    ),
    _tool("submit", "Finish: say what you changed and why.", {"summary": {"type": "string"}}, ["summary"]),
]
TOOL_NAMES = frozenset(t["function"]["name"] for t in TOOL_SCHEMAS)
