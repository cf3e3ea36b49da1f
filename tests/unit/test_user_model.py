"""A model plays the user over real HTTP (evalkit's built-in server with a scripted answering
policy): its answer is redacted, its class line read, an unreadable class decided by the overlap
rule, and an endpoint that fails leaves the question unanswered with the error kept."""

import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.models import ModelServer
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.models.policies import AssistantTurn
from evalkit.tasks import load_suite
from evalkit.user import ModelUser, OracleUser, QuestionClass, make_user, user_context
from evalkit.user.leaks import REDACTED

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo"
INTENT = "A ttl of zero or a negative ttl is an error: raise KVError, and the CLI exits 2 with a message."


class ScriptedUser:
    """Answers every question with one fixed text, keeping the conversations it was sent."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.seen: list[list[dict]] = []

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        self.seen.append(messages)
        return AssistantTurn(content=self.reply)


class SlowUser(ScriptedUser):
    """Takes `delay_s` to answer: a user model slower than the attempt has time for."""

    def __init__(self, reply: str, delay_s: float) -> None:
        super().__init__(reply)
        self.delay_s = delay_s

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        time.sleep(self.delay_s)
        return super().respond(messages, tools)


REPLIES = {
    "quoting": "Just do this:\n    def positive_seconds(text: str) -> float:\nCLASS: informative",
    "classed": "The request already says expired keys act as missing.\nCLASS: redundant",
    "unclassed": "Zero or negative is an error; the CLI exits 2 with a message.\nCLASS: probably useful",
    "unsure": "I don't know, sorry.",
    "coding": "Use a helper:\n```python\nimport time\nwhile True:\n    pass\n```\n"
    "and keep the CLI as it is.\n```\nCLASS: informative",  # the second block never closed
}


@pytest.fixture(scope="module")
def context():
    task = next(t for t in load_suite(DEMO).tasks if t.id == "kvstore-ttl")
    return user_context(task.model_copy(update={"metadata": {"intent": INTENT}}))


@pytest.fixture(scope="module")
def server():
    policies = {name: ScriptedUser(reply) for name, reply in REPLIES.items()}
    policies["slow"] = SlowUser("Zero is an error.\nCLASS: informative", delay_s=5)
    with ModelServer(policies) as running:
        yield running, policies


def user(server, model: str) -> ModelUser:
    running, _ = server
    return ModelUser(ChatClient(ModelSpec(name=f"user-{model}", model=model, base_url=running.base_url, max_retries=0)))


def test_an_answer_quoting_the_reference_change_comes_back_redacted(server, context):
    answer = user(server, "quoting").answer("How do I parse the seconds?", context)
    assert "positive_seconds" not in answer.text and REDACTED in answer.text
    assert answer.redacted == 1  # the whole quoted line, counted once
    assert answer.question_class is QuestionClass.INFORMATIVE
    assert answer.usage.total_tokens > 0 and answer.error is None


def test_a_user_answers_in_words_code_blocks_are_left_out(server, context):
    answer = user(server, "coding").answer("How should I write it?", context)
    assert "import time" not in answer.text and "while True" not in answer.text and "```" not in answer.text
    assert answer.text.startswith("Use a helper:") and "and keep the CLI as it is." in answer.text
    assert answer.question_class is QuestionClass.INFORMATIVE


def test_the_class_line_is_read_and_left_out_of_the_answer(server, context):
    answer = user(server, "classed").answer("Should expired keys be listed?", context)
    assert answer.question_class is QuestionClass.REDUNDANT
    assert answer.text == "The request already says expired keys act as missing."


def test_an_unreadable_class_falls_back_to_the_overlap_rule(server, context):
    answer = user(server, "unclassed").answer("What if the ttl is zero?", context)
    assert answer.question_class is QuestionClass.INFORMATIVE  # intent words the prompt lacks
    assert "CLASS" not in answer.text
    unsure = user(server, "unsure").answer("What if the ttl is zero?", context)  # no class line at all
    assert (unsure.text, unsure.question_class) == ("I don't know, sorry.", QuestionClass.UNANSWERED)


def test_the_simulator_is_told_the_intent_and_the_outline_but_no_reference_code(server, context):
    user(server, "classed").answer("Anything else?", context)
    _, policies = server
    system = policies["classed"].seen[-1][0]["content"]
    assert INTENT in system and "function kvstore.store.Store.ttl" in system
    assert not any(line in system for line in context.leak_sources.lines if line not in context.prompt)


def test_an_endpoint_failure_leaves_the_question_unanswered_with_the_error(server, context):
    answer = user(server, "no-such-model").answer("What if the ttl is zero?", context)
    assert answer.question_class is QuestionClass.UNANSWERED
    assert answer.error and "no-such-model" in answer.error
    assert answer.redacted == 0 and answer.usage.total_tokens == 0


def test_a_slow_user_model_is_given_up_at_the_attempts_deadline_not_its_own_limit(server, context):
    started = time.monotonic()
    answer = user(server, "slow").answer("What if the ttl is zero?", context, deadline=started + 0.5)
    assert time.monotonic() - started < 3  # not the 5 s the model takes, nor the user's own 120 s
    assert answer.question_class is QuestionClass.UNANSWERED and answer.error
    assert answer.usage.total_tokens == 0


def test_make_user_builds_the_oracle_by_name_and_any_endpoint_as_a_model_user(server):
    running, _ = server
    specs = {
        "small": ModelSpec(name="small", model="classed", base_url=running.base_url),
        "oracle": ModelSpec(name="oracle", model="oracle", builtin="oracle"),
    }
    assert isinstance(make_user("oracle-user", specs.__getitem__), OracleUser)
    made = make_user("small", specs.__getitem__)
    assert isinstance(made, ModelUser) and made.name == "small"
    with pytest.raises(EvalkitError, match="--user-model oracle: a built-in agent policy cannot answer"):
        make_user("oracle", specs.__getitem__)
