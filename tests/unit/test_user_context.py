"""What the simulated user is told of a task: the hidden intent (with its fallbacks) and the
reference change in outline, never a line of its code."""

from pathlib import Path

import pytest

from evalkit.tasks import load_suite
from evalkit.user import user_context

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo"
TASKS = load_suite(DEMO).tasks


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_change_summary_names_files_and_new_names_but_quotes_no_code(task):
    summary = user_context(task).change_summary
    added = [line[1:].strip() for line in task.patch.splitlines() if line.startswith("+") and line[1:].strip()]
    assert summary.startswith("Files: ") and "New names: " in summary
    assert not [line for line in added if len(line) >= 12 and line in summary]


def test_the_summary_gives_each_new_name_its_kind_and_module():
    ttl = next(t for t in TASKS if t.id == "kvstore-ttl")
    names = user_context(ttl).change_summary.split("New names: ")[1].split(", ")
    assert names == [
        "function kvstore.cli.positive_seconds",
        "function kvstore.store.validate_ttl",
        "function kvstore.store.Store.ttl",
        "function kvstore.store.Store.purge_expired",
    ]


def test_the_intent_falls_back_to_the_commit_message_then_the_prompt():
    task = TASKS[0].model_copy(update={"metadata": {}})  # the demo tasks will carry an intent of their own
    assert user_context(task).intent == task.prompt.strip()
    gathered = task.model_copy(update={"metadata": {"original_message": "Fix it.\n", "interface": "- `f()`"}})
    context = user_context(gathered)
    assert (context.intent, context.interface) == ("Fix it.", "- `f()`")
    both = task.model_copy(update={"metadata": {"original_message": "Fix it.", "intent": "The whole story."}})
    assert user_context(both).intent == "The whole story."
