"""`command:TEMPLATE`: any agent evalkit did not write, run as one shell command in the workspace.

The command runs as the sandbox user in a sandbox that reaches only the run's model proxy, under
the attempt's wall time, with `EVALKIT_PROMPT` (the task), `OPENAI_BASE_URL` (the proxy) and
`OPENAI_API_KEY` (the attempt's own token) set. What the agent says to its model goes through the
attempt's `AttemptChannel`, which records it, counts it and enforces the budgets; the agent's own
stdout and stderr are kept beside the trajectory (`<attempt>.agent.log`). How the attempt ended:
a budget or upstream failure as the channel says, else `wall_time` when the command was killed at
the deadline, else `agent_error` when it exited non-zero (it crashed; its last line on stderr, else on
stdout, is the error), else `submitted` (it finished). Whatever it left running is killed before the diff.

An installed agent (`installed.py`) is this same agent with a name, a version, its own
variables and files it writes outside the workspace (its logs), copied out beside the trajectory
before the sandbox goes.

With a simulated user, the attempt's sandbox gets the `ask-user` command (/usr/local/bin), its
prompt a line saying so and the budget, and its variables `EVALKIT_USER_URL`/`EVALKIT_USER_TOKEN`:
the question goes to the proxy, which asks the user on the host (`AttemptChannel.ask_user`).
"""

from __future__ import annotations

import io
import posixpath
import shlex
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.agent.protocol import AgentOutcome
from evalkit.axes import DIFF, TRAFFIC, USAGE
from evalkit.bridge.channel import AttemptChannel
from evalkit.bridge.proxy import ASK_USER_ROUTE
from evalkit.bridge.run_proxy import RunProxy
from evalkit.errors import SandboxError
from evalkit.models.client import ChatClient
from evalkit.records import StopReason
from evalkit.sandbox.egress import Egress
from evalkit.sandbox.protocol import ExecResult, Sandbox
from evalkit.sandbox.workspace import tar_single_file
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter
from evalkit.user.channel import UserChannel

LOG_SUFFIX = ".agent.log"
ASK_USER_PATH = "/usr/local/bin/ask-user"  # on every shell's PATH
ASK_USER_SOURCE = Path(__file__).resolve().parents[1] / "bridge" / "ask_user_command.py"
ASK_COMMAND = (  # added to the prompt when the attempt has a user
    "If the request leaves out something you need to know, you may ask the user who wrote it: run "
    '`ask-user "your question"` in the shell, at most {max_questions} times. They are busy and answer '
    "briefly, so ask only what the code and the request do not tell you."
)


def agent_log_path(trajectory: Path) -> Path:
    """Where an attempt's agent output is kept: beside its trajectory, same name."""
    return trajectory.with_name(trajectory.name.removesuffix(".jsonl") + LOG_SUFFIX)


def kept_file_path(trajectory: Path, path: str) -> Path:
    """Where a file the agent wrote in its sandbox (`path`) is kept: beside the trajectory as
    `<attempt>.agent.<file name>`."""
    return trajectory.with_name(trajectory.name.removesuffix(".jsonl") + f".agent.{Path(path).name}")


def _copy_out(sandbox: Sandbox, path: str, dest: Path) -> str | None:
    """`path` of the sandbox written to `dest`; None when done, else why not (kept in the log)."""
    try:
        archive = sandbox.copy_out(path)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            member = next((m for m in tar.getmembers() if m.isfile()), None)
            source = tar.extractfile(member) if member is not None else None
            if source is None:
                return f"{path}: not a file"
            dest.write_bytes(source.read())
    except (SandboxError, FileNotFoundError, tarfile.TarError) as exc:
        return f"{path}: not copied ({exc})"
    return None


def install_ask_user(sandbox: Sandbox) -> None:
    """Put the `ask-user` command into the sandbox, executable by the sandbox user."""
    body = b"#!/usr/bin/env python3\n" + ASK_USER_SOURCE.read_bytes()
    folder, name = posixpath.split(ASK_USER_PATH)
    sandbox.copy_in(tar_single_file(name, body, mode=0o755), folder)


def agent_command(template: str, env: dict[str, str]) -> str:
    """`template` run by its own bash with `env` set, stdin closed; the sandbox's shell keeps none of it."""
    assignments = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    return f"{assignments} bash -c {shlex.quote(template)} </dev/null"


def _log_text(template: str, result: ExecResult) -> str:
    state = " (killed at the attempt's wall time)" if result.timed_out else ""
    cut = " (output cut: head and tail kept)" if result.truncated else ""
    return (
        f"$ {template}\nexit code {result.exit_code}{state}{cut}, {result.duration:.2f} s\n"
        f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n"
    )


