"""The bundled demo suite is of the CursorBench kind: short prompts, large multi-file changes."""

import statistics

from evalkit.diffs import changed_lines, changed_paths


def is_test_file(path: str) -> bool:
    return path.startswith("tests/") or "/tests/" in path


def test_demo_suite_has_at_least_eight_tasks_over_two_repositories(demo_suite):
    assert len(demo_suite.tasks) >= 8
    assert len({t.source.snapshot for t in demo_suite.tasks}) >= 2
    assert all(t.source.snapshot.is_relative_to(demo_suite.path.resolve()) for t in demo_suite.tasks)


def test_demo_prompts_are_short_and_changes_are_large(demo_suite):
    prompts = [len(t.prompt) for t in demo_suite.tasks]
    lines = [changed_lines(t.patch) for t in demo_suite.tasks]
    assert statistics.median(prompts) <= 400
    assert statistics.median(lines) >= 100
    assert all(len(changed_paths(t.patch)) >= 2 for t in demo_suite.tasks)


def test_demo_reference_and_hidden_test_changes_are_separated(demo_suite):
    for task in demo_suite.tasks:
        assert not any(is_test_file(p) for p in changed_paths(task.patch)), task.id
        assert all(is_test_file(p) for p in changed_paths(task.test_patch)), task.id
        assert task.tests.fail_to_pass and task.tests.pass_to_pass, task.id
        assert not set(task.tests.fail_to_pass) & set(task.tests.pass_to_pass), task.id
