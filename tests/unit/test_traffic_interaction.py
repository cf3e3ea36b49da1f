"""An agent evalkit did not write is scored on interaction from its recorded traffic: an agent
(the openai SDK) talks through the real model proxy to a scripted server, and the trajectory the
channel wrote is scored: malformed calls, unknown tools, repeated calls, the closing message and
budget overruns counted; what only the agent's own tools know is "not observed", never 0.
Efficiency comes from the proxy's figures (tokens, turns, tool calls asked for)."""

import time
from contextlib import contextmanager

import openai
import pytest
from hostile_server import HostileServer, turn
from toy import BASE_FILES, POWER, diff_of

from evalkit.axes import DIFF, TRAFFIC, USAGE
from evalkit.bridge import AttemptChannel, ModelProxy
from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.records import AttemptRecord
from evalkit.scoring.attempt_scores import ScoringSettings, score_attempt
from evalkit.scoring.interaction import score_interaction
from evalkit.scoring.prices import Price
from evalkit.scoring.traffic import NOT_OBSERVED
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter, read_trajectory

USAGE_COUNTS = {"prompt_tokens": 1000, "completion_tokens": 50}
BASH = {"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip
SCRIPT = {
    "messy": [
        [turn(("bash", {"command": "ls"}), usage=USAGE_COUNTS)],
        [turn(("rm_rf", {"path": "/"}), usage=USAGE_COUNTS)],  # not offered
        [turn(("bash", "{'command': 'ls'"), usage=USAGE_COUNTS)],  # not JSON
        [turn(("bash", {"cmd": "ls"}), usage=USAGE_COUNTS)],  # misses `command`
        [turn(("bash", {"command": "ls"}), usage=USAGE_COUNTS)],  # the first call again
        [turn(content="Added power() to calc/__init__.py.", usage=USAGE_COUNTS)],
    ],
    "cut": [[turn(("bash", {"command": "ls"}), usage=USAGE_COUNTS)]],  # never ends on its own
}
RIGHT = {"calc/__init__.py": BASE_FILES["calc/__init__.py"] + POWER}


@pytest.fixture(scope="module")
def server():
    with HostileServer(SCRIPT) as running, ModelProxy() as proxy:
        yield running, proxy


@contextmanager
def traffic(server, scenario, path, limits=None):
    """An agent's conversation through the proxy: it sends the tool results back as a real agent would."""
    hostile, proxy = server
    spec = ModelSpec(name=scenario, model="hostile", base_url=hostile.url(scenario), max_retries=0)
    client = ChatClient(spec, endpoints=EndpointStates())
    writer = TrajectoryWriter(path)
    channel = AttemptChannel(client, writer, limits or Limits(), time.monotonic() + 60)
    token = proxy.register(channel)
    agent = openai.OpenAI(base_url=proxy.base_url, api_key=token, max_retries=0)
    messages = [{"role": "user", "content": "Add power() to calc."}]
    try:
        for _ in range(10):
            try:
                reply = agent.chat.completions.create(model="any", messages=messages, tools=[BASH])
            except openai.BadRequestError:
                break  # a budget is spent
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            messages += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in message.tool_calls]
        yield channel
    finally:
        proxy.unregister(token)
        agent.close()
        client.close()
        writer.close()


def record_of(channel, toy_suite_dir, **fields) -> AttemptRecord:
    patch = diff_of(toy_suite_dir / "repos" / "calc", RIGHT)
    defaults = dict(run_id="r", task_id="calc-power", model=channel.model, sample=0, agent="command:x",
                    evidence=sorted({DIFF, USAGE, TRAFFIC}), resolved=True, tests_resolved=True,
                    stop_reason=(channel.stop_reason or "submitted"), usage=channel.usage.as_dict(),
                    turns=channel.turns, tool_calls=channel.tool_calls, final_message=channel.final_message,
                    agent_s=30.0, model_patch=patch, patch_applied=True)  # fmt: skip
    return AttemptRecord(**(defaults | fields))


def test_the_traffic_shows_the_models_faults_and_its_closing_message(server, toy_suite_dir, tmp_path):
    with traffic(server, "messy", tmp_path / "messy.jsonl") as channel:
        pass
    assert channel.tool_calls == 5 and channel.final_message == "Added power() to calc/__init__.py."
    events = read_trajectory(tmp_path / "messy.jsonl")
    scores = score_interaction(record_of(channel, toy_suite_dir), events, ["calc/__init__.py"])
    assert scores.counts == {"malformed_call": 2, "unknown_tool": 1, "repeated_call": 1, "budget_overrun": 0,
                             "no_final_message": 0, "unspecific_final": 0}  # fmt: skip
    assert scores.not_observed == list(NOT_OBSERVED) and not set(scores.counts) & set(NOT_OBSERVED)
    assert scores.score == pytest.approx(1 - 2 * 0.10 - 0.10 - 0.05)
    assert scores.final_message == "Added power() to calc/__init__.py."


def test_an_agent_cut_off_by_its_budget_has_no_closing_message(server, toy_suite_dir, tmp_path):
    with traffic(server, "cut", tmp_path / "cut.jsonl", Limits(max_turns=3)) as channel:
        pass
    assert channel.stop_reason == "max_turns" and channel.final_message is None
    record = record_of(channel, toy_suite_dir)
    scores = score_interaction(record, read_trajectory(tmp_path / "cut.jsonl"), ["calc/__init__.py"])
    assert scores.counts["budget_overrun"] == 1 and scores.counts["no_final_message"] == 1
    assert scores.counts["repeated_call"] == 2  # `ls` three times


def test_every_axis_is_scored_from_the_proxys_figures(server, toy_suite_dir, toy_task, tmp_path):
    with traffic(server, "messy", tmp_path / "messy.jsonl") as channel:
        pass
    events = [{"type": "start", "limits": Limits().model_dump()}, *read_trajectory(tmp_path / "messy.jsonl")]
    price = Price(input=1.0, output=2.0)
    scores = score_attempt(toy_task, record_of(channel, toy_suite_dir), events, BASE_FILES.get, ScoringSettings(),
                           price)  # fmt: skip
    assert None not in (scores.efficiency.score, scores.interaction.score, scores.composite)
    assert scores.efficiency.turns == 6 and scores.efficiency.tool_calls == 5
    assert scores.efficiency.total_tokens == 6 * 1050 and scores.efficiency.cost_usd == pytest.approx(
        (6000 * 1.0 + 300 * 2.0) / 1e6
    )
    older = record_of(channel, toy_suite_dir, evidence=[DIFF, USAGE])  # a command agent before traffic was kept
    before = score_attempt(toy_task, older, events, BASE_FILES.get, ScoringSettings(), price)
    assert before.interaction.score is None and before.interaction.counts == {} and before.efficiency.score is not None