def _last_line(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def exit_error(result: ExecResult) -> str | None:
    """Why a command that exited non-zero failed, in its own last words: its last line on stderr,
    else on stdout (mini-swe-agent prints only its exit status there, e.g. RepeatedFormatError)."""
    if result.exit_code == 0:
        return None
    last = _last_line(result.stderr) or _last_line(result.stdout)
    return f"the agent command exited with code {result.exit_code}" + (f": {last[:300]}" if last else "")


def _ending(result: ExecResult) -> StopReason:
    """How a command that no budget stopped ended: killed at the deadline, crashed (a non-zero
    exit, told apart from an agent that finished), or finished."""
    if result.timed_out:
        return StopReason.WALL_TIME
    return StopReason.AGENT_ERROR if result.exit_code != 0 else StopReason.SUBMITTED


@dataclass
class CommandAgent:
    """Runs `template` in the workspace, its model reached only through `proxy`."""

    template: str
    client: ChatClient  # the attempt's model, on the host
    proxy: RunProxy
    output_limit: int  # bytes of each output stream kept in the agent's log (head + tail)
    # recorded on every attempt: an installed agent's name, else `command:` and the command, folded (command_name)
    name: str
    tools: list[dict] = field(default_factory=list)  # the agent offers its own, recorded per request
    evidence: frozenset[str] = frozenset({DIFF, USAGE, TRAFFIC})  # its tools are its own: no evalkit tool events
    egress: Egress = "proxy"
    env: dict[str, str] = field(default_factory=dict)  # more variables for the command
    layer: str | None = None  # the installed agent whose files the sandbox's image gets
    version: str | None = None  # recorded with every attempt
    keep: tuple[str, ...] = ()  # files the agent writes in its sandbox, kept beside the trajectory
    asks_user: bool = True  # through the `ask-user` command in its sandbox

    def run(
        self,
        prompt: str,
        sandbox: Sandbox,
        limits: Limits,
        trajectory: TrajectoryWriter,
        deadline: float,
        user: UserChannel | None = None,
    ) -> AgentOutcome:
        if sandbox.proxy_url is None:
            raise SandboxError("the agent's sandbox has no route to the model proxy")
        channel = AttemptChannel(self.client, trajectory, limits, deadline, user=user)
        token = self.proxy.register(channel)
        try:
            env = {
                **self.env,
                "EVALKIT_PROMPT": prompt,
                "EVALKIT_MODEL": self.client.spec.name,
                "EVALKIT_COMMAND_TIMEOUT": f"{limits.command_timeout_s:g}",
                "OPENAI_BASE_URL": f"{sandbox.proxy_url}/v1",
                "OPENAI_API_KEY": token,
            }
            if user is not None:
                install_ask_user(sandbox)
                asking = ASK_COMMAND.format(max_questions=user.max_questions)
                env |= {"EVALKIT_PROMPT": f"{prompt}\n\n{asking}", "EVALKIT_USER_TOKEN": token,
                        "EVALKIT_USER_URL": f"{sandbox.proxy_url}/v1{ASK_USER_ROUTE}"}  # fmt: skip
            trajectory.event("agent_command", command=self.template, log=agent_log_path(trajectory.path).name)
            time_left = deadline - time.monotonic()
            result = (
                sandbox.exec(agent_command(self.template, env), timeout=time_left, output_limit=self.output_limit)
                if time_left > 0
                else ExecResult(124, "", "not started: no wall time left", 0.0, timed_out=True)
            )
        finally:
            self.proxy.unregister(token)
        channel.settle()  # a request the model never answered ends now, as wall_time with its error
        sandbox.kill_all()  # what the agent left running (daemons, setsid) must not touch its diff
        notes = [n for path in self.keep if (n := _copy_out(sandbox, path, kept_file_path(trajectory.path, path)))]
        log = _log_text(self.template, result) + "".join(f"--- not kept: {note}\n" for note in notes)
        agent_log_path(trajectory.path).write_text(log, encoding="utf-8")
        trajectory.event("agent_exit", exit_code=result.exit_code, timed_out=result.timed_out,
                         truncated=result.truncated, duration_s=round(result.duration, 3))  # fmt: skip
        out = AgentOutcome(
            channel.stop_reason or _ending(result),
            turns=channel.turns,
            tool_calls=channel.tool_calls,
            final_message=channel.final_message,
            usage=channel.usage,
            retries=channel.retries,
            model_time_s=channel.model_time_s,
            sandbox_time_s=result.duration,
            error=channel.error or (None if result.timed_out else exit_error(result)),
        )
        trajectory.event("stop", stop_reason=out.stop_reason.value, error=out.error)
        return out
