"""Agents are chosen by name (--agent); an unknown name is one line listing the known ones, and the
default agent is evalkit's own tool loop with the model's turn policy."""

import pytest

from evalkit.agent.registry import AGENTS, DEFAULT_AGENT, check_agent, make_agent
from evalkit.agent.tool_loop import ToolLoopAgent
from evalkit.agent.tools import TOOL_NAMES
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
    assert str(caught.value) == f"unknown agent 'claude-code'; known agents: {', '.join(sorted(AGENTS))}"


def test_an_attempt_row_keeps_its_agent_and_budgets_and_old_rows_still_load():
    limits = Limits(max_turns=7)
    row = AttemptRecord(run_id="r", task_id="t", model="m", sample=0, resolved=False, stop_reason="submitted",
                        agent="tool-loop", limits=limits)  # fmt: skip
    again = AttemptRecord.model_validate_json(row.model_dump_json())
    assert again.agent == "tool-loop" and again.limits == limits and again.limits.max_turns == 7
    old = AttemptRecord.model_validate({"run_id": "r", "task_id": "t", "model": "m", "sample": 0,
                                        "resolved": True, "stop_reason": "submitted"})  # fmt: skip
    assert old.agent == "tool-loop" and old.limits is None
