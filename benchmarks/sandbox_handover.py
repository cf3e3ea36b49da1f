"""Sandbox set-up and tear-down as an attempt sees them, with the pool and without: per task, the
time to get the agent sandbox and run its first command, to close it, the same for the scoring
sandbox, while the "agent" works for --agent-seconds in between (the time the pool has to warm
the next ones). Prints medians and the ratio pooled / not pooled.

    python benchmarks/sandbox_handover.py [--tasks 6] [--agent-seconds 1.0] [--capacity 2]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from toy import write_toy_suite  # noqa: E402

from evalkit.sandbox.docker.backend import DockerBackend, docker_client  # noqa: E402
from evalkit.sandbox.protocol import SandboxRequest  # noqa: E402
from evalkit.tasks import Task, load_suite  # noqa: E402

PHASES = ("agent open", "agent close", "score open", "score close")  # "open": until its first command ran


def attempts(backend: DockerBackend, tasks: list[Task], agent_s: float) -> list[dict[str, float]]:
    """One attempt's sandbox life per task, timed phase by phase as the attempt waits for it."""
    rows = []
    for task in tasks:
        row, mark = {}, time.perf_counter()
        agent = backend.open(task, role="agent")
        agent.exec("git status --short")  # the first command starts the command server if not yet up
        row["agent open"] = time.perf_counter() - mark
        time.sleep(agent_s)
        agent.diff()
        mark = time.perf_counter()
        agent.close()
        row["agent close"], mark = time.perf_counter() - mark, time.perf_counter()
        score = backend.open(task, role="score")
        score.exec("git status --short")
        row["score open"] = time.perf_counter() - mark
        mark = time.perf_counter()
        score.close()
        row["score close"] = time.perf_counter() - mark
        rows.append(row)
    return rows


def measure(tasks: list[Task], agent_s: float, capacity: int) -> tuple[list[dict[str, float]], str]:
    backend = DockerBackend(docker_client(), run_id=f"bench-handover-{secrets.token_hex(3)}")
    try:
        backend.image(tasks[0])
        backend.workspace(tasks[0])  # cached in both cases: the first attempt of a run pays it either way
        if capacity:
            plan = [SandboxRequest(t, "agent", then=SandboxRequest(t, "score")) for t in tasks]
            backend.prepare(plan, capacity=capacity)
        rows = attempts(backend, tasks, agent_s)
        counts = f" ({backend.pool.counts})" if backend.pool else ""
    finally:
        backend.close()
    left = backend.remaining()
    return rows, counts + (f"; {len(left)} container(s) left!" if left else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=6, help="attempts measured (one task, made afresh each)")
    parser.add_argument("--agent-seconds", type=float, default=1.0, help="the agent's work between open and close")
    parser.add_argument("--capacity", type=int, default=2, help="the pool's size (evalkit run: --concurrency + 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        task = load_suite(write_toy_suite(Path(tmp))).tasks[0]
        tasks = [task] * args.tasks
        cold, cold_note = measure(tasks, args.agent_seconds, 0)
        warm, warm_note = measure(tasks, args.agent_seconds, args.capacity)
    print(f"{'per task (median)':22} {'no pool':>10} {'pool':>10} {'ratio':>8}")
    for phase in (*PHASES, "setup + teardown"):
        before = statistics.median(sum(r[p] for p in PHASES) if phase not in PHASES else r[phase] for r in cold)
        after = statistics.median(sum(r[p] for p in PHASES) if phase not in PHASES else r[phase] for r in warm)
        print(f"{phase:22} {before * 1000:7.1f} ms {after * 1000:7.1f} ms {after / before:8.3f}")
    print(f"({args.tasks} attempts each, agent work {args.agent_seconds} s, pool capacity {args.capacity}{warm_note})")
    if cold_note:
        print(f"no pool: {cold_note}")
    print("targets: a hand-over <= 50 ms; setup + teardown <= 0.2 s")


if __name__ == "__main__":
    main()
