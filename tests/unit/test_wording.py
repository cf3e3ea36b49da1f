"""Counts read as English: "1 turn", "2 turns", never "1 turns" or "1 task(s)"."""

import io

from rich.console import Console

from evalkit.records import AttemptRecord
from evalkit.runs.display import RunDisplay
from evalkit.wording import counted


def test_one_is_singular_and_every_other_count_is_plural():
    assert counted(1, "turn") == "1 turn"
    assert [counted(n, "task") for n in (0, 2, 12)] == ["0 tasks", "2 tasks", "12 tasks"]
    assert counted(2, "match", "matches") == "2 matches"


def test_the_line_printed_per_attempt_says_1_turn():
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    record = AttemptRecord(
        run_id="r", task_id="t", model="m", sample=0, resolved=True, stop_reason="submitted", turns=1
    )
    with RunDisplay(console, 2, ["m"]) as display:
        display.add(record)
        display.add(record.model_copy(update={"sample": 1, "turns": 3}))
    lines = out.getvalue().splitlines()
    assert "submitted, 1 turn, " in lines[0] and "submitted, 3 turns, " in lines[1]
