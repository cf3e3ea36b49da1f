"""Results are shared files: everything evalkit writes gets the permissions the umask gives, as
any other program's files would (not tempfile's 0600)."""

import os
import stat

import pytest
from toy import one_attempt_run

from evalkit.files import write_atomic
from evalkit.report.leaderboard.output import write_leaderboard
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import score_run


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def modes(folder):
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*") if p.is_file()}


def test_write_atomic_honours_the_umask(tmp_path):
    for umask, expected in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        old = os.umask(umask)
        try:
            write_atomic(tmp_path / f"{umask:o}.json", "{}\n")
        finally:
            os.umask(old)
        assert stat.S_IMODE((tmp_path / f"{umask:o}.json").stat().st_mode) == expected
    assert {p.name for p in tmp_path.iterdir()} == {"22.json", "77.json", "2.json"}  # no temporary left


def test_run_folder_scores_report_and_suite_files_follow_the_umask(umask_027, toy_task, tmp_path):
    store = one_attempt_run(toy_task, tmp_path / "suite", tmp_path / "runs" / "r1")
    score_run(store, {toy_task.id: toy_task}, ScoringSettings())
    write_leaderboard([store.dir], tmp_path / "leaderboard")
    written = {**modes(tmp_path / "runs"), **modes(tmp_path / "suite"), **modes(tmp_path / "leaderboard")}
    for name in ("r1/run.json", "r1/results.jsonl", "r1/scores.jsonl", "r1/summary.json", "suite.toml",
                 f"{toy_task.id}/task.toml", "index.html", "leaderboard.json", "attempts/0.js"):  # fmt: skip
        assert name in written
    assert set(written.values()) == {0o640}, written
