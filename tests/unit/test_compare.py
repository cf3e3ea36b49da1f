"""`evalkit compare`: a planted regression is caught (exit 1, flips, markdown, JUnit), noise alone
rarely is (false-alarm rate measured against alpha), identical re-runs pass, bad input is one
EvalkitError, and the McNemar p-value matches an independent binomial sum."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from junitparser import JUnitXml
from rich.console import Console

from evalkit.errors import EvalkitError
from evalkit.records import AttemptRecord
from evalkit.report.compare.command import compare_command
from evalkit.report.compare.comparison import compare_runs, junit_report, mcnemar_exact, paired_bootstrap
from evalkit.runs.store import RunManifest, RunStore
from evalkit.scoring.attempt_scores import AttemptScores, CorrectnessAxis
from evalkit.scoring.composite import Weights, composite
from evalkit.scoring.efficiency import EfficiencyScore
from evalkit.scoring.interaction import InteractionScore
from evalkit.scoring.quality import QualityScore
from evalkit.tasks import SkippedTask

TASKS = [f"t{i:02d}" for i in range(40)]
BASE_RESOLVED = set(TASKS[:30])
PLANTED = (BASE_RESOLVED - set(TASKS[:14])) | {"t30", "t31"}  # 14 lost, 2 gained: 30 → 18


# -- helpers -------------------------------------------------------------------------------------------
def axes_for(task: str, sample: int, run_seed: int) -> dict[str, float]:
    """Per-task levels of the other axes with a little per-run noise, as a scorer would give."""
    rng = np.random.default_rng([int(task[1:]), sample, run_seed])
    level = (int(task[1:]) % 7) / 10
    return {
        "quality": float(np.clip(0.3 + level + rng.normal(0, 0.02), 0, 1)),
        "efficiency": float(np.clip(0.8 - level + rng.normal(0, 0.02), 0, 1)),
        "interaction": float(np.clip(0.9 + rng.normal(0, 0.02), 0, 1)),
    }


def score_row(record: AttemptRecord, axes: dict[str, float], weights: Weights) -> AttemptScores:
    values = {"correctness": float(record.resolved), **axes}
    return AttemptScores(
        run_id=record.run_id,
        task_id=record.task_id,
        model=record.model,
        sample=record.sample,
        correctness=CorrectnessAxis(
            score=values["correctness"],
            resolved=record.resolved,
            fail_to_pass=1.0,
            pass_to_pass=1.0,
            patch_applied=True,
        ),
        quality=QualityScore(
            score=axes["quality"],
            parts={},
            weights={},
            new_lint={},
            syntax_errors=[],
            debug_prints=0,
            breakpoints=0,
            commented_code=0,
            stray_files=[],
            whitespace_only_hunks=0,
            forbidden_edits=[],
            extra_files=[],
            missed_files=[],
            changed_lines=10,
            reference_lines=10,
            size_ratio=1.0,
        ),
        efficiency=EfficiencyScore(
            score=axes["efficiency"],
            prompt_tokens=1000,
            completion_tokens=100,
            cached_tokens=0,
            total_tokens=1100,
            tokens_reported=True,
            cost_usd=None,
            turns=5,
            tool_calls=5,
            wall_s=10.0,
            model_s=5.0,
            sandbox_s=5.0,
            budget_used={},
        ),
        interaction=InteractionScore(
            score=axes["interaction"], counts={}, penalties={}, final_message="done", endpoint_retries=0
        ),
        composite=composite(values, weights),
        weights=weights.normalised(),
    )


def write_run(
    root,
    run_id: str,
    resolved: dict[str, set[str]],
    *,
    suite: str = "demo",
    samples: int = 1,
    run_seed: int = 0,
    weights: Weights | None = None,
    skipped: tuple[str, ...] = (),
):
    """A scored run folder: run.json, results.jsonl and scores.jsonl (as `evalkit run` leaves them);
    `resolved` maps each model to the tasks it resolves (every sample); `skipped` tasks did not load."""
    weights = weights or Weights()
    tasks = [t for t in TASKS if t not in skipped]
    store = RunStore(root / run_id)
    store.open()
    store.write_manifest(
        RunManifest(
            run_id=run_id,
            suite=suite,
            suite_path=f"tasks/{suite}",
            tasks=tasks,
            skipped_tasks=[SkippedTask(task=t, file=f"tasks/{suite}/{t}/task.toml", reason="bad") for t in skipped],
            models={model: {"model": model} for model in resolved},
            samples=samples,
            created_at="2025-01-01T00:00:00+00:00",
            updated_at="2025-01-01T00:00:00+00:00",
        )
    )
    rows = []
    for model, solved in resolved.items():
        for task in tasks:
            for sample in range(samples):
                record = AttemptRecord(
                    run_id=run_id,
                    task_id=task,
                    model=model,
                    sample=sample,
                    resolved=task in solved,
                    stop_reason="submitted",
                )
                store.append(record)
                rows.append(score_row(record, axes_for(task, sample, run_seed), weights))
    (store.dir / "scores.jsonl").write_text("".join(row.model_dump_json() + "\n" for row in rows))
    (store.dir / "summary.json").write_text(json.dumps({"weights": weights.normalised()}))
    return store.dir


def frame(outcomes: dict[tuple[str, int], bool], model: str = "m", run_id: str = "r", **axes: float) -> pd.DataFrame:
    """An attempt table as `load_results` gives, with constant continuous axes unless given."""
    rows = []
    for (task, sample), resolved in outcomes.items():
        values = {"quality": 0.7, "efficiency": 0.6, "interaction": 0.9, **axes}
        values["composite"] = 0.6 * resolved + 0.15 * values["quality"] + 0.1 * values["efficiency"]
        values["composite"] += 0.15 * values["interaction"]
        rows.append(
            {"run_id": run_id, "task_id": task, "model": model, "sample": sample, "resolved": resolved}
            | {"stop_reason": "submitted", **values}
        )
    return pd.DataFrame(rows)


def compare(base, new, **options):
    settings = {"max_drop": 0.02, "alpha": 0.05, "base_model": None, "new_model": None}
    settings |= {"base_suite": "demo", "new_suite": "demo"} | options
    return compare_runs(base, new, **settings)


def run_command(base, new, tmp_path, **options):
    console = Console(record=True, width=200, file=io.StringIO())
    settings = {"max_drop": 0.02, "alpha": 0.05, "markdown": None, "junit": None}
    settings |= {"base_model": None, "new_model": None} | options
    code = compare_command(base, new, console=console, **settings)
    return code, console.export_text()


# -- a planted regression, an identical re-run -------------------------------------------------------
def test_a_planted_regression_exits_1_and_lists_flips_in_every_report(tmp_path):
    base = write_run(tmp_path, "base", {"agent-v1": BASE_RESOLVED}, run_seed=1)
    new = write_run(tmp_path, "new", {"agent-v2": PLANTED}, run_seed=2)
    paths = {name: tmp_path / "out" / f"compare.{name}" for name in ("md", "xml", "json")}
    code, text = run_command(base, new, tmp_path, markdown=paths["md"], junit=paths["xml"], json_out=paths["json"])

    assert code == 1
    assert "REGRESSION in resolved, composite" in text
    assert "resolved → unresolved (14): t00, t01" in text and "unresolved → resolved (2): t30, t31" in text
    result = json.loads(paths["json"].read_text())
    resolved = next(a for a in result["axes"] if a["axis"] == "resolved")
    assert (resolved["base"], resolved["new"]) == (0.75, 0.45)
    assert (resolved["base_only"], resolved["new_only"]) == (14, 2)
    assert resolved["p_worse"] == pytest.approx(137 / 2**16)  # (C(16,14) + C(16,15) + C(16,16)) / 2^16
    assert resolved["ci_high"] < 0 and result["regressions"] == ["resolved", "composite"]
    assert (result["base_model"], result["new_model"]) == ("agent-v1", "agent-v2")

    markdown = paths["md"].read_text()
    assert markdown.startswith("## REGRESSION in resolved, composite\n")
    assert "| resolved | 0.750 | 0.450 | -0.300 |" in markdown
    assert "**Resolved → unresolved (14):** `t00`, `t01`" in markdown

    cases = {case.name: case for suite in JUnitXml.fromfile(str(paths["xml"])) for case in suite}
    failed = {name for name, case in cases.items() if not case.is_passed}
    assert failed == set(TASKS[:14]) | {"resolved", "composite"}
    assert len(cases) == 40 + 2  # one per paired task, one per deciding axis


def test_a_rerun_of_the_same_model_is_no_regression(tmp_path):
    base = write_run(tmp_path, "first", {"m": BASE_RESOLVED}, run_seed=3)
    new = write_run(tmp_path, "second", {"m": BASE_RESOLVED}, run_seed=3)
    markdown, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    code, text = run_command(base, new, tmp_path, markdown=markdown, junit=junit)

    assert code == 0 and "No regression" in text
    assert markdown.read_text().startswith("## No regression\n")
    assert all(case.is_passed for suite in JUnitXml.fromfile(str(junit)) for case in suite)


def test_identical_frames_give_zero_differences_and_p_of_one():
    outcomes = {(t, 0): t in BASE_RESOLVED for t in TASKS}
    result = compare(frame(outcomes), frame(outcomes))
    assert not result.regression and not result.lost and not result.gained
    for axis in result.axes:
        assert (axis.diff, axis.ci_low, axis.ci_high, axis.p_worse) == (0, 0, 0, 1)
        assert axis.verdict == "no_change"


# -- noise only --------------------------------------------------------------------------------------
def test_noise_alone_raises_a_false_alarm_at_most_about_alpha_of_the_time():
    """400 pairs of runs drawn from the same per-task success probabilities and axis levels:
    the share flagged as a regression must stay near alpha (it is 0.0375 with this seed)."""
    rng = np.random.default_rng(1)
    tasks, sims, alpha = np.array([f"t{i:02d}" for i in range(50)]), 400, 0.05
    success = rng.uniform(0.05, 0.95, len(tasks))
    levels = {axis: rng.uniform(0.3, 0.9, len(tasks)) for axis in ("quality", "efficiency", "interaction")}

    def draw(run_id: str) -> pd.DataFrame:
        resolved = rng.random(len(tasks)) < success
        axes = {axis: np.clip(level + rng.normal(0, 0.1, len(tasks)), 0, 1) for axis, level in levels.items()}
        mixed = 0.6 * resolved + 0.15 * axes["quality"] + 0.1 * axes["efficiency"] + 0.15 * axes["interaction"]
        columns = {"run_id": run_id, "task_id": tasks, "model": "m", "sample": 0, "resolved": resolved}
        return pd.DataFrame(columns | {"stop_reason": "submitted", **axes, "composite": mixed})

    alarms = sum(compare(draw("a"), draw("b"), alpha=alpha, resamples=500, seed=k).regression for k in range(sims))
    rate = alarms / sims
    print(f"false-alarm rate over {sims} noise-only comparisons: {rate:.4f} (alpha {alpha})")
    assert rate <= alpha + 0.03, rate


# -- the tests themselves ----------------------------------------------------------------------------
@pytest.mark.parametrize(("worse", "better"), [(5, 1), (3, 3), (0, 4), (7, 0), (1, 0), (12, 9)])
def test_mcnemar_p_value_is_the_upper_binomial_tail(worse, better):
    total = worse + better
    expected = sum(math.comb(total, k) for k in range(worse, total + 1)) / 2**total
    assert mcnemar_exact(worse, better) == pytest.approx(expected, rel=1e-12)


def test_the_resolved_axis_uses_mcnemar_on_the_discordant_pairs():
    base = {(t, 0): i < 12 for i, t in enumerate(TASKS[:20])}  # t00–t11 resolved
    new = {(t, 0): i in range(5, 13) for i, t in enumerate(TASKS[:20])}  # t00–t04 lost, t12 gained
    result = compare(frame(base), frame(new))
    resolved = result.axis("resolved")
    assert (resolved.base_only, resolved.new_only) == (5, 1)
    assert resolved.p_worse == pytest.approx((math.comb(6, 5) + math.comb(6, 6)) / 2**6)
    assert resolved.diff == pytest.approx(-4 / 20)
    assert [f.task_id for f in result.lost] == TASKS[:5] and [f.task_id for f in result.gained] == ["t12"]
    assert resolved.verdict == "no_change"  # p = 0.109: four tasks' drop on twenty is within noise


def test_paired_bootstrap_interval_and_one_sided_p():
    diffs = np.random.default_rng(0).normal(-0.1, 0.1, 60)
    first, again = paired_bootstrap(diffs, 0.95, 2000, 0), paired_bootstrap(diffs, 0.95, 2000, 0)
    assert first == again  # seeded
    assert first.low < diffs.mean() < first.high < 0 and first.p_worse < 0.01 and first.p_better > 0.99
    assert paired_bootstrap([-0.2, -0.2], 0.95, 100, 0).p_worse == 0.0  # every task worse by the same
    assert paired_bootstrap([-0.5], 0.95, 100, 0).p_worse == 1.0  # one task shows nothing


def test_a_drop_within_max_drop_is_not_a_regression():
    tasks = [f"t{i:03d}" for i in range(400)]
    base = frame({(t, 0): True for t in tasks})
    new = frame({(t, 0): i >= 6 for i, t in enumerate(tasks)})  # 6 of 400 lost: significant, 1.5 %
    result = compare(base, new)
    assert result.axis("resolved").p_worse < 0.05 and result.axis("resolved").verdict == "small_drop"
    assert not result.regression
    assert compare(base, new, max_drop=0.01).axis("resolved").regression


def test_every_axis_is_judged_but_only_the_deciding_ones_set_the_exit_code():
    outcomes = {(t, 0): t in BASE_RESOLVED for t in TASKS}
    rng = np.random.default_rng(5)
    base, new = frame(outcomes), frame(outcomes)
    base["quality"] = rng.uniform(0.6, 0.9, len(TASKS))
    new["quality"] = base["quality"] - rng.uniform(0.05, 0.15, len(TASKS))  # worse on every task
    result = compare(base, new)
    assert result.axis("quality").regression and not result.axis("quality").deciding
    assert result.exit_code == 0 and result.regressions == []
    assert compare(base, new, deciding_axes=("resolved", "quality")).exit_code == 1


def test_an_improvement_is_reported_as_such():
    base = {(t, 0): t in PLANTED for t in TASKS}
    new = {(t, 0): t in BASE_RESOLVED for t in TASKS}
    result = compare(frame(base), frame(new))
    assert result.axis("resolved").verdict == "improvement" and result.exit_code == 0


@pytest.mark.parametrize("error", ["sandbox_error", "endpoint_error"])
def test_unpaired_attempts_and_errored_attempts_are_counted_and_left_out(error):
    base = frame({(t, s): True for t in TASKS[:10] for s in range(2)})
    new = frame({(t, s): True for t in TASKS[2:12] for s in range(2)})
    new.loc[new["task_id"] == "t05", "stop_reason"] = error
    new.loc[new["task_id"] == "t05", "resolved"] = False
    result = compare(base, new)
    assert (result.unpaired_base, result.unpaired_new, result.harness_failures) == (4, 4, 2)
    assert (result.pairs, result.tasks) == (14, 7) and not result.lost


def test_with_several_samples_a_task_fails_in_junit_when_its_mean_resolved_drops():
    tasks = ("a", "b", "c", "d")
    base = {(t, s): (t, s) != ("d", 0) for t in tasks for s in range(3)}
    new = {(t, s): (t, s) not in {("a", 0), ("c", 1), ("d", 2)} for t in tasks for s in range(3)}  # d: one each way
    result = compare(frame(base), frame(new))
    assert [(f.task_id, f.sample) for f in result.lost] == [("a", 0), ("c", 1), ("d", 2)]
    assert [(f.task_id, f.sample) for f in result.gained] == [("d", 0)]
    outcomes = {o.task_id: o for o in result.task_outcomes}
    assert outcomes["a"].samples == 3 and outcomes["a"].new_resolved == pytest.approx(2 / 3)
    assert [o.task_id for o in result.task_outcomes if o.dropped] == ["a", "c"]
    cases = [case for suite in junit_report(result) for case in suite if case.classname == "evalkit.compare.tasks"]
    assert {case.name for case in cases if not case.is_passed} == {"a", "c"} and len(cases) == 4
    assert any("4 paired tasks" in note for note in result.notes)  # a small suite is flagged


# -- models ------------------------------------------------------------------------------------------
def test_one_model_per_run_pairs_them_and_several_need_a_choice():
    outcomes = {(t, 0): True for t in TASKS[:5]}
    base = pd.concat([frame(outcomes, model="gpt"), frame(outcomes, model="claude")])
    new = pd.concat([frame(outcomes, model="gpt"), frame(outcomes, model="claude")])
    with pytest.raises(EvalkitError, match=r"several models \(claude, gpt\); choose one with --base-model"):
        compare(base, new)
    assert (compare(base, new, base_model="gpt").new_model) == "gpt"  # the same name in both
    chosen = compare(base, new, base_model="gpt", new_model="claude")
    assert (chosen.base_model, chosen.new_model) == ("gpt", "claude")
    with pytest.raises(EvalkitError, match="no model `llama`"):
        compare(base, new, base_model="llama")
    single = compare(frame(outcomes, model="v1"), frame(outcomes, model="v2"))
    assert (single.base_model, single.new_model) == ("v1", "v2")


# -- unusable input: one EvalkitError line each (exit 2 in the CLI) ----------------------------------
def test_runs_of_different_suites_are_refused(tmp_path):
    base = write_run(tmp_path, "base", {"m": BASE_RESOLVED}, suite="demo")
    new = write_run(tmp_path, "new", {"m": BASE_RESOLVED}, suite="shop")
    with pytest.raises(EvalkitError, match=r"suite `shop` is not the base run's `demo`") as raised:
        run_command(base, new, tmp_path)
    assert "\n" not in str(raised.value)
    with pytest.raises(EvalkitError, match="same suite"):
        compare(frame({("a", 0): True}), frame({("a", 0): True}), new_suite="shop")


def test_runs_whose_suites_loaded_different_tasks_are_refused_unless_a_subset_is_allowed(tmp_path):
    base = write_run(tmp_path, "base", {"m": BASE_RESOLVED}, skipped=("t39",))
    new = write_run(tmp_path, "new", {"m": PLANTED}, skipped=("t00", "t01"))
    with pytest.raises(EvalkitError) as raised:
        run_command(base, new, tmp_path)
    message = str(raised.value)
    assert "\n" not in message and "loaded different tasks of suite `demo`" in message
    assert "(missing in the new run: t00, t01; missing in the base run: t39)" in message
    assert "pass --allow-subset to compare the 37 tasks both loaded" in message

    out = tmp_path / "compare.json"
    code, text = run_command(base, new, tmp_path, json_out=out, allow_subset=True)
    note = "--allow-subset: compared on the tasks both runs loaded; left out, loaded only by the base run: t00, t01"
    assert f"{note}; only by the new run: t39" in " ".join(text.split())
    result = json.loads(out.read_text())
    assert (result["tasks"], result["pairs"], result["unpaired_base"], result["unpaired_new"]) == (37, 37, 0, 0)
    assert (result["tasks_only_base"], result["tasks_only_new"]) == (["t00", "t01"], ["t39"])
    assert code == 1  # t02..t13 still lost: a regression on the shared tasks


def test_a_missing_folder_or_results_file_is_refused(tmp_path):
    base = write_run(tmp_path, "base", {"m": BASE_RESOLVED})
    with pytest.raises(EvalkitError, match="no such run folder"):
        run_command(base, tmp_path / "nope", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalkitError, match="no run.json"):
        run_command(tmp_path / "empty", base, tmp_path)
    started = write_run(tmp_path, "started", {"m": BASE_RESOLVED})
    (started / "results.jsonl").unlink()
    with pytest.raises(EvalkitError, match="no results.jsonl"):
        run_command(base, started, tmp_path)


def test_several_models_in_a_run_folder_need_a_choice(tmp_path):
    base = write_run(tmp_path, "base", {"gpt": BASE_RESOLVED, "claude": PLANTED})
    new = write_run(tmp_path, "new", {"gpt": BASE_RESOLVED, "claude": BASE_RESOLVED})
    with pytest.raises(EvalkitError, match=r"base: several models \(claude, gpt\)"):
        run_command(base, new, tmp_path)
    code, _ = run_command(base, new, tmp_path, base_model="claude", new_model="claude")
    assert code == 0  # claude improved
    code, _ = run_command(base, new, tmp_path, base_model="gpt", new_model="claude")
    assert code == 0


def test_runs_without_a_common_pair_are_refused():
    with pytest.raises(EvalkitError, match=r"no \(task, sample\) pair in common"):
        compare(frame({("a", 0): True}), frame({("b", 0): True}))


def test_bad_levels_are_refused():
    outcomes = frame({("a", 0): True})
    with pytest.raises(EvalkitError, match="--alpha 1.5"):
        compare(outcomes, outcomes, alpha=1.5)
    with pytest.raises(EvalkitError, match="--max-drop -0.1"):
        compare(outcomes, outcomes, max_drop=-0.1)


def test_different_composite_weights_are_noted(tmp_path):
    base = write_run(tmp_path, "base", {"m": BASE_RESOLVED})
    new = write_run(tmp_path, "new", {"m": BASE_RESOLVED}, weights=Weights(correctness=1, quality=0))
    code, text = run_command(base, new, tmp_path)
    assert "composite weights differ" in text


def test_the_json_form_round_trips(tmp_path):
    from evalkit.report.compare.comparison import Comparison

    result = compare(frame({(t, 0): t in BASE_RESOLVED for t in TASKS}), frame({(t, 0): t in PLANTED for t in TASKS}))
    again = Comparison.model_validate_json(result.model_dump_json(exclude={"regressions", "regression"}))
    assert again.model_dump() == result.model_dump()


def test_an_axis_the_new_runs_agent_has_no_evidence_for_is_n_a_not_a_drop():
    outcomes = {(t, 0): t in BASE_RESOLVED for t in TASKS}
    new = frame(outcomes, efficiency=math.nan, interaction=math.nan)  # an agent with only its diff
    new["composite"] = 0.8 * new["resolved"] + 0.2 * new["quality"]  # renormalised over what applies
    result = compare(frame(outcomes), new)
    assert [axis.axis for axis in result.axes] == ["resolved", "quality", "composite"]
    assert "efficiency: n/a on one run or both (no paired values); not compared" in result.notes
    assert "interaction: n/a on one run or both (no paired values); not compared" in result.notes
    assert any(note.startswith("composite: each run's weights are renormalised") for note in result.notes)
    same = compare(new, new)
    assert not any(note.startswith("composite:") for note in same.notes)  # both weigh the same axes


def test_runs_that_differ_only_by_agent_compare_and_say_which_agent_each_ran(tmp_path):
    base = write_run(tmp_path, "loop", {"gpt-4o": BASE_RESOLVED}, run_seed=1)
    new = write_run(tmp_path, "cli", {"gpt-4o": PLANTED}, run_seed=2)
    manifest = json.loads((new / "run.json").read_text())
    manifest["options"]["agent"] = "command:my-agent   --yes\n" + "x" * 100
    (new / "run.json").write_text(json.dumps(manifest))
    out = tmp_path / "compare.json"
    code, text = run_command(base, new, tmp_path, json_out=out)
    assert code == 1 and "REGRESSION in resolved" in text
    result = json.loads(out.read_text())
    assert (result["base_model"], result["new_model"]) == ("gpt-4o", "gpt-4o")
    assert (result["base_agent"], result["new_agent"]) == ("tool-loop", manifest["options"]["agent"])
    setting = " ".join(text.split())  # the console wraps the line
    assert "base loop (gpt-4o under tool-loop) → new cli (gpt-4o under command:my-agent --yes xxx" in setting
    assert "x" * 60 not in setting  # the agent cut for the line; whole in the JSON
