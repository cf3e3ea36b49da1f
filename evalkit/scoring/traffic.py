"""What an agent's recorded traffic says about how it used its tools, for the interaction axis of
an agent evalkit did not write (its tools run inside the agent, so evalkit has no `tool` events).

The model proxy's trajectory holds each request's `proxy_request` event (with the tools offered
whenever they change), the messages the agent sent and each reply as a `message` right after its
`model_call`. From those: the model's tool calls (each reply's, once), calls to a tool the request
did not offer, arguments that are not a JSON object or miss a required property of the tool's
schema, and the closing message (the last reply's text when it called no tool). What the agent's
tools did with a call (an edit that failed, a command that timed out) is only free text in the
results it sent back: those parts are not observed, and left out rather than counted as 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from evalkit.models.messages import text_of

# interaction penalties the traffic cannot show: the agent's tools decide them, or they are
# evalkit's own loop's (nudges, tool calls in text, bash writes beside write_file / edit)
NOT_OBSERVED = ("failed_edit", "tool_error", "timeout", "no_tool_call", "text_tool_call", "bash_write")


@dataclass
class TrafficFacts:
    calls: list[tuple[str, str]] = field(default_factory=list)  # (tool name, raw arguments), as the model made them
    malformed: int = 0  # arguments not a JSON object, or missing a property the tool's schema requires
    unknown_tool: int = 0  # a tool the request did not offer
    final_message: str | None = None  # the last reply's text, when that reply called no tool


def _schemas(tools: object) -> dict[str, dict]:
    """Tool name → its parameters schema, from a request's `tools` list (whatever shape it has)."""
    found = {}
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            found[function["name"]] = parameters if isinstance(parameters, dict) else {}
    return found


def _malformed(arguments: str, schema: dict) -> bool:
    try:
        parsed = json.loads(arguments or "{}")
    except (json.JSONDecodeError, TypeError):
        return True
    required = schema.get("required")
    missing = [name for name in required if name not in parsed] if isinstance(required, list) else []
    return not isinstance(parsed, dict) or bool(missing)


def read_traffic(events: list[dict]) -> TrafficFacts:
    """The facts of a proxied attempt's trajectory (see the module's docstring)."""
    facts = TrafficFacts()
    offered: dict[str, dict] | None = None  # None: no request offered tools yet
    replied = False  # the next message event is a reply of the model
    for event in events:
        kind = event.get("type")
        if kind == "proxy_request" and "tools" in event:
            offered = _schemas(event["tools"]) if event["tools"] else None
        elif kind == "model_call":
            replied = "failed" not in event
        elif kind == "message" and replied:
            replied = False
            message = event.get("message") if isinstance(event.get("message"), dict) else {}
            calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            for call in calls:
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                name, arguments = str(function.get("name")), str(function.get("arguments") or "")
                facts.calls.append((name, arguments))
                if offered is not None and name not in offered:
                    facts.unknown_tool += 1
                else:
                    facts.malformed += _malformed(arguments, (offered or {}).get(name, {}))
            text = text_of(message.get("content")).strip()
            facts.final_message = text if text and not calls else None
    return facts
