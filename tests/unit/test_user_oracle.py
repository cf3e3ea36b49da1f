"""oracle-user answers from the task's hidden intent, deterministically: intent the prompt lacks is
informative, what the prompt already says is redundant, and the rest is "I don't know."."""

from pathlib import Path

import pytest

from evalkit.tasks import load_suite
from evalkit.user import OracleUser, QuestionClass, user_context

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo"
INTENT = (
    "Add expiring keys to the store. "
    "Expired keys must act as missing everywhere. "
    "A ttl of zero or a negative ttl is an error: raise KVError, and the CLI exits 2 with a message. "
    "Expiry is stored as an absolute time in the log so that it survives reopening."
)


@pytest.fixture(scope="module")
def context():
    task = next(t for t in load_suite(DEMO).tasks if t.id == "kvstore-ttl")
    return user_context(task.model_copy(update={"metadata": {**task.metadata, "intent": INTENT}}))


def test_a_question_the_intent_answers_beyond_the_prompt_is_informative(context):
    answer = OracleUser().answer("What should happen if the ttl is zero or negative?", context)
    assert answer.question_class is QuestionClass.INFORMATIVE
    assert "negative" in answer.text and "negative" not in context.prompt
    assert answer.redacted == 0 and answer.usage.total_tokens == 0 and answer.error is None


def test_a_question_the_prompt_already_answers_is_redundant(context):
    answer = OracleUser().answer("Should expired keys show up in keys() or len()?", context)
    assert answer.question_class is QuestionClass.REDUNDANT
    assert answer.text == "Expired keys must act as missing everywhere."


def test_an_unrelated_question_is_unanswered(context):
    answer = OracleUser().answer("Which colour should the logo be?", context)
    assert (answer.text, answer.question_class) == ("I don't know.", QuestionClass.UNANSWERED)


def test_answers_are_the_same_every_time(context):
    question = "How is expiry kept in the log?"
    assert OracleUser().answer(question, context) == OracleUser().answer(question, context)


def test_an_intent_naming_the_changes_code_is_redacted_in_the_answer(context):
    leaky = INTENT + " Validate it in positive_seconds for the CLI."
    task_context = context.__class__(**{**vars(context), "intent": leaky})
    answer = OracleUser().answer("Where do I validate the seconds for the CLI?", task_context)
    assert "positive_seconds" not in answer.text and answer.redacted == 1
    assert answer.question_class is QuestionClass.INFORMATIVE


def test_the_context_holds_the_intent_and_an_outline_without_code(context):
    assert context.intent == INTENT
    assert "function kvstore.store.Store.ttl" in context.change_summary
    assert not any(line in context.change_summary for line in context.leak_sources.lines)
