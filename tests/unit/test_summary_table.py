"""The summary printed after `evalkit run` / `evalkit score` at any terminal width: no line wider
than the terminal, no figure cut, model / resolved / composite always there, long model names
shortened but told apart, and what is left out named with where to find it."""

import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from evalkit.runs.display import summary_table
from evalkit.runs.fitted_table import distinct_names

WIDTHS = (60, 80, 100, 120, 160, 200)
NAMES = ("openrouter/anthropic/claude-sonnet-4.5", "openrouter/anthropic/claude-opus-4.1", "openrouter/openai/gpt-5")


def _entry(model, i):
    rate = (0.625, 0.75, 0.5)[i]
    return {
        "model": model,
        "attempts": 24 + i,
        "tasks": 8,
        "samples": 3,
        "resolved": 15,
        "resolved_rate": {"mean": rate, "ci95": [rate - 0.3, rate + 0.2]},
        "pass_at_k": {"1": rate, "2": rate + 0.11, "3": rate + 0.17},
        "best_of_k": {"1": 0.5},
        "axes": {
            "correctness": {"mean": rate},
            "quality": {"mean": (0.81, 0.82, 0.83)[i]},
            "efficiency": {"mean": (0.91, 0.92, 0.93)[i]},
            "interaction": {"mean": (0.97, 0.96, 0.95)[i]},
            "composite": {"mean": (0.73, 0.80, 0.65)[i]},
            "reviewer": {"mean": 0.66} if i == 1 else None,
        },
        "cost_per_task": (0.0123, 0.5, None)[i],
        "median_tokens": (123456.0, 98765.0, 4321.0)[i],
        "errors": (0, 3, 12)[i],
        "stop_reasons": {"submitted": 20 - i, "max_turns": 3 + i, "endpoint_error": 1 + i},
        "integrity": {"fail": 1 + i, "warn": 2},
    }


MODELS = [_entry(name, i) for i, name in enumerate(NAMES)]

# per column: its first header word, and the text of each model's cell, every piece unbreakable
SHOWN = {
    "attempts": [["24"], ["25"], ["26"]],
    "resolved": [["62.5%", "[32%–82%]"], ["75.0%", "[45%–95%]"], ["50.0%", "[20%–70%]"]],
    "pass@k": [["@1 0.62", "@2 0.73", "@3 0.80"], ["@1 0.75", "@2 0.86", "@3 0.92"], ["@1 0.50", "@2 0.61", "@3 0.67"]],
    "quality": [["0.81"], ["0.82"], ["0.83"]],
    "efficiency": [["0.91"], ["0.92"], ["0.93"]],
    "interaction": [["0.97"], ["0.96"], ["0.95"]],
    "composite": [["0.73"], ["0.80"], ["0.65"]],
    "reviewer": [["-"], ["0.66"], ["-"]],
    "cost/task": [["0.0123"], ["0.5000"], ["-"]],
    "median": [["123,456"], ["98,765"], ["4,321"]],
    "errors": [["0"], ["3"], ["12"]],
    "integrity": [["1 fail", "2 warn"], ["2 fail", "2 warn"], ["3 fail", "2 warn"]],
    "stop": [
        ["submitted 20", "max_turns 3", "endpoint_error 1"],
        ["submitted 19", "max_turns 4", "endpoint_error 2"],
        ["submitted 18", "max_turns 5", "endpoint_error 3"],
    ],
}
LEFT_OUT_NAMES = {
    "attempts": "attempts",
    "pass@k": "pass@k",
    "quality": "quality",
    "efficiency": "efficiency",
    "interaction": "interaction",
    "reviewer": "reviewer",
    "cost/task": "cost/task $",
    "median": "median tokens",
    "errors": "errors",
    "integrity": "integrity",
    "stop": "stop reasons",
}
NUMBER = re.compile(r"\d[\d,.]*%?")


def render(width: int, models=MODELS) -> str:
    console = Console(width=width, record=True)
    console.print(summary_table(models, "run smoke on demo"))
    return console.export_text()


def split(text: str) -> tuple[list[str], str]:
    """The tables' lines with each row's model name taken off, and the footnote."""
    table, _, footnote = text.partition("not shown at ")
    return [re.sub(r"^\S+", "", line) for line in table.splitlines()], footnote


@pytest.mark.parametrize("width", WIDTHS)
def test_every_figure_shown_is_whole_and_no_line_is_wider_than_the_terminal(width):
    text = render(width)
    assert max(cell_len(line) for line in text.splitlines()) <= width
    lines, footnote = split(text)
    body = "\n".join(lines)
    assert "…" not in body  # only model names are ever shortened
    wide_numbers = set(NUMBER.findall("\n".join(split(render(1000))[0])))
    assert set(NUMBER.findall(body)) <= wide_numbers  # a cut number would be a token the wide table lacks
    for header, cells in SHOWN.items():
        if re.search(rf"(^|\s){re.escape(header)}(\s|$)", body):
            for cell in cells:
                for piece in cell:
                    assert piece in body, (width, header, piece)
        else:  # not in a table: named in the footnote
            assert LEFT_OUT_NAMES[header] in " ".join(footnote.split()), (width, header)


@pytest.mark.parametrize("width", WIDTHS)
def test_model_resolved_and_composite_are_always_in_the_first_table(width):
    first = render(width).split("\n\n")[0]
    for word in ("model", "resolved", "composite"):
        assert word in first
    lines = first.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("─"))
    rows = [line for line in lines[rule + 1 :] if line and not line.startswith(" ")]
    keys = [row.split()[0] for row in rows]
    assert len(keys) == len(set(keys)) == len(NAMES)
    for key, name in zip(keys, NAMES, strict=True):
        head, _, tail = key.partition("…")
        assert key == name or (name.startswith(head) and name.endswith(tail))
    for model, resolved, composite in zip(NAMES, SHOWN["resolved"], SHOWN["composite"], strict=True):
        assert resolved[0] in first and composite[0] in first, model


def test_a_footnote_names_what_is_left_out_and_where_to_see_it():
    text = " ".join(render(60).split())
    assert "not shown at 60 columns:" in text and "summary.json" in text
    needed = int(re.search(r"a terminal of (\d+) columns", text).group(1))
    assert "not shown" not in render(needed)
    assert "not shown" not in render(200)


def test_short_names_keep_everything_in_one_table_on_a_wide_terminal():
    models = [_entry(name, i) for i, name in enumerate(("oracle", "null", "qwen"))]
    text = render(200, models)
    assert "\n\n" not in text.strip() and "not shown" not in text
    assert all(name in text for name in ("oracle", "null", "qwen"))


def test_names_that_differ_in_the_middle_stay_apart_when_shortened():
    names = ["gpt-4o-2024-08-06", "gpt-4o-mini-2024-08-06", "azure/gpt-4o-2024-08-06"]
    short = distinct_names(names, 12)
    assert short is not None and len(set(short)) == 3
    assert all(len(s) <= 12 for s in short)
    assert distinct_names(["abc-1-xyz", "abc-2-xyz"], 5) is None  # then the column widens instead
