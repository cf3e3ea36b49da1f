"""The agent's tools: their JSON schemas (what the model sees) and their execution in a sandbox.

Each tool's arguments are a strict pydantic model; its schema is generated from that model, so
what the model is told and what is checked cannot drift apart. Every way a tool call can go wrong
(bad JSON, unknown tool, bad arguments, a failing tool) becomes an error message back to the
model and a counted `ToolFault`, never an exception.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import SandboxError
from evalkit.records import ToolFault
from evalkit.sandbox.protocol import Sandbox


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


ArgsT = TypeVar("ArgsT", bound=_Args)


class BashArgs(_Args):
    """Run a shell command in the repository (a persistent bash: cd and exports persist)."""

    command: str
    timeout: float | None = Field(None, gt=0, description="Seconds; capped by the task's command timeout.")


class ReadFileArgs(_Args):
    """Read a text file."""

    path: str = Field(..., description="Path relative to the repository root, or absolute.")


class WriteFileArgs(_Args):
    """Create or overwrite a file with the given content (parent folders are created)."""

    path: str = Field(..., description="Path relative to the repository root, or absolute.")
    content: str


class EditArgs(_Args):
    """Replace exactly one occurrence of old_string with new_string in a file."""

    path: str = Field(..., description="Path relative to the repository root, or absolute.")
    old_string: str = Field(..., description="Text to find; must occur exactly once.")
    new_string: str


class SearchArgs(_Args):
    """Search file contents for a regular expression (ripgrep), printing file:line:text."""

    pattern: str
    path: str = Field(".", description="Folder or file to search; default the repository root.")


class SubmitArgs(_Args):
    """Finish the task: say what you changed and why."""

    summary: str


class AskUserArgs(_Args):
    """Ask the user who wrote the request one short question about what they want (not about the code,
    which you can read). They are busy: a few questions at most, answered briefly."""

    question: str = Field(..., min_length=1)


TOOL_ARGS: dict[str, type[_Args]] = {
    "bash": BashArgs,
    "read_file": ReadFileArgs,
    "write_file": WriteFileArgs,
    "edit": EditArgs,
    "search": SearchArgs,
    "submit": SubmitArgs,
}
TOOL_NAMES = frozenset(TOOL_ARGS)
MAX_EDIT_BYTES = 64 * 1024 * 1024  # a file `edit` reads whole to replace text in


def _schema(name: str, model: type[_Args]) -> dict:
    parameters = model.model_json_schema()
    parameters.pop("title", None)
    parameters.pop("description", None)
    for prop in parameters["properties"].values():
        prop.pop("title", None)
        if "anyOf" in prop:  # `float | None`: tell the model the plain type; None is the default
            prop.update(next(p for p in prop.pop("anyOf") if p.get("type") != "null"))
            prop.pop("default", None)
    return {
        "type": "function",
        "function": {"name": name, "description": (model.__doc__ or "").strip(), "parameters": parameters},
    }


TOOL_SCHEMAS: list[dict] = [_schema(name, model) for name, model in TOOL_ARGS.items()]
ASK_USER = "ask_user"  # offered only when the attempt has a simulated user (user/channel.py answers it)
ASK_USER_SCHEMA: dict = _schema(ASK_USER, AskUserArgs)


def parse_arguments(name: str, raw_arguments: str | None, model: type[ArgsT]) -> ArgsT | ToolOutcome:
    """The call's arguments checked against its tool's model, or the error the model sees."""
    try:
        decoded = json.loads(raw_arguments or "{}")
    except (json.JSONDecodeError, TypeError) as exc:
        return ToolOutcome(f"Error: the arguments of `{name}` are not valid JSON ({exc}).", ToolFault.MALFORMED_JSON)
    if not isinstance(decoded, dict):
        return ToolOutcome(f"Error: the arguments of `{name}` must be a JSON object.", ToolFault.MALFORMED_JSON)
    try:
        return model.model_validate(decoded)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return ToolOutcome(f"Error: bad arguments for `{name}`: {problems}.", ToolFault.BAD_ARGUMENTS)


@dataclass(frozen=True)
class ToolOutcome:
    """What goes back to the model for one call, and what the harness learnt from it."""

    content: str
    fault: ToolFault | None = None
    sandbox_s: float = 0.0
    truncated: bool = False
    exit_code: int | None = None
    submitted: str | None = None  # the summary, when this call was `submit`


class ToolBox:
    """Executes tool calls in one sandbox, as the sandbox's unprivileged user.

    Files are read and written by the sandbox's command server as that user (not through the
    engine's archive API), so the agent has exactly the permissions of its user; a relative path
    is taken from the shell's current folder, as in a command.
    """

    def __init__(self, sandbox: Sandbox, command_timeout_s: float, output_limit: int) -> None:
        self.sandbox = sandbox
        self.command_timeout_s = command_timeout_s
        self.output_limit = output_limit

    def run(self, name: str, raw_arguments: str | None, time_left_s: float | None = None) -> ToolOutcome:
        model = TOOL_ARGS.get(name)
        if model is None:
            return ToolOutcome(
                f"Error: unknown tool `{name}`. Available tools: {', '.join(sorted(TOOL_NAMES))}.",
                ToolFault.UNKNOWN_TOOL,
            )
        args = parse_arguments(name, raw_arguments, model)
        if isinstance(args, ToolOutcome):
            return args
        timeout = self.command_timeout_s if time_left_s is None else max(1.0, min(self.command_timeout_s, time_left_s))
        started = time.perf_counter()
        try:
            outcome = getattr(self, f"_{name}")(args, timeout)
        except SandboxError:
            raise  # the sandbox itself is gone: the attempt cannot go on
        except Exception as exc:  # noqa: BLE001 - any other tool failure is the model's to see
            outcome = ToolOutcome(f"Error: {type(exc).__name__}: {exc}", ToolFault.TOOL_ERROR)
        return ToolOutcome(
            outcome.content,
            outcome.fault,
            time.perf_counter() - started,
            outcome.truncated,
            outcome.exit_code,
            outcome.submitted,
        )

    # -- tools ------------------------------------------------------------------------------
    def _exec(self, cmd: str, timeout: float) -> ToolOutcome:
        result = self.sandbox.exec(cmd, timeout=timeout, output_limit=self.output_limit)
        text = result.stdout + (("\n" if result.stdout and not result.stdout.endswith("\n") else "") + result.stderr)
        if result.timed_out:
            return ToolOutcome(
                f"{text}\n[command timed out after {timeout:g}s; it and every process it started were killed]",
                ToolFault.TIMEOUT,
                truncated=result.truncated,
                exit_code=result.exit_code,
            )
        return ToolOutcome(text, truncated=result.truncated, exit_code=result.exit_code)

    def _bash(self, args: BashArgs, timeout: float) -> ToolOutcome:
        timeout = min(args.timeout, timeout) if args.timeout else timeout
        outcome = self._exec(args.command, timeout)
        if outcome.fault:
            return outcome
        body = outcome.content if outcome.content else ""
        return ToolOutcome(
            f"{body}{'' if not body or body.endswith(chr(10)) else chr(10)}[exit code {outcome.exit_code}]",
            truncated=outcome.truncated,
            exit_code=outcome.exit_code,
        )

    def _read_file(self, args: ReadFileArgs, timeout: float) -> ToolOutcome:
        result = self.sandbox.read_as_user(args.path, timeout=timeout, output_limit=self.output_limit)
        if not result.ok:
            return ToolOutcome(
                f"Error: cannot read {args.path}: {(result.stdout + result.stderr).strip()}", ToolFault.TOOL_ERROR
            )
        return ToolOutcome(result.stdout, truncated=result.truncated, exit_code=0)

    def _write(self, path: str, content: str, timeout: float) -> ToolOutcome:
        data = content.encode()
        result = self.sandbox.write_as_user(path, data, timeout=timeout)
        if not result.ok:
            return ToolOutcome(
                f"Error: cannot write {path}: {(result.stdout + result.stderr).strip()}", ToolFault.TOOL_ERROR
            )
        return ToolOutcome(f"Wrote {len(data)} bytes to {path}.", exit_code=0)

    def _write_file(self, args: WriteFileArgs, timeout: float) -> ToolOutcome:
        return self._write(args.path, args.content, timeout)

    def _edit(self, args: EditArgs, timeout: float) -> ToolOutcome:
        if not args.old_string:
            return ToolOutcome("Error: old_string is empty; use write_file to create a file.", ToolFault.TOOL_ERROR)
        current = self.sandbox.read_as_user(args.path, timeout=timeout, output_limit=MAX_EDIT_BYTES)
        if not current.ok:
            return ToolOutcome(f"Error: cannot read {args.path}: {current.stderr.strip()}", ToolFault.TOOL_ERROR)
        if current.truncated:
            return ToolOutcome(
                f"Error: {args.path} is larger than {MAX_EDIT_BYTES} bytes; edit it with bash.", ToolFault.TOOL_ERROR
            )
        count = current.stdout.count(args.old_string)
        if count == 0:
            return ToolOutcome(
                f"Error: old_string was not found in {args.path}; nothing changed. "
                "Read the file and copy the text exactly.",
                ToolFault.TOOL_ERROR,
            )
        if count > 1:
            return ToolOutcome(
                f"Error: old_string occurs {count} times in {args.path}; nothing changed. "
                "Include more surrounding lines so it occurs once.",
                ToolFault.TOOL_ERROR,
            )
        written = self._write(args.path, current.stdout.replace(args.old_string, args.new_string, 1), timeout)
        if written.fault:
            return written
        return ToolOutcome(f"Edited {args.path}: replaced 1 occurrence.", exit_code=0)

    def _search(self, args: SearchArgs, timeout: float) -> ToolOutcome:
        cmd = f"rg --line-number --no-heading --color never -e {shlex.quote(args.pattern)} -- {shlex.quote(args.path)}"
        outcome = self._exec(cmd, timeout)
        if outcome.fault:
            return outcome
        if outcome.exit_code == 1:
            return ToolOutcome("No matches.", exit_code=1)
        if outcome.exit_code != 0:
            return ToolOutcome(f"Error: search failed: {outcome.content.strip()}", ToolFault.TOOL_ERROR)
        return outcome

    def _submit(self, args: SubmitArgs, timeout: float) -> ToolOutcome:
        return ToolOutcome("Submitted.", submitted=args.summary)
