"""What keeps a long gather's work and its scoring fast: the decisions journal (a killed gather's
half line dropped, an accepted commit counted only with its whole task folder, one repository per
--out), task folders written whole, the per-function FAIL_TO_PASS sample, the funnel, and the
plain progress lines."""

import io
import json

import pytest
from rich.console import Console

from evalkit.errors import EvalkitError
from evalkit.gather.display import GatherDisplay
from evalkit.gather.history import Rejection
from evalkit.gather.journal import JOURNAL, Journal
from evalkit.gather.report import funnel_of
from evalkit.gather.sampling import sample_per_function
from evalkit.gather.validate import classify_tests
from evalkit.tasks import load_suite
from evalkit.tasks.model import Task, TaskSource, TestSpec
from evalkit.tasks.write import STAGING, write_suite, write_task_atomic
from evalkit.verify.junit import TestStatus


def task(task_id="shop-abc", prompt="Add discount codes."):
    spec = TestSpec(command="python -m pytest", fail_to_pass=["tests/test_a.py::test_a"])
    source = TaskSource(git="/repos/shop", base_commit="p" * 40)
    return Task(id=task_id, prompt=prompt, repo="shop", source=source, tests=spec, patch="d\n", test_patch="t\n")


def test_decisions_survive_a_reopen_and_a_half_written_last_line_is_dropped(tmp_path):
    journal = Journal(tmp_path, "/repos/shop")
    assert journal.open() == {}
    journal.reject(Rejection("a" * 40, "Explain the cart", "history", "no test change"))
    journal.accept(task(), "b" * 40, "Add discount codes")
    with (tmp_path / JOURNAL).open("a") as handle:
        handle.write('{"repo": "/repos/shop", "sha": "cccc')  # a kill in the middle of a write
    decided = Journal(tmp_path, "/repos/shop").open()
    assert sorted(decided) == ["a" * 40, "b" * 40]
    assert decided["a" * 40].rejection() == Rejection("a" * 40, "Explain the cart", "history", "no test change")
    assert decided["b" * 40].outcome == "accepted" and decided["b" * 40].task_id == "shop-abc"
    assert (tmp_path / JOURNAL).read_text().endswith("}\n")
    assert [t.id for t in load_suite(tmp_path).tasks] == ["shop-abc"]


def test_an_accepted_commit_without_its_task_folder_is_undecided(tmp_path):
    journal = Journal(tmp_path, "/repos/shop")
    journal.open()
    journal.accept(task(), "b" * 40, "Add discount codes")
    (tmp_path / "shop-abc" / "task.toml").unlink()
    assert Journal(tmp_path, "/repos/shop").open() == {}


def test_a_journal_belongs_to_one_repository(tmp_path):
    Journal(tmp_path, "/repos/shop").reject(Rejection("a" * 40, "x", "history", "no test change"))
    with pytest.raises(EvalkitError, match=r"decisions\.jsonl: the decisions of a gather of /repos/shop, not /b"):
        Journal(tmp_path, "/b").open()
    (tmp_path / JOURNAL).write_text("not json\n")
    with pytest.raises(EvalkitError, match="line 1 is not a gather decision; use another --out"):
        Journal(tmp_path, "/repos/shop").open()


def test_a_task_folder_is_replaced_whole_and_leftovers_of_a_kill_are_out_of_sight(tmp_path):
    write_suite(tmp_path, "s", "d", [])
    write_task_atomic(tmp_path, task(prompt="First."))
    leftover = tmp_path / STAGING / "shop-abc.1234" / "new"
    leftover.mkdir(parents=True)
    (leftover / "task.toml").write_text("id = 'half'\n")  # a kill before the rename
    write_task_atomic(tmp_path, task(prompt="Second."))
    suite = load_suite(tmp_path)
    assert [(t.id, t.prompt) for t in suite.tasks] == [("shop-abc", "Second.")] and not suite.skipped
    Journal(tmp_path, "/repos/shop").open()
    assert not (tmp_path / STAGING).exists()


def test_a_function_with_thousands_of_ids_keeps_an_even_sample():
    ids = [f"tests/test_p.py::test_big[{i:05d}]" for i in range(18_000)] + ["tests/test_p.py::test_small[a]"]
    kept = sample_per_function(ids[::-1], 25)
    big = [i for i in kept if "test_big" in i]
    assert len(big) == 25 and big[0] == ids[0] and big[-1] == ids[17_999] and big == sorted(big)
    assert "tests/test_p.py::test_small[a]" in kept and len(kept) == 26
    assert sample_per_function(ids, 25) == kept  # the same sample on every gather
    assert sample_per_function(ids, 1) == [ids[0], "tests/test_p.py::test_small[a]"]


