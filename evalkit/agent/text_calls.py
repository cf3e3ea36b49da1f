"""Tool calls written into a reply's text, for models and servers without native tool calling
(`tool_call_format = "text"`): Hermes / Qwen style `<tool_call>{"name": ..., "arguments": ...}
</tool_call>` blocks, a fenced ```json block, or a bare JSON object naming a known tool.

Parsed calls get the same shape as native ones, so the loop runs them the same way; the reply's
text is left as the model wrote it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def _objects(text: str) -> Iterable[str]:
    """Candidate JSON texts: tagged blocks first, else fenced blocks, else the first {...} span."""
    tagged = _TAGGED.findall(text)
    if tagged:
        return tagged
    fenced = _FENCED.findall(text)
    if fenced:
        return fenced
    start, end = text.find("{"), text.rfind("}")
    return [text[start : end + 1]] if 0 <= start < end else []


def _call(obj: object, tools: frozenset[str]) -> tuple[str, str] | None:
    if not isinstance(obj, dict):
        return None
    function = obj.get("function") if isinstance(obj.get("function"), dict) else obj
    name = function.get("name") or function.get("tool")
    if not isinstance(name, str) or name not in tools:
        return None
    arguments = function.get("arguments", function.get("parameters", {}))
    return name, arguments if isinstance(arguments, str) else json.dumps(arguments)


def parse_text_tool_calls(text: str | None, tools: frozenset[str], turn: int) -> list[dict]:
    """Tool calls found in `text`, shaped as native `tool_calls` entries (ids `text_<turn>_<i>`)."""
    if not text:
        return []
    calls = []
    for candidate in _objects(text):
        try:
            decoded = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        for obj in decoded if isinstance(decoded, list) else [decoded]:
            found = _call(obj, tools)
            if found:
                name, arguments = found
                calls.append(
                    {
                        "id": f"text_{turn}_{len(calls)}",
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                )
    return calls
