"""Harness overhead of `evalkit run` with the built-in oracle model, measured through the CLI.

1. Per task and per agent step at concurrency 1: wall time, model-server time, test time and what
   is left (the harness); per step, (agent phase - model time) / turns, with and without the
   tool's sandbox execution.
2. Tasks per minute of a whole `evalkit run` of the suite at each --concurrency, side by side.
3. A reference harness: mini-swe-agent (installed into a throwaway venv, default
   /tmp/mswea-venv, reused when it already works) with its docker environment, replaying the
   oracle's steps as bash tool calls served by `evalkit serve --policy replay`; the per-step
   overhead of both and their ratio. If it cannot be installed or run, the plain `docker exec`
   baseline instead: the oracle's per-step tool work through `DockerSandbox.docker_exec` next to
   the persistent shell (`DockerSandbox.exec`), in the same sandboxes.

Each of 1-3 is printed with evalkit's sandbox pool on and off (`--pool both`, the default; runs
interleaved so drift spreads over both), the ratios taken within this one run.

Medians throughout; everything goes to temporary folders and every container is removed.

    python benchmarks/run_overhead.py [--repeats 2] [--concurrency 1 2 4] [--reference mswea|docker-exec|none]
                                      [--pool both|on|off]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import posixpath
import secrets
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.records import AttemptRecord
from evalkit.runs.store import RunStore
from evalkit.sandbox.docker.backend import DockerBackend, docker_client
from evalkit.sandbox.docker.containers import LABEL_RUN, owner_label, prune
from evalkit.tasks import Task, load_suite

ROOT = Path(__file__).resolve().parents[1]
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # how a mini-swe-agent run ends
MSWEA_RUN_ID = "bench-run-overhead-mswea"
BASELINE_RUN_ID = "bench-run-overhead-exec"

# Runs in the mini-swe-agent venv: one attempt per job, sequentially, timed like evalkit's attempt
# (agent phase = sandbox start .. diff and removal; loop = agent.run()).
MSWEA_DRIVER = r"""
import json, logging, subprocess, sys, time

from minisweagent.agents.default import DefaultAgent
from minisweagent.config import get_config_from_spec
from minisweagent.environments.docker import DockerEnvironment
from minisweagent.models.litellm_model import LitellmModel

logging.disable(logging.WARNING)
spec = json.load(open(sys.argv[1]))
config = get_config_from_spec("mini.yaml")


class TimedModel(LitellmModel):
    model_s = 0.0

    def _query(self, messages, **kwargs):
        started = time.perf_counter()
        try:
            return super()._query(messages, **kwargs)
        finally:
            self.model_s += time.perf_counter() - started


class TimedEnvironment(DockerEnvironment):
    sandbox_s = 0.0
    actions = 0

    def execute(self, action, cwd="", *, timeout=None):
        started = time.perf_counter()
        try:
            return super().execute(action, cwd, timeout=timeout)
        finally:
            self.sandbox_s += time.perf_counter() - started
            self.actions += 1


with open(sys.argv[2], "w") as out:
    for job in spec["jobs"]:
        model = TimedModel(
            **{**config["model"], "model_name": "openai/" + spec["model"], "cost_tracking": "ignore_errors"},
        )
        model.config.model_kwargs = {**model.config.model_kwargs, "api_base": spec["base_url"], "api_key": "none"}
        started = time.perf_counter()
        env = TimedEnvironment(
            image=job["image"],
            cwd=spec["workdir"],
            env={**config["environment"]["env"], **spec["env"]},
            timeout=120,
            run_args=["--rm", *job["run_args"]],
        )
        try:
            with open(job["workspace"], "rb") as tar:
                subprocess.run(["docker", "cp", "-", env.container_id + ":" + spec["workdir"]], stdin=tar, check=True,
                               capture_output=True)
            agent = DefaultAgent(model, env, system_template=config["agent"]["system_template"],
                                 instance_template=config["agent"]["instance_template"],
                                 step_limit=spec["step_limit"], cost_limit=0)
            loop_started = time.perf_counter()
            result = agent.run(task=job["prompt"])
            loop_s = time.perf_counter() - loop_started
            sandbox_s, actions = env.sandbox_s, env.actions
            diff = env.execute({"command": "git add --all && git diff --cached --binary " + job["base_commit"]})
        finally:
            subprocess.run(["docker", "rm", "-f", env.container_id], capture_output=True)
            env.container_id = None
        row = {
            "task_id": job["task_id"], "exit_status": result.get("exit_status"), "turns": agent.n_calls,
            "actions": actions, "agent_s": time.perf_counter() - started, "loop_s": loop_s,
            "model_s": model.model_s, "sandbox_s": sandbox_s, "patch": diff["output"],
        }
        out.write(json.dumps(row) + "\n")
        out.flush()
