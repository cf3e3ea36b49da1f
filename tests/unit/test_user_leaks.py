"""A simulated user's answer never carries the reference change: quoted lines and the change's new
names are redacted and counted; what the prompt itself names stays."""

from pathlib import Path

import pytest

from evalkit.tasks import load_suite
from evalkit.user.leaks import REDACTED, leak_sources, redact

DEMO = Path(__file__).resolve().parents[2] / "tasks" / "demo"


@pytest.fixture(scope="module")
def ttl_task():
    return next(t for t in load_suite(DEMO).tasks if t.id == "kvstore-ttl")


def test_leak_sources_hold_added_lines_and_new_names_but_not_the_prompts_names(ttl_task):
    sources = leak_sources(ttl_task)
    assert "def positive_seconds(text: str) -> float:" in sources.lines
    assert {"positive_seconds", "validate_ttl"} <= sources.identifiers
    assert not {"ttl", "clock", "Store", "set"} & sources.identifiers  # the prompt gives these
    assert "absolute" not in sources.identifiers  # a word of a comment is no name


def test_a_leak_attempt_is_redacted_and_counted(ttl_task):
    attack = (
        "Write it like this:   def positive_seconds(text:  str) -> float:\n"
        "and check the value with validate_ttl before the ttl reaches the clock."
    )
    text, count = redact(attack, leak_sources(ttl_task))
    assert count == 2
    assert "positive_seconds" not in text and "validate_ttl" not in text
    assert text.count(REDACTED) == 2
    assert "the ttl reaches the clock" in text  # the prompt's own words are left alone


def test_a_qualified_new_name_is_redacted_too(ttl_task):
    text, count = redact("See kvstore.cli.positive_seconds.", leak_sources(ttl_task))
    assert (text, count) == (f"See kvstore.cli.{REDACTED}.", 1)


def test_an_answer_without_code_passes_unchanged(ttl_task):
    answer = "Expired keys should look deleted everywhere, and a plain set clears the ttl."
    assert redact(answer, leak_sources(ttl_task)) == (answer, 0)
