"""What an agent in the sandbox costs beside evalkit's own tool loop, on the same tasks, in one run.

Each agent runs the demo suite with the built-in `oracle` (so the model costs next to nothing and
every agent makes the same change): evalkit's `tool-loop`, a minimal `command:` agent (standard
library only, tests/data/urllib_agent.py) and each installed agent asked for. Per attempt, from
the trajectory and the result row:

- to first call: from the attempt's start to its first model request (the sandbox opening, and for
  an agent in the sandbox its process start, imports and set-up; for the tool loop, the sandbox
  only);
- start-up: the same minus the tool loop's median, i.e. what the agent itself adds before it asks
  its model anything;
- agent phase: sandbox open to diff taken (`agent_s`), and the part of it that is not the model
  (`agent_s - model_time_s`).

Images are built (and agent layers copied) by a warm-up attempt per agent before anything is timed.
Prints medians per agent and the ratios to the tool loop measured in the same run.

    python benchmarks/agent_startup.py [--agent mini-swe-agent --agent qwen-code] [--tasks 8]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from evalkit.agent.agent_table import AGENTS
from evalkit.trajectory import read_trajectory

ROOT = Path(__file__).resolve().parents[1]
EVALKIT = str(Path(sys.executable).parent / "evalkit")
SUITE = ROOT / "tasks" / "demo"
URLLIB_AGENT = "command:python3 -c " + shlex.quote((ROOT / "tests" / "data" / "urllib_agent.py").read_text())
BASELINE = "tool-loop"
REQUEST_EVENTS = ("proxy_request",)  # an agent in the sandbox asked the proxy


def task_ids(limit: int) -> list[str]:
    return sorted(p.parent.name for p in SUITE.glob("*/task.toml"))[:limit]


def run(agent: str, run_id: str, out: Path, tasks: list[str]) -> Path:
    selection = [part for task in tasks for part in ("--task", task)]
    command = [EVALKIT, "run", "--suite", str(SUITE), "--model", "oracle", "--agent", agent, "--run-id", run_id,
               "--out", str(out), "--concurrency", "1", *selection]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"{agent}: evalkit run exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return out / run_id


def first_request_s(events: list[dict]) -> float | None:
    """Seconds from the attempt's start to its first model request."""
    start = next((e["t"] for e in events if e["type"] == "start"), None)
    for event in events:
        asked = event["type"] in REQUEST_EVENTS or (
            event["type"] == "message" and event["message"].get("role") in ("system", "user")
        )
        if asked and start is not None:
            return event["t"] - start
    return None


def measure(run_dir: Path) -> dict[str, list[float]]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    figures: dict[str, list[float]] = {"first_call": [], "agent": [], "not_model": [], "resolved": []}
    for row in rows:
        first = first_request_s(read_trajectory(run_dir / row["trajectory"]))
        if first is not None:
            figures["first_call"].append(first)
        figures["agent"].append(row["agent_s"])
        figures["not_model"].append(row["agent_s"] - row["model_time_s"])
        figures["resolved"].append(1.0 if row["resolved"] else 0.0)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    installed = [name for name in AGENTS if name != BASELINE]
    parser.add_argument("--agent", action="append", help=f"installed agents to measure (default: {installed})")
    parser.add_argument("--tasks", type=int, default=8, help="demo tasks per agent")
    args = parser.parse_args()
    agents = [BASELINE, URLLIB_AGENT, *(args.agent or installed)]
    tasks = task_ids(args.tasks)
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-agents-") as tmp:
        out = Path(tmp)
        for number, agent in enumerate(agents):
            run(agent, f"warm-{number}", out, tasks[:1])  # builds images and agent layers
            results[agent] = measure(run(agent, f"timed-{number}", out, tasks))
    base = results[BASELINE]
    base_first = statistics.median(base["first_call"])
    print(f"{len(tasks)} demo tasks per agent, oracle, concurrency 1; medians in seconds; ratios to {BASELINE}")
    print(f"{'agent':<24} {'resolved':>8} {'first call':>10} {'start-up':>9} {'agent phase':>11} "
          f"{'not model':>9} {'ratio':>6}")  # fmt: skip
    for agent, figures in results.items():
        name = "command:urllib_agent.py" if agent == URLLIB_AGENT else agent
        first = statistics.median(figures["first_call"]) if figures["first_call"] else float("nan")
        phase, not_model = statistics.median(figures["agent"]), statistics.median(figures["not_model"])
        ratio = phase / statistics.median(base["agent"])
        print(f"{name:<24} {sum(figures['resolved']):>5.0f}/{len(figures['resolved']):<2} {first:>10.2f} "
              f"{first - base_first:>9.2f} {phase:>11.2f} {not_model:>9.2f} {ratio:>5.2f}×")  # fmt: skip


if __name__ == "__main__":
    main()