"""


@dataclass
class Attempt:
    """One evalkit attempt: its results row and the phase times read from its trajectory."""

    record: AttemptRecord
    open_s: float  # sandbox start, workspace copy, command server up to the first message
    loop_s: float  # first message to the stop event: the agent loop
    close_s: float  # diff and container removal
    turns: list[list[dict]] = field(default_factory=list)  # the tool calls of each assistant turn
    prompt: str = ""

    @property
    def overhead_s(self) -> float:
        return self.record.duration_s - self.record.model_time_s - self.record.test_time_s

    def per_step(self, seconds: float) -> float:
        return seconds / max(1, self.record.turns)


@dataclass
class EvalkitRun:
    concurrency: int
    wall_s: float
    attempts: list[Attempt]
    pool: bool = True


def pool_label(pool: bool) -> str:
    return "pool on" if pool else "pool off"


def median(values) -> float:
    values = list(values)
    return statistics.median(values) if values else float("nan")


def evalkit_command() -> list[str]:
    script = Path(sys.executable).with_name("evalkit")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from evalkit.cli import main; main()"]


def read_attempt(run_dir: Path, record: AttemptRecord) -> Attempt:
    events = [json.loads(line) for line in (run_dir / record.trajectory).read_text().splitlines() if line.strip()]
    times = {}
    for event in events:
        times.setdefault(event["type"], event["t"])
    prompt = next(e["message"]["content"] for e in events if e["type"] == "message" and e["message"]["role"] == "user")
    turns = [
        e["message"].get("tool_calls") or []
        for e in events
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    return Attempt(
        record,
        open_s=times["message"] - times["start"],
        loop_s=times["stop"] - times["message"],
        close_s=times["diff"] - times["stop"],
        turns=turns,
        prompt=prompt,
    )


def evalkit_run(suite: Path, out: Path, run_id: str, concurrency: int, pool: bool = True) -> EvalkitRun:
    command = [*evalkit_command(), "run", "--suite", str(suite), "--model", "oracle", "--run-id", run_id]
    command += ["--out", str(out), "--concurrency", str(concurrency), *([] if pool else ["--no-pool"])]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"`{shlex.join(command)}` failed ({done.returncode}):\n{done.stderr[-2000:]}")
    store = RunStore(out / run_id)
    records = store.records()
    bad = [r for r in records if not r.resolved or r.error]
    if bad:
        print(f"warning: {run_id}: {len(bad)} attempt(s) unresolved or failed: {[r.task_id for r in bad]}")
    return EvalkitRun(concurrency, wall, [read_attempt(store.dir, r) for r in records], pool)


# -- the oracle's steps as bash commands -------------------------------------------------------
def as_bash(name: str, arguments: str) -> str:
    """The shell command doing what one of evalkit's tool calls does (one command per call)."""
    args = json.loads(arguments or "{}")
    if name == "bash":
        return args["command"]
    if name == "submit":
        return SUBMIT
    if name == "read_file":
        return f"cat -- {shlex.quote(args['path'])}"
    if name == "search":
        pattern, where = shlex.quote(args["pattern"]), shlex.quote(args.get("path", "."))
        return f"rg --line-number --no-heading --color never -e {pattern} -- {where}"
    if name == "write_file":
        parent = posixpath.dirname(args["path"])
        mkdir = f"mkdir -p -- {shlex.quote(parent)} && " if parent else ""
        encoded = base64.b64encode(args["content"].encode()).decode()
        return f"{mkdir}base64 -d > {shlex.quote(args['path'])} <<'EVALKIT_EOF'\n{encoded}\nEVALKIT_EOF"
    if name == "edit":
        script = "\n".join(
            [
                "import pathlib",
                f"path = pathlib.Path({json.dumps(args['path'])})",
                f"old, new = {json.dumps(args['old_string'])}, {json.dumps(args['new_string'])}",
                "text = path.read_bytes().decode()",
                "assert text.count(old) == 1, 'old_string must occur exactly once'",
                "path.write_bytes(text.replace(old, new, 1).encode())",
            ]
        )
        return f"python3 - <<'EVALKIT_EOF'\n{script}\nEVALKIT_EOF"
    raise ValueError(f"no bash equivalent for tool `{name}`")


