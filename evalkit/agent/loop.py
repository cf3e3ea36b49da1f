"""The agent loop, whole: system + task prompt → model → tool calls run in the sandbox → tool
results back → … until the model submits, answers without a tool call, or a budget runs out.

Every fault of the model or the endpoint ends up in the outcome (a stop reason, counters, an
error string) and in the trajectory; only a lost sandbox or an interrupt escapes as an exception.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from evalkit.agent.protocol import AgentOutcome
from evalkit.agent.text_calls import parse_text_tool_calls
from evalkit.agent.tools import (
    ASK_USER,
    ASK_USER_SCHEMA,
    TOOL_NAMES,
    TOOL_SCHEMAS,
    AskUserArgs,
    ToolBox,
    ToolOutcome,
    parse_arguments,
)
from evalkit.errors import SandboxError
from evalkit.models.client import ChatClient, EndpointError
from evalkit.records import StopReason
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter
from evalkit.user.channel import UserChannel

SYSTEM_PROMPT = """\
You are a software engineer working in a git repository checked out at {workdir}.
Make the change the user asks for, using the tools: run commands with `bash`, read and write files
with `read_file`, `write_file` and `edit`, and find code with `search`. Hidden tests will check the
change, so keep the existing behaviour working. When you are done, call `submit` with a short
summary of what you changed and in which files. {asking}"""
NO_QUESTIONS = "You cannot ask questions; nobody will answer."
ASKING = (
    "You may ask the user who wrote the request with `ask_user`, at most {max_questions} times; they are "
    "busy and answer briefly, so ask only what the code and the request do not tell you."
)


def system_prompt(workdir: str, user: UserChannel | None) -> str:
    """The system message; it says whether anyone will answer a question, and how many."""
    line = ASKING.format(max_questions=user.max_questions) if user is not None else NO_QUESTIONS
    return SYSTEM_PROMPT.format(workdir=workdir, asking=line)


NUDGE = (
    "Your last reply called no tool, so nothing happened. Use the tools to work on the task "
    "(`bash`, `read_file`, `write_file`, `edit`, `search`), or call `submit` with a short summary when you are done."
)
TEXT_FORMAT_HINT = (
    ' Write each tool call as <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>.'
)


@dataclass(frozen=True)
class TurnPolicy:
    """What the loop does with a reply that has no native tool call."""

    on_text: str = "nudge"  # "nudge": remind the model and go on (up to max_nudges); "stop": end the attempt
    max_nudges: int = 3
    tool_call_format: str = "native"  # "text": also parse tool calls written into the reply's text


def run_agent(
    prompt: str,
    toolbox: ToolBox,
    client: ChatClient,
    limits: Limits,
    trajectory: TrajectoryWriter,
    deadline: float,
    policy: TurnPolicy | None = None,
    user: UserChannel | None = None,
) -> AgentOutcome:
    """Drive one attempt to its end; `deadline` is a time.monotonic() value. With `user`, the model
    is offered `ask_user` too, answered through it (never by the sandbox)."""
    policy = policy or TurnPolicy()
    text_mode = policy.tool_call_format == "text"
    tools = [*TOOL_SCHEMAS, ASK_USER_SCHEMA] if user is not None else TOOL_SCHEMAS
    names = TOOL_NAMES | {ASK_USER} if user is not None else TOOL_NAMES
    nudges = 0
    messages: list[dict] = [
        {"role": "system", "content": system_prompt(toolbox.sandbox.workdir, user)},
        {"role": "user", "content": prompt},
    ]
    for message in messages:
        trajectory.message(message)
    out = AgentOutcome(StopReason.MAX_TURNS)

    def stop(reason: StopReason, error: str | None = None) -> AgentOutcome:
        if reason is StopReason.WALL_TIME:
            toolbox.sandbox.kill_all()  # nothing the agent started may outlive its attempt
        out.stop_reason, out.error = reason, error
        trajectory.event("stop", stop_reason=reason.value, error=error)
        return out

    while True:
        if out.turns >= limits.max_turns:
            return stop(StopReason.MAX_TURNS)
        if out.usage.total_tokens >= limits.max_tokens:
            return stop(StopReason.MAX_TOKENS)
        if time.monotonic() >= deadline:
            return stop(StopReason.WALL_TIME)
        try:
            reply = client.complete(messages, tools, deadline)
        except EndpointError as exc:
            out.retries.update(r.kind for r in exc.retries)
            trajectory.event("model_call", turn=out.turns + 1, failed=exc.kind, retries=[vars(r) for r in exc.retries])
            kind = {"context_overflow": StopReason.CONTEXT_OVERFLOW, "wall_time": StopReason.WALL_TIME}
            return stop(kind.get(exc.kind, StopReason.ENDPOINT_ERROR), str(exc))
        out.turns += 1
        out.usage += reply.usage
        out.model_time_s += reply.latency_s
        out.retries.update(r.kind for r in reply.retries)
        trajectory.event(
            "model_call",
            turn=out.turns,
            latency_s=round(reply.latency_s, 4),
            usage=reply.usage.as_dict(),
            finish_reason=reply.finish_reason,
            retries=[vars(r) for r in reply.retries],
            response_id=reply.raw.get("id"),
            response_model=reply.raw.get("model"),
            reported_usage=reply.raw.get("usage"),  # the provider's own figures, untouched
            reasoning=reply.reasoning,  # kept here, never sent back
        )
        messages.append(reply.message)
        trajectory.message(reply.message)
        calls = reply.message.get("tool_calls") or []
        if not calls and text_mode:
            calls = parse_text_tool_calls(reply.message.get("content"), names, out.turns)
            out.faults["text_tool_call"] += len(calls)
            if calls:
                trajectory.event("text_tool_calls", turn=out.turns, calls=calls)
        if not calls:
            out.final_message = reply.message.get("content")
            if policy.on_text != "nudge" or nudges >= policy.max_nudges:
                return stop(StopReason.NO_TOOL_CALL)
            nudges += 1
            out.faults["no_tool_call"] += 1
            nudge = {"role": "user", "content": NUDGE + (TEXT_FORMAT_HINT if text_mode else "")}
            messages.append(nudge)
            trajectory.message(nudge)
            continue
        native = bool(reply.message.get("tool_calls"))
        submitted = None
        for call in calls:
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            try:
                if name == ASK_USER and user is not None:
                    result = _ask(user, arguments, trajectory, out.turns, call["id"], deadline)
                else:
                    result = toolbox.run(name, arguments, time_left_s=deadline - time.monotonic())
            except SandboxError as exc:
                return stop(StopReason.SANDBOX_ERROR, str(exc))
            out.tool_calls += 1
            out.sandbox_time_s += result.sandbox_s
            if result.fault:
                out.faults[result.fault.value] += 1
            tool_message = (
                {"role": "tool", "tool_call_id": call["id"], "content": result.content}
                if native  # a reply whose calls were parsed from its text gets the results as text too
                else {"role": "user", "content": f"Result of `{name}`:\n{result.content}"}
            )
            messages.append(tool_message)
            trajectory.message(tool_message)
            trajectory.event(
                "tool",
                turn=out.turns,
                call_id=call["id"],
                name=name,
                fault=result.fault.value if result.fault else None,
                exit_code=result.exit_code,
                truncated=result.truncated,
                sandbox_s=round(result.sandbox_s, 4),
            )
            if result.submitted is not None:
                submitted = result.submitted
                break
        if submitted is not None:
            out.final_message = submitted
            return stop(StopReason.SUBMITTED)


def _ask(
    user: UserChannel, arguments: str | None, trajectory: TrajectoryWriter, turn: int, call_id: str, deadline: float
) -> ToolOutcome:
    """An `ask_user` call: its question to the simulated user, the exchange in a `user` event."""
    args = parse_arguments(ASK_USER, arguments, AskUserArgs)
    if isinstance(args, ToolOutcome):
        return args
    answer, fields = user.ask(args.question, deadline)
    trajectory.event("user", turn=turn, call_id=call_id, **fields)
    return ToolOutcome(answer)
