"""`ask_user`: offered to the model (and named in the system prompt) only when the attempt has a
simulated user, answered by the simulator (never the sandbox) within the question budget, each
exchange a `user` event, the tally on the attempt's row apart from the agent's own usage."""

import json

import pytest
from recording_server import RecordingServer

from evalkit.agent.loop import NO_QUESTIONS, run_agent
from evalkit.agent.tools import ASK_USER, ASK_USER_SCHEMA, TOOL_SCHEMAS, ToolBox
from evalkit.models.client import ChatClient, Usage
from evalkit.models.endpoint import ModelSpec
from evalkit.models.policies import NullPolicy, OraclePolicy, ReplayPolicy
from evalkit.records import AttemptRecord, ToolFault
from evalkit.runs.attempt import user_fields
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter, read_trajectory
from evalkit.user.answer import QuestionClass, UserAnswer
from evalkit.user.channel import NO_MORE_QUESTIONS, OVER_BUDGET, UserChannel
from evalkit.user.context import user_context


class UntouchableSandbox:
    workdir = "/workspace"

    def __getattr__(self, name):
        raise AssertionError(f"a question reached the sandbox ({name})")


class ScriptedUser:
    """A simulator answering every question informatively, with tokens and a redaction to tally."""

    name = "scripted-user"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def answer(self, question, context, deadline=None):
        self.asked.append(question)
        return UserAnswer(f"Answer {len(self.asked)}.", QuestionClass.INFORMATIVE, 1, Usage(7, 3), latency_s=0.25)


def _completion(*calls: tuple[str, dict]) -> dict:
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}  # fmt: skip


def _attempt(tmp_path, script: list[dict], user: UserChannel | None, limits: Limits | None = None):
    """One tool-loop attempt against a scripted model; what it sent, its outcome and its events."""
    limits = limits or Limits()
    with RecordingServer({"m": [{"body": body} for body in script]}) as server:
        client = ChatClient(ModelSpec(name="m", model="m", base_url=server.url("m")))
        toolbox = ToolBox(UntouchableSandbox(), command_timeout_s=5, output_limit=1000)
        with TrajectoryWriter(tmp_path / "t.jsonl") as trajectory:
            outcome = run_agent("Fix it.", toolbox, client, limits, trajectory, deadline=float("inf"), user=user)
        client.close()
        return server.bodies("m"), outcome, read_trajectory(tmp_path / "t.jsonl")


@pytest.fixture
def channel(demo_suite):
    def make(max_questions: int = 3) -> UserChannel:
        return UserChannel(ScriptedUser(), user_context(demo_suite.tasks[0]), max_questions)

    return make


def _tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


def test_ask_user_is_offered_and_announced_only_with_a_user(tmp_path, channel):
    script = [_completion((ASK_USER, {"question": "Which format?"})), _completion(("submit", {"summary": "s"}))]
    bodies, outcome, events = _attempt(tmp_path, script, None)
    assert ASK_USER not in _tool_names(bodies[0]) and bodies[0]["tools"] == TOOL_SCHEMAS
    assert bodies[0]["messages"][0]["content"].endswith(NO_QUESTIONS)
    assert outcome.faults == {ToolFault.UNKNOWN_TOOL.value: 1}  # asked anyway: an unknown tool, nobody answers
    assert not [e for e in events if e["type"] == "user"]

    bodies, outcome, events = _attempt(tmp_path, script, channel(max_questions=2))
    assert _tool_names(bodies[0]) == [*_tool_names({"tools": TOOL_SCHEMAS}), ASK_USER]
    assert bodies[0]["tools"][-1] == ASK_USER_SCHEMA
    system = bodies[0]["messages"][0]["content"]
    assert NO_QUESTIONS not in system and "`ask_user`, at most 2 times" in system
    assert not outcome.faults and bodies[1]["messages"][-1]["content"] == "Answer 1."