def bash_turns(attempt: Attempt) -> list[list[str]]:
    return [[as_bash(c["function"]["name"], c["function"]["arguments"]) for c in calls] for calls in attempt.turns]


def write_replay(attempt: Attempt, path: Path) -> None:
    """A trajectory `evalkit serve --policy replay` plays back: the oracle's turns as bash tool calls."""
    lines = [{"type": "message", "message": {"role": "user", "content": attempt.prompt}}]
    for number, commands in enumerate(bash_turns(attempt)):
        calls = [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": c})},
            }
            for i, c in enumerate(commands)
        ]
        lines.append({"type": "message", "message": {"role": "assistant", "content": None, "tool_calls": calls}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


# -- reference 1: mini-swe-agent ---------------------------------------------------------------
class Skip(Exception):
    """The reference harness cannot be run here; the message says why."""


def mswea_python(venv: Path) -> tuple[Path, str]:
    """The venv's python with mini-swe-agent importable (installed now if needed), and a note."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('mini-swe-agent'))"]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode == 0:
            return python, f"mini-swe-agent {found.stdout.strip()} (already in {venv})"
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True, text=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "mini-swe-agent"],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        found = subprocess.run(probe, capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or str(exc)).strip().splitlines()[-1:]
        raise Skip(f"installing mini-swe-agent into {venv} failed: {' '.join(detail)}") from None
    except subprocess.TimeoutExpired:
        raise Skip(f"installing mini-swe-agent into {venv} took over 600 s") from None
    took = time.perf_counter() - started
    return python, f"mini-swe-agent {found.stdout.strip()} (installed into {venv} in {took:.0f} s)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_server(base_url: str, process: subprocess.Popen, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Skip(f"`evalkit serve` exited: {process.stderr.read().strip()[-300:] if process.stderr else ''}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise Skip("`evalkit serve` did not answer within 30 s")


def run_mswea(
    venv: Path, attempts: list[Attempt], tasks: dict[str, Task], repeats: int, tmp: Path
) -> tuple[list[dict], str]:
    python, note = mswea_python(venv)
    replays = tmp / "replay"
    replays.mkdir()
    backend = DockerBackend(docker_client(), run_id=MSWEA_RUN_ID)
    jobs = []
    for attempt in attempts:
        task = tasks[attempt.record.task_id]
        write_replay(attempt, replays / f"{task.id}.jsonl")
        workspace = backend.workspace(task)
        archive = tmp / f"{task.id}.tar"
        archive.write_bytes(workspace.archive)
        labels = {LABEL_RUN: MSWEA_RUN_ID, "evalkit.task_id": task.id, "evalkit.owner": owner_label()}
        jobs.append(
            {
                "task_id": task.id,
                "prompt": attempt.prompt,
                "image": backend.image(task),
                "workspace": str(archive),
                "base_commit": workspace.base_commit,
                # the limits evalkit's sandboxes run with, so only the harness differs
                "run_args": [
                    *("--network", "none", "--cpus", "1", "--memory", "2g", "--memory-swap", "2g"),
                    *("--pids-limit", "256", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"),
                    *("--init", "--user", "1000:1000"),
                    *[arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")],
                ],
            }
        )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    serve = [*evalkit_command(), "serve", "--policy", "replay", "--trajectory", str(replays), "--port", str(port)]
    server = subprocess.Popen(serve, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_server(base_url, server)
        spec = {
            "model": "replay",
            "base_url": base_url,
            "workdir": "/workspace",
            "env": {"HOME": "/home/agent", "PYTHONDONTWRITEBYTECODE": "1"},
            "step_limit": 50,
            "jobs": jobs * repeats,
        }
        (tmp / "mswea.json").write_text(json.dumps(spec))
        env = {
            **os.environ,
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_GLOBAL_CONFIG_DIR": str(tmp / "mswea-config"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of litellm's price list
        }
        (tmp / "driver.py").write_text(MSWEA_DRIVER)
        done = subprocess.run(
            [str(python), str(tmp / "driver.py"), str(tmp / "mswea.json"), str(tmp / "mswea.jsonl")],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise Skip(f"the mini-swe-agent driver failed: {done.stderr.strip()[-600:]}")
    except subprocess.TimeoutExpired:
        raise Skip("the mini-swe-agent driver took over 600 s") from None
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        prune(backend.client, MSWEA_RUN_ID, live_too=True)  # its own containers: the owner is alive
    rows = [json.loads(line) for line in (tmp / "mswea.jsonl").read_text().splitlines()]
    failed = [r["task_id"] for r in rows if r["exit_status"] != "Submitted"]
    if failed:
        raise Skip(f"mini-swe-agent did not submit on {failed}")
    return rows, note


def print_mswea(rows: list[dict], by_pool: dict[bool, list[Attempt]], expected: dict[str, str], note: str) -> None:
    """One column per pool setting, each with its ratio to mini-swe-agent."""
    same = sum(r["patch"] == expected[r["task_id"]] for r in rows)
    settings = sorted(by_pool, reverse=True)  # pool on first

    def evalkit_ms(seconds) -> list[float]:
        return [median(a.per_step(seconds(a)) for a in by_pool[pool]) * 1000 for pool in settings]

    def mswea_ms(seconds) -> float:
        return median(seconds(r) / max(1, r["turns"]) for r in rows) * 1000

    lines = [
        (
            "model (client-measured)",
            evalkit_ms(lambda a: a.record.model_time_s),
            mswea_ms(lambda r: r["model_s"]),
        ),
        (
            "agent phase - model",
            evalkit_ms(lambda a: a.record.agent_s - a.record.model_time_s),
            mswea_ms(lambda r: r["agent_s"] - r["model_s"]),
        ),
        (
            "loop - model",
            evalkit_ms(lambda a: a.loop_s - a.record.model_time_s),
            mswea_ms(lambda r: r["loop_s"] - r["model_s"]),
        ),
        (
            "tool execution",
            evalkit_ms(lambda a: a.record.sandbox_time_s),
            mswea_ms(lambda r: r["sandbox_s"]),
        ),
        (
            "loop - model - tools",
            evalkit_ms(lambda a: a.loop_s - a.record.model_time_s - a.record.sandbox_time_s),
            mswea_ms(lambda r: r["loop_s"] - r["model_s"] - r["sandbox_s"]),
        ),
    ]
    print(f"\n3. Reference: {note}, docker environment, the oracle's steps as bash tool calls")
    print("   served by `evalkit serve --policy replay`; concurrency 1")
    names = [f"evalkit, {pool_label(pool)}" for pool in settings]
    print(
        f"{'per step':24}"
        + "".join(f" {n:>18}" for n in names)
        + f" {'mini-swe-agent':>15}"
        + "".join(f" {'ratio, ' + pool_label(pool):>17}" for pool in settings)
    )
    for label, ours, theirs in lines:
        print(
            f"{label:24}"
            + "".join(f" {v:15.1f} ms" for v in ours)
            + f" {theirs:12.1f} ms"
            + "".join(f" {v / theirs:17.2f}" for v in ours)
        )
    per_task_theirs = median(r["agent_s"] - r["loop_s"] for r in rows)
    per_task_ours = [median(a.open_s + a.close_s for a in by_pool[pool]) for pool in settings]
    print(
        f"{'sandbox setup + teardown':24}"
        + "".join(f" {v:16.2f} s" for v in per_task_ours)
        + f" {per_task_theirs:13.2f} s"
        + "".join(f" {v / per_task_theirs:17.2f}" for v in per_task_ours)
        + "   (per task, not per step)"
    )
    attempts = by_pool[settings[0]]
    print(
        f"(medians of {len(attempts)} evalkit attempts per setting and {len(rows)} mini-swe-agent attempts;"
        f" {median(r['turns'] for r in rows):g} steps and {median(r['actions'] for r in rows):g} commands a task;"
        f" diffs identical to evalkit's: {same}/{len(rows)})"
    )


# -- reference 2: plain docker exec ------------------------------------------------------------
def run_docker_exec(attempts: list[Attempt], tasks: dict[str, Task], expected: dict[str, str]) -> None:
    """The oracle's per-step tool work through the persistent shell and through plain docker exec."""
    samples: dict[str, list[float]] = {"persistent shell": [], "docker exec": []}
    commands: dict[str, list[float]] = {"persistent shell": [], "docker exec": []}
    same = 0
    backend = DockerBackend(docker_client(), run_id=BASELINE_RUN_ID)
    try:
        for attempt in attempts:
            task = tasks[attempt.record.task_id]
            for method in samples:
                with backend.open(task, role="bench") as box:
                    box.exec("true")  # start the command server outside the measurement
                    run = box.exec if method == "persistent shell" else box.docker_exec
                    for turn in bash_turns(attempt):
                        started = time.perf_counter()
                        for command in turn:
                            begun = time.perf_counter()
                            result = run(command)
                            commands[method].append(time.perf_counter() - begun)
                            if result.exit_code != 0:
                                raise SystemExit(f"{task.id}: `{command[:60]}` failed: {result.stderr[-300:]}")
                        samples[method].append(time.perf_counter() - started)
                    same += box.diff() == expected[task.id]
    finally:
        backend.close()
    shell, plain = median(samples["persistent shell"]), median(samples["docker exec"])
    print(f"{'method':24} {'per step':>12} {'per command':>13}")
    for method, step in (("persistent shell", shell), ("docker exec", plain)):
        print(f"{method:24} {step * 1000:9.1f} ms {median(commands[method]) * 1000:10.1f} ms")
    print(f"{'ratio (shell / exec)':24} {shell / plain:12.3f}")
    print(
        f"(medians of {len(samples['docker exec'])} steps, {len(commands['docker exec'])} commands each way;"
        f" diffs identical to evalkit's: {same}/{2 * len(attempts)})"
    )


# -- main --------------------------------------------------------------------------------------
def print_overhead(runs: list[EvalkitRun], concurrency: int, repeats: int, pool: bool) -> list[Attempt]:
    attempts = [a for run in runs if run.concurrency == concurrency for a in run.attempts]
    by_task: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        by_task.setdefault(attempt.record.task_id, []).append(attempt)
    print(
        f"\n1. Harness overhead per task and per step ({pool_label(pool)}, concurrency {concurrency},"
        f" medians over {repeats} run(s))"
    )
    header = f"{'task':24} {'turns':>5} {'calls':>5} {'wall s':>7} {'model s':>8} {'test s':>7} {'overhead s':>10}"
    print(f"{header} {'harness/step':>13} {'bookkeeping/step':>17}")

    def row(label: str, group: list[Attempt]) -> None:
        r = [a.record for a in group]
        print(
            f"{label:24} {median(x.turns for x in r):5g} {median(x.tool_calls for x in r):5g}"
            f" {median(x.duration_s for x in r):7.2f} {median(x.model_time_s for x in r):8.3f}"
            f" {median(x.test_time_s for x in r):7.2f} {median(a.overhead_s for a in group):10.2f}"
            f" {median(a.per_step(a.record.agent_s - a.record.model_time_s) for a in group) * 1000:10.1f} ms"
            f" {median(a.per_step(a.record.agent_s - a.record.model_time_s - a.record.sandbox_time_s) for a in group) * 1000:14.1f} ms"  # noqa: E501
        )

    for task_id in sorted(by_task):
        row(task_id, by_task[task_id])
    row(f"all ({len(attempts)} attempts)", attempts)
    leftover = median(a.overhead_s - a.open_s - (a.loop_s - a.record.model_time_s) - a.close_s for a in attempts)
    print(
        "overhead = wall - model - test; harness/step = (agent phase - model) / turns, the tools' sandbox time"
        " included;\nbookkeeping/step = (agent phase - model - tools) / turns; the agent phase runs from sandbox"
        " start to its removal."
    )
    print(
        f"overhead split (medians): sandbox start {median(a.open_s for a in attempts):.2f} s,"
        f" loop without model {median(a.loop_s - a.record.model_time_s for a in attempts):.2f} s"
        f" (tools {median(a.record.sandbox_time_s for a in attempts):.2f} s),"
        f" diff + removal {median(a.close_s for a in attempts):.2f} s, rest {leftover:.2f} s"
    )
    return attempts


def print_throughput(runs: list[EvalkitRun], levels: list[int], n_tasks: int, cores: int) -> None:
    print(f"\n2. Tasks per minute of a whole `evalkit run` ({n_tasks} tasks, oracle, {cores} cores; medians)")
    print(f"{'sandboxes':>9} {'concurrency':>11} {'wall s':>8} {'tasks/min':>10} {'speed-up':>9} {'harness/step':>13}")
    for pool in sorted({r.pool for r in runs}, reverse=True):
        base = None
        for level in levels:
            group = [r for r in runs if r.concurrency == level and r.pool == pool]
            wall = median(r.wall_s for r in group)
            steps = (a.per_step(a.record.agent_s - a.record.model_time_s) for r in group for a in r.attempts)
            base = base or wall
            print(
                f"{pool_label(pool):>9} {level:11d} {wall:8.1f} {n_tasks / (wall / 60):10.1f} {base / wall:8.2f}x"
                f" {median(steps) * 1000:10.1f} ms"
            )
    print("(wall = the `evalkit run` process from start to exit, CLI start-up and summary included)")


def leftover_containers(client, run_ids: set[str]) -> list[str]:
    """Containers of this benchmark's runs still there (other processes' evalkit runs are not ours)."""
    left = []
    for _ in range(20):  # a forced removal can still be in progress for a moment
        found = client.api.containers(all=True, filters={"label": LABEL_RUN})
        left = [c["Id"][:12] for c in found if (c.get("Labels") or {}).get(LABEL_RUN) in run_ids]
        if not left:
            break
        time.sleep(0.5)
    return left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks" / "demo")
    parser.add_argument("--repeats", type=int, default=2, help="runs of the suite per concurrency level")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--pool", choices=["both", "on", "off"], default="both", help="evalkit's sandbox pool")
    parser.add_argument("--reference", choices=["mswea", "docker-exec", "none"], default="mswea")
    parser.add_argument("--mswea-venv", type=Path, default=Path("/tmp/mswea-venv"))
    args = parser.parse_args()
    suite = load_suite(args.suite)
    tasks = {t.id: t for t in suite.tasks}
    levels = sorted(set(args.concurrency))
    client = docker_client()
    token = secrets.token_hex(3)
    run_ids = {MSWEA_RUN_ID, BASELINE_RUN_ID}
    started = time.perf_counter()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"evalkit run overhead: suite {suite.name} ({len(tasks)} tasks), oracle model, {args.repeats} repeat(s),"
        f" sandbox pool {args.pool};"
        f" {os.cpu_count()} cores, load average at start {load}"
    )
    with tempfile.TemporaryDirectory(prefix="evalkit-run-overhead-") as name:
        tmp = Path(name)
        runs = []
        pools = {"both": [True, False], "on": [True], "off": [False]}[args.pool]
        for repeat in range(args.repeats):  # interleaved, so drift spreads over every level and setting
            for level in levels:
                for pool in pools:
                    run_id = f"overhead-{token}-c{level}-r{repeat}-{'pool' if pool else 'nopool'}"
                    run_ids.add(run_id)
                    runs.append(evalkit_run(args.suite, tmp / "runs", run_id, level, pool))
        by_pool = {
            pool: print_overhead([r for r in runs if r.pool == pool], levels[0], args.repeats, pool) for pool in pools
        }
        print_throughput(runs, levels, len(tasks), os.cpu_count() or 0)
        first = {a.record.task_id: a for a in runs[0].attempts}  # the oracle's steps, as recorded
        expected = {task_id: a.record.model_patch for task_id, a in first.items()}
        if args.reference == "mswea":
            try:
                rows, note = run_mswea(args.mswea_venv, list(first.values()), tasks, args.repeats, tmp)
                print_mswea(rows, by_pool, expected, note)
            except Skip as exc:
                print("\n3. Reference: the oracle's tool work per step, persistent shell vs plain `docker exec`")
                print(f"   (mini-swe-agent skipped: {exc})")
                run_docker_exec(list(first.values()), tasks, expected)
        elif args.reference == "docker-exec":
            print("\n3. Reference: the oracle's tool work per step, persistent shell vs plain `docker exec`")
            run_docker_exec(list(first.values()), tasks, expected)
    left = leftover_containers(client, run_ids)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; containers of these runs left: {len(left)}")


if __name__ == "__main__":
    main()
