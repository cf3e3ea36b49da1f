"""The reviewer's pieces that need no sandbox: the rubric's schema, the reading tools' path rule,
the scripted reviewer's checklist, the calibration figures, the reviewer's weight in the
composite, and a no-tools review through evalkit's own HTTP server (the real SDK and client)."""

from __future__ import annotations

import json

import pytest
from toy import POWER

from evalkit.calibration.figures import auc, kind_figures
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.models.policies import AssistantTurn, ToolCall
from evalkit.models.server import ModelServer
from evalkit.review.review_tools import ToolRefused, _inside
from evalkit.review.reviewer import ReviewCase, Reviewer
from evalkit.review.rubric import parse_answers
from evalkit.review.scripted import grade
from evalkit.review.verdict import RubricAnswers
from evalkit.scoring.composite import Weights, composite

ANSWER = {"does_what_asked": 9, "in_scope": 8, "readable": 7, "would_merge": True, "score": 8, "summary": "ok"}


def diff_adding(lines: str, path: str = "calc/__init__.py") -> str:
    added = "".join(f"+{line}\n" for line in lines.splitlines())
    count = len(lines.splitlines())
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -5,0 +6,{count} @@\n{added}"


REFERENCE = diff_adding(POWER)


def test_an_answer_in_schema_is_read_and_one_out_of_it_says_where():
    assert isinstance(parse_answers(json.dumps(ANSWER)), RubricAnswers)
    assert "score" in parse_answers(json.dumps({**ANSWER, "score": 11}))
    assert "would_merge" in parse_answers(json.dumps({k: v for k, v in ANSWER.items() if k != "would_merge"}))
    assert "not JSON" in parse_answers("{score: 8")


@pytest.mark.parametrize("path", ["../etc/passwd", "a/../../b", ".."])
def test_the_reading_tools_stay_inside_the_tree(path):
    with pytest.raises(ToolRefused):
        _inside(path)


def test_an_absolute_path_is_read_inside_the_tree():
    assert _inside("/etc/passwd") == "etc/passwd" and _inside(None) == "." and _inside("a/./b") == "a/b"


def test_the_checklist_merges_the_reference_and_blames_leftovers_by_line():
    assert grade(REFERENCE, REFERENCE)["score"] == 10
    sloppy = diff_adding(
        POWER.replace("    return result", '    print("DEBUG", result)  # TODO: hack\n    return result')
    )
    search = 'calc/__init__.py:12:    print("DEBUG", result)  # TODO: hack\n'
    verdict = grade(sloppy, REFERENCE, search)
    assert {"debug output", "hack marker"} <= set(verdict["leftovers"]) and verdict["score"] <= 6
    assert [(b["path"], b["line"]) for b in verdict["lines"]] == [("calc/__init__.py", 12)]
    assert not verdict["would_merge"]
    elsewhere = REFERENCE + diff_adding("X = 1", "calc/other.py")
    assert grade(elsewhere, REFERENCE)["in_scope"] < 10


def test_the_figures_of_a_kind():
    assert auc([1.0, 0.9], [0.5, 0.9]) == pytest.approx(0.875)
    figures = kind_figures("k", {"a": 1.0, "b": 0.9, "c": 0.8}, {"a": 0.8, "b": 0.9})
    assert figures.pairs == 2 and figures.lower == 0.5 and figures.caught == 0.5
    assert figures.mean_gap == pytest.approx(0.1)
    assert kind_figures("k", {"a": 1.0}, {}).auc is None


def test_the_reviewer_counts_in_the_composite_only_when_weighted():
    axes = {"correctness": 1.0, "quality": 1.0, "efficiency": 1.0, "interaction": 1.0, "reviewer": 0.0}
    assert composite(axes, Weights()) == 1.0
    weighted = Weights(reviewer=1.0)
    assert composite(axes, weighted) == pytest.approx(0.5)
    assert composite({**axes, "reviewer": None}, weighted) == 1.0  # a failed review: renormalised over the rest


class Answers:
    """A policy answering each request with the next of `turns`, the last one repeated."""

    def __init__(self, *turns: AssistantTurn) -> None:
        self.turns, self.seen = list(turns), []

    def respond(self, messages, tools):
        self.seen.append([t["function"]["name"] for t in tools])
        return self.turns[min(len(self.seen) - 1, len(self.turns) - 1)]


def review_with(policy, mode="no-tools"):
    with ModelServer({"r": policy}) as server:
        client = ChatClient(ModelSpec(name="r", model="r", base_url=server.base_url, max_retries=0))
        reviewer = Reviewer(client, mode)  # type: ignore[arg-type]
        return reviewer.review(ReviewCase("Add power.", REFERENCE, REFERENCE))


def test_a_no_tools_review_offers_the_verdict_alone_and_records_its_answers():
    policy = Answers(AssistantTurn(tool_calls=[ToolCall("verdict", ANSWER)]))
    verdict = review_with(policy)
    assert policy.seen == [["verdict"]] and verdict.score == 0.8 and verdict.answers.in_scope == 8
    assert verdict.turns == 1 and verdict.prompt_tokens > 0 and verdict.error is None


def test_a_reviewer_out_of_schema_or_silent_is_recorded_not_raised():
    out_of_schema = review_with(Answers(AssistantTurn(tool_calls=[ToolCall("verdict", {**ANSWER, "score": 42})])))
    assert out_of_schema.score is None and "out of schema: score" in out_of_schema.error
    silent = review_with(Answers(AssistantTurn(content="Looks good to me.")))
    assert silent.score is None and "never called `verdict`" in silent.error
    with ModelServer({}) as server:  # no such model: the server answers 404
        client = ChatClient(ModelSpec(name="gone", model="gone", base_url=server.base_url, max_retries=0))
        failed = Reviewer(client, "no-tools").review(ReviewCase("Add power.", REFERENCE, REFERENCE))
    assert failed.score is None and failed.error.startswith("endpoint error")


def test_an_empty_change_is_graded_without_asking():
    policy = Answers(AssistantTurn(content="never asked"))
    with ModelServer({"r": policy}) as server:
        client = ChatClient(ModelSpec(name="r", model="r", base_url=server.base_url, max_retries=0))
        verdict = Reviewer(client).review(ReviewCase("Add power.", "", REFERENCE))
    assert verdict.score == 0.0 and policy.seen == []