def test_questions_past_the_budget_are_not_asked_and_counted_over_budget(tmp_path, channel):
    user = channel(max_questions=1)
    asks = [_completion((ASK_USER, {"question": f"Q{i}?"})) for i in range(2)]
    bodies, outcome, events = _attempt(tmp_path, [*asks, _completion(("submit", {"summary": "s"}))], user)
    assert user.simulator.asked == ["Q0?"]
    assert bodies[2]["messages"][-1]["content"] == NO_MORE_QUESTIONS
    assert (user.questions, dict(user.classes)) == (2, {"informative": 1, OVER_BUDGET: 1})
    exchanges = [e for e in events if e["type"] == "user"]
    assert [(e["question"], e["answer"], e["class"]) for e in exchanges] == [
        ("Q0?", "Answer 1.", "informative"),
        ("Q1?", NO_MORE_QUESTIONS, OVER_BUDGET),
    ]
    assert exchanges[0]["usage"]["total_tokens"] == 10 and exchanges[0]["redacted"] == 1
    assert outcome.usage.total_tokens == 3 * 110  # the agent's own tokens only


def test_a_bad_question_is_a_fault_and_asks_nobody(tmp_path, channel):
    user = channel()
    _, outcome, _ = _attempt(tmp_path, [_completion((ASK_USER, {"q": "?"})), _completion(("submit", {}))], user)
    assert outcome.faults[ToolFault.BAD_ARGUMENTS.value] >= 1 and user.questions == 0


def test_a_simulator_that_fails_is_an_unanswered_question_not_a_crash(channel):
    class Broken:
        name = "broken"

        def answer(self, question, context, deadline=None):
            raise ConnectionError("endpoint down")

    user = channel()
    user.simulator = Broken()
    text, event = user.ask("Which format?")
    assert "No answer" in text and event["class"] == "unanswered" and "endpoint down" in event["error"]


def test_the_row_carries_the_users_tally_apart_from_the_agents_usage(channel):
    user = channel()
    user.ask("Which format?")
    user.ask("Which file?")
    row = AttemptRecord(run_id="r", task_id="t", model="m", sample=0, resolved=False, stop_reason="submitted",
                        usage={"total_tokens": 5}, **user_fields(user))  # fmt: skip
    again = AttemptRecord.model_validate_json(row.model_dump_json())
    assert (again.user, again.user_model, again.questions) == ("simulated", "scripted-user", 2)
    assert again.question_classes == {"informative": 2} and again.user_leaks == 2
    assert again.user_usage["total_tokens"] == 20 and again.usage == {"total_tokens": 5}
    assert again.user_time_s == 0.5
    old = AttemptRecord.model_validate({"run_id": "r", "task_id": "t", "model": "m", "sample": 0,
                                        "resolved": True, "stop_reason": "submitted"})  # fmt: skip
    assert (old.user, old.user_model, old.questions, old.question_classes, old.user_usage) == (None, None, 0, {}, {})


def _play(policy, task, tools) -> list[str]:
    """The names of the tools `policy` calls on `task` until it stops calling any."""
    messages, names = [{"role": "system", "content": "s"}, {"role": "user", "content": task.prompt}], []
    for _ in range(60):
        turn = policy.respond(messages, tools)
        if not turn.tool_calls:
            break
        calls = [{"id": f"c{len(names) + i}", "type": "function", "function": {"name": c.name, "arguments": "{}"}}
                 for i, c in enumerate(turn.tool_calls)]  # fmt: skip
        messages.append({"role": "assistant", "content": turn.content, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
        names += [c.name for c in turn.tool_calls]
        if "submit" in names:
            break
    return names


def test_oracle_and_null_never_ask_and_replay_asks_as_recorded(demo_suite, tmp_path):
    tools = [*TOOL_SCHEMAS, ASK_USER_SCHEMA]
    for task in demo_suite.tasks:
        names = _play(OraclePolicy(demo_suite.tasks), task, tools)
        assert names[-1] == "submit" and ASK_USER not in names, task.id
    assert _play(NullPolicy(), demo_suite.tasks[0], tools) == ["submit"]
    asked = {"id": "a", "type": "function", "function": {"name": ASK_USER, "arguments": '{"question": "Q?"}'}}
    lines = [{"type": "message", "message": {"role": "user", "content": "do it"}},
             {"type": "message", "message": {"role": "assistant", "content": None, "tool_calls": [asked]}}]  # fmt: skip
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    turn = ReplayPolicy(tmp_path / "t.jsonl").respond([{"role": "user", "content": "do it"}], tools)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [(ASK_USER, '{"question": "Q?"}')]