def test_the_verdict_keeps_the_full_count_of_a_sampled_fail_to_pass():
    after = {f"t.py::test_p[{i}]": TestStatus.PASSED for i in range(100)} | {"t.py::test_q": TestStatus.PASSED}
    lists = classify_tests({}, after, set(), cap=50, seed="x", per_function=10)
    assert len(lists.fail_to_pass) == 11 and lists.fail_to_pass_total == 101 and lists.reason is None


def decision(journal, sha, stage, outcome="rejected"):
    if outcome == "accepted":
        return journal.accept(task(f"shop-{sha}"), sha, sha)
    return journal.reject(Rejection(sha, sha, stage, "why"))


def test_the_funnel_counts_each_stage(tmp_path):
    journal = Journal(tmp_path, "/r")
    decisions = [decision(journal, s, "history") for s in "abcdef"]
    decisions += [decision(journal, "g", "prompt"), decision(journal, "h", "validation")]
    decisions.append(decision(journal, "i", "validation", "accepted"))
    funnel = funnel_of(12, decisions, kept=1)
    assert (funnel.screened_out, funnel.candidates, funnel.validated, funnel.accepted) == (6, 6, 3, 1)
    assert funnel.rejected_by_stage == {"history": 6, "prompt": 1, "validation": 1}
    assert json.loads(json.dumps(funnel.as_json()))["survival"] == 0.3333
    assert funnel.line() == (
        "funnel: 12 commits → 6 candidates → 3 validated → 1 accepted (33% survive) → 1 kept; "
        "environment ran the tests of 1 of 1 (100%)"  # the accepted one; the validation rejection has no evidence
    )


def test_the_funnel_reports_the_share_of_environments_that_ran_the_tests(tmp_path):
    """Environment success: of the candidates whose tests ran in the sandbox, how many had an image,
    install and collection that ran the repository's tests (some test passed), accepted or not."""
    journal = Journal(tmp_path, "/r")
    decisions = [decision(journal, "a", "history"), decision(journal, "b", "validation", "accepted")]
    decisions += [journal.reject(Rejection(s, s, "validation", "tests fail", "ran")) for s in "cd"]
    rounds = ("interpreter too new: an older Python base → still not running",)
    lost = Rejection("e", "e", "validation", "ImportError: MutableMapping", "failed", "interpreter too new", rounds)
    decisions += [journal.reject(lost)]
    decisions += [journal.reject(Rejection("f", "f", "environment", "code for an older Python"))]
    repaired = ["unknown option: install pytest-timeout → ran"]
    decisions[1] = journal.accept(task(), "b", "b", repaired)
    reread = Journal(tmp_path, "/r").read()  # the evidence, classes and rounds survive a resumed gather
    assert reread["e"].rejection() == lost and reread["b"].repairs == repaired
    funnel = funnel_of(6, list(reread.values()), kept=1)
    assert (funnel.environment_ran, funnel.environment_failed) == (3, 1)
    assert (funnel.candidates, funnel.validated) == (5, 4)  # the environment-stage one never reached a sandbox
    assert funnel.as_json()["environment_rate"] == 0.75
    assert funnel.environment_losses == {"interpreter too new": 1} and funnel.environment_repaired == 1
    assert funnel.line().endswith(
        "environment ran the tests of 3 of 4 (75%), 1 after a repair; lost: 1 interpreter too new"
    )
    assert funnel_of(1, decisions[:1], kept=0).environment_rate is None


def test_without_a_terminal_each_candidate_is_a_line_with_rate_and_eta(tmp_path):
    out = io.StringIO()
    journal = Journal(tmp_path, "/r")
    with GatherDisplay(Console(file=out, width=200), concurrency=2) as display:
        display.window(3)
        display.screened_one(decision(journal, "a" * 40, "history"))
        display.screened_one(None)
        display.screened_one(None)
        display.screening_done()
        display.started("b" * 40, "Add codes")
        display.decided(decision(journal, "b" * 40, "validation", "accepted"), " (FAIL_TO_PASS 4, PASS_TO_PASS 2)")
    lines = out.getvalue().splitlines()
    assert lines[0] == "3 commits scanned: 1 screened out, 2 candidates"
    assert lines[1] == f"validating {'b' * 10} Add codes"
    assert lines[2].startswith(f"[1/2] {'b' * 10} {'b' * 40}: accepted (FAIL_TO_PASS 4, PASS_TO_PASS 2); ")
    assert "/min, ETA " in lines[2] and lines[2].endswith("(at most 1 candidate left)")
