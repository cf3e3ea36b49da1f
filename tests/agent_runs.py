"""What a run of agents in sandboxes leaves, as the integration tests read it: its result rows, an
attempt's trajectory events and agent log, the installed agents to run every check through, the
demo suite run through one agent with what such a run must show, and the check that nothing of the
run (container, network) is left on the engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import DEMO_SUITE, run_evalkit

from evalkit.agent.agent_table import AGENTS
from evalkit.agent.installed import InstalledAgent
from evalkit.diffs import changed_paths
from evalkit.lazy_table import load
from evalkit.sandbox.docker.containers import LABEL_RUN
from evalkit.sandbox.docker.images import build_base_image
from evalkit.sandbox.python_bases import base_for_suite
from evalkit.sandbox.recipes import agent_recipe, recipe_version
from evalkit.tasks import Task, load_suite

# mini-swe-agent finishes when its model runs this command (its own `bash` tool, nothing else)
MSWEA_SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def installed_agents() -> list[str]:
    """The names of every installed agent of the agent table: a test parametrized over them covers the
    next agent once its row is added."""
    return [name for name in AGENTS if isinstance(load(AGENTS, name, "agent"), InstalledAgent)]


def rows_of(run_dir: Path) -> list[dict]:
    """The run's result rows ([] before the first attempt ends)."""
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def events_of(run_dir: Path, row: dict) -> list[dict]:
    return [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]


def agent_log(run_dir: Path, row: dict) -> str:
    """The agent's own output, kept beside the attempt's trajectory."""
    return (run_dir / row["trajectory"]).with_suffix(".agent.log").read_text()


def assert_nothing_left(client, run_id: str) -> None:
    label = {"label": f"{LABEL_RUN}={run_id}"}
    assert client.containers.list(all=True, ignore_removed=True, filters=label) == []
    assert client.networks.list(filters=label) == []


def run_demo_through(agent: str, out: Path, run_id: str):
    """Every demo task with oracle and null through `agent` (16 attempts, concurrency 2); the
    finished process and the run folder. The first run builds the agent's image."""
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--model", "oracle", "--model", "null", "--agent", agent,
                         "--run-id", run_id, "--out", out, "--concurrency", "2", timeout=1800)  # fmt: skip
    return result, out / run_id


def run_on_python_base(client, agent: str, suite: str, tmp_path: Path) -> tuple[dict, Path, Task]:
    """The oracle through `agent` on the demo's kvstore-batch, its task image set to the Python base
    of Debian `suite` (built when missing, kept after); the row, the run folder and the task."""
    base = base_for_suite(suite)
    build_base_image(client, base.image, python_base=base, log=lambda line: None)
    suite_dir = shutil.copytree(DEMO_SUITE, tmp_path / "demo")
    toml = suite_dir / "kvstore-batch" / "task.toml"
    toml.write_text(toml.read_text().replace('repo = "kvstore"\n', f'repo = "kvstore"\nimage = "{base.image}"\n'))
    task = load_suite(suite_dir).select(["kvstore-batch"])[0]
    assert task.image == base.image
    run_id = f"{agent}-{suite}"
    result = run_evalkit("run", "--suite", suite_dir, "--task", "kvstore-batch", "--model", "oracle",
                         "--agent", agent, "--run-id", run_id, "--out", tmp_path / "runs")  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = tmp_path / "runs" / run_id
    (row,) = rows_of(run_dir)
    assert_nothing_left(client, run_id)
    return row, run_dir, task


def assert_the_demo_proves_itself(rows: list[dict], agent: str, version: str) -> None:
    """What a demo run through an installed agent must show: the oracle resolved every task and null
    none, each attempt submitted without error and names the agent and its pinned `version` (as its
    recipe says), the diff holds the task's files only (the agent's own live outside the workspace)
    and null changed nothing in one turn."""
    tasks = {t.id: t for t in load_suite(DEMO_SUITE).tasks}
    for model, resolved in (("oracle", True), ("null", False)):
        mine = [r for r in rows if r["model"] == model]
        assert sorted(r["task_id"] for r in mine) == sorted(tasks)
        assert [r["task_id"] for r in mine if r["resolved"] is not resolved] == []
        assert all(r["stop_reason"] == "submitted" and r["error"] is None for r in mine), mine
    assert recipe_version(agent_recipe(agent)) == version
    for row in rows:
        assert (row["agent"], row["agent_version"]) == (agent, version)
        assert set(changed_paths(row["model_patch"])) <= set(changed_paths(tasks[row["task_id"]].patch))
    assert all(r["model_patch"] == "" and r["turns"] == 1 for r in rows if r["model"] == "null")
