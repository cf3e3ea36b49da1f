"""The keyword arguments of one `chat.completions.create` call for a ModelSpec: sampling and the
endpoint knobs, shaped the way servers accept them.

A reasoning model (`reasoning = true`) gets no temperature, top_p or max_tokens, which OpenAI's
reasoning models refuse, and its completion limit as `max_completion_tokens`; other models keep
`max_tokens`, which older servers know, unless `max_completion_tokens` is set explicitly.
`tool_choice` and `parallel_tool_calls` are sent only with tools, since servers refuse them alone.

The messages and tools travel in `extra_body`, as they are (plain JSON already), with an empty
`messages` argument: the SDK's per-key transform of its typed parameters is pure overhead on them
and costs milliseconds per call on a long conversation (nine tenths of a call to a local server,
twice per call through the model proxy). The body on the wire is the same.
"""

from __future__ import annotations

from evalkit.models.endpoint import TOOL_CHOICES, ModelSpec

REASONING_REFUSES = ("max_tokens", "temperature", "top_p")
NO_PARAMETERS = {"type": "object", "properties": {}}


def wire_tool(tool: object) -> object:
    """A function tool as the strictest servers take it. OpenAI lets `parameters` be left out (a
    function of no arguments: Qwen Code sends such tools), llama-cpp-python answers 500 "Field
    required": it gets the empty object schema, which says the same."""
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or function.get("parameters") is not None:
        return tool
    return {**tool, "function": {**function, "parameters": NO_PARAMETERS}}


def tool_choice_param(choice: str) -> str | dict:
    """`auto`, `required` and `none` as they are; any other value names the one tool to call."""
    return choice if choice in TOOL_CHOICES else {"type": "function", "function": {"name": choice}}


def request_options(spec: ModelSpec, messages: list[dict], tools: list[dict], headers: dict[str, str]) -> dict:
    """Everything but the timeout; `headers` are the extra headers' values, read by the caller."""
    options: dict = {"model": spec.model, "messages": []}
    body: dict = {"messages": messages}
    if tools:  # some servers refuse an empty tool list
        body["tools"] = [wire_tool(tool) for tool in tools]
        if spec.tool_choice is not None:
            options["tool_choice"] = tool_choice_param(spec.tool_choice)
        if spec.parallel_tool_calls is not None:
            options["parallel_tool_calls"] = spec.parallel_tool_calls
    sampling = spec.sampling.request_kwargs()
    limit = spec.max_completion_tokens
    if spec.reasoning:
        limit = limit or sampling.get("max_tokens")
        sampling = {k: v for k, v in sampling.items() if k not in REASONING_REFUSES}
    elif limit is not None:
        sampling.pop("max_tokens", None)
    options.update(sampling)
    if limit is not None:
        options["max_completion_tokens"] = limit
    if spec.reasoning_effort is not None:
        options["reasoning_effort"] = spec.reasoning_effort
    if spec.stop:
        options["stop"] = spec.stop
    if spec.stream:
        options["stream"] = True
        options["stream_options"] = {"include_usage": True}
    options["extra_body"] = {**body, **spec.extra_body}  # extra_body cannot name messages or tools
    if headers:
        options["extra_headers"] = headers
    return options
