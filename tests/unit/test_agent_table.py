"""Agents are chosen by name (--agent); an unknown name is one line listing the known ones, the
default agent is evalkit's own tool loop with the model's turn policy, and `command:TEMPLATE` is
any other agent, run as a shell command in a sandbox that reaches only the run's model proxy."""

import subprocess

import pytest
from conftest import run_evalkit

from evalkit.agent.agent_table import AGENTS, COMMAND_PREFIX, DEFAULT_AGENT, check_agent, command_template, make_agent
from evalkit.agent.command_agent import CommandAgent, agent_command, agent_log_path
from evalkit.agent.tool_loop import ToolLoopAgent
from evalkit.agent.tools import TOOL_NAMES
from evalkit.axes import DIFF, TRAFFIC, USAGE
from evalkit.bridge.run_proxy import RunProxy
from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec
from evalkit.records import AttemptRecord
from evalkit.tasks.model import Limits


def test_the_default_agent_is_the_tool_loop_with_the_models_turn_policy():
    spec = ModelSpec(name="m", model="m", on_text="stop", max_nudges=1)
    agent = make_agent(DEFAULT_AGENT, spec, client=None, output_limit=1234)
    assert isinstance(agent, ToolLoopAgent) and agent.name == "tool-loop" == DEFAULT_AGENT
    assert agent.policy.on_text == "stop" and agent.policy.max_nudges == 1 and agent.output_limit == 1234
    assert {tool["function"]["name"] for tool in agent.tools} == TOOL_NAMES


def test_an_unknown_agent_is_one_line_naming_the_known_ones():
    with pytest.raises(EvalkitError) as caught:
        check_agent("claude-code")
    known = ", ".join(sorted(AGENTS))
    assert str(caught.value) == (
        f"unknown agent 'claude-code'; known agents: {known}, or command:TEMPLATE (a shell command run in the sandbox)"
    )


def test_an_attempt_row_keeps_its_agent_and_budgets_and_old_rows_still_load():
    limits = Limits(max_turns=7)
    row = AttemptRecord(run_id="r", task_id="t", model="m", sample=0, resolved=False, stop_reason="submitted",
                        agent="tool-loop", limits=limits)  # fmt: skip
    again = AttemptRecord.model_validate_json(row.model_dump_json())
    assert again.agent == "tool-loop" and again.limits == limits and again.limits.max_turns == 7
    old = AttemptRecord.model_validate({"run_id": "r", "task_id": "t", "model": "m", "sample": 0,
                                        "resolved": True, "stop_reason": "submitted"})  # fmt: skip
    assert old.agent == "tool-loop" and old.limits is None


def test_a_command_agent_is_the_shell_command_after_the_prefix():
    assert command_template("command:  my-agent --yes 'fix it' ") == "my-agent --yes 'fix it'"
    assert command_template("command:a:b") == "a:b"
    assert command_template("tool-loop") is None and command_template("Command:x") is None
    assert check_agent("command:python3 /x/agent.py") == "command:python3 /x/agent.py"


@pytest.mark.parametrize("name", ["command:", "command:   "])
def test_a_command_agent_without_a_command_is_one_line_saying_what_to_give(name):
    with pytest.raises(EvalkitError, match=r"give a shell command after `command:`, e.g. 'command:my-agent --yes'"):
        check_agent(name)


def test_a_command_agent_needs_the_runs_proxy_and_reaches_only_it():
    spec = ModelSpec(name="m", model="m")
    with pytest.raises(ValueError, match="proxy"):
        make_agent("command:true", spec, client=None, output_limit=100)
    agent = make_agent("command:my-agent  --yes\n--fast", spec, client=None, output_limit=100, proxy=RunProxy(None))
    assert isinstance(agent, CommandAgent) and agent.template == "my-agent  --yes\n--fast"
    assert agent.name == "command:my-agent --yes --fast" and agent.egress == "proxy" and agent.tools == []
    assert agent.evidence == {DIFF, USAGE, TRAFFIC}
    long = make_agent("command:" + "x" * 200, spec, client=None, output_limit=100, proxy=RunProxy(None))
    assert long.name == "command:" + "x" * 79 + "…"
    assert make_agent(DEFAULT_AGENT, spec, client=None, output_limit=1).egress is None


def test_the_command_runs_in_its_own_bash_with_the_environment_quoted():
    prompt = "it's $HOME `x`\nline 2"
    command = agent_command('printf %s "$EVALKIT_PROMPT" | tr a-z A-Z; X=1', {"EVALKIT_PROMPT": prompt, "K": "k"})
    run = subprocess.run(["bash", "-c", command + '; printf "[$X]"'], capture_output=True, text=True)
    assert run.stdout == "IT'S $HOME `X`\nLINE 2[]"  # not expanded; the template's own variables stay its own


def test_the_agents_log_is_kept_beside_its_trajectory(tmp_path):
    trajectory = tmp_path / "trajectories" / "t__m__0.jsonl"
    assert agent_log_path(trajectory) == tmp_path / "trajectories" / "t__m__0.agent.log"


def test_run_help_names_every_agent_of_the_table_and_the_command_form():
    """--agent's help is made from the table, as --backend's and --executor's are: a new row is listed."""
    help_text = run_evalkit("run", "--help", timeout=60, env={"COLUMNS": "200", "TERM": "dumb"})
    assert help_text.returncode == 0, help_text.stderr
    words = set(help_text.stdout.replace(",", " ").replace("(", " ").split())
    missing = {*AGENTS, f"{COMMAND_PREFIX}TEMPLATE"} - words
    assert not missing, f"`evalkit run --help` does not name {sorted(missing)}"
