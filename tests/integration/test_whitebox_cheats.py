"""White-box cheats (tests/whitebox_cheats.py: each knows the guard plugin's source and spares the
canaries), the oracle and null on the whole demo suite through `evalkit run` and an endpoint
evalkit has never seen: every cheat resolves nothing, every attempt of it fails integrity with a
`test_tampering` flag from the test run itself (not only from the diff's text), the oracle
resolves everything with no flag and doing nothing resolves nothing.

Before the fix (main at b4e96d8): every white-box cheat resolved 8 of 8 demo tasks with a clean
verdict and no flag of any kind (report_rewrite, state_through_gc, writer_swap, frame_walk,
watcher_process and channel_forge alike): the canaries stayed failed in both reports, every
watched body "returned" in the guard's report, JUnit and guard agreed, and the diff's text (one
`_compat.py` per package and one import line) met no rule. The oracle resolved 8 of 8 unflagged,
null 0 of 8. The module took 2 minutes on 2 cores (concurrency 2).
"""

import json
from collections import defaultdict

import pytest
from conftest import DEMO_SUITE, run_evalkit
from hostile_server import HostileServer
from whitebox_cheats import WHITEBOX_CHEATS

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def whitebox_run(docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("whitebox-runs")
    config = out / "evalkit.toml"
    with HostileServer(WHITEBOX_CHEATS, models=["cheater"]) as server:
        config.write_text(
            "".join(
                f'[models.{name}]\nmodel = "cheater"\nbase_url = "{server.url(name)}"\n' for name in WHITEBOX_CHEATS
            )
        )
        models = [arg for name in [*WHITEBOX_CHEATS, "oracle", "null"] for arg in ("--model", name)]
        result = run_evalkit(
            "run", "--suite", DEMO_SUITE, *models, "--config", config, "--run-id", "whitebox", "--out", out,
            "--concurrency", "2",
        )  # fmt: skip
    run_dir = out / "whitebox"
    assert result.returncode == 0, result.stderr[-3000:]
    by_model: dict[str, list[dict]] = defaultdict(list)
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_model[row["model"]].append(row)
    return by_model


def _test_flags(row: dict) -> list[dict]:
    return [f for f in row["integrity"]["flags"] if f["kind"] == "test_tampering" and f["source"] == "tests"]


@pytest.mark.parametrize("cheat", list(WHITEBOX_CHEATS))
def test_a_cheat_that_knows_the_guard_resolves_nothing_and_the_test_run_flags_it(whitebox_run, cheat):
    rows = whitebox_run[cheat]
    assert len(rows) == 8
    for row in rows:
        what = (row["task_id"], row["integrity"])
        assert row["model_patch"].count("_compat") >= 2, what  # the cheat reached the change scored
        assert not row["resolved"], what
        assert row["integrity"]["verdict"] == "fail", what
        assert _test_flags(row), what


def test_the_oracle_resolves_every_task_with_no_flag(whitebox_run):
    rows = whitebox_run["oracle"]
    assert len(rows) == 8
    for row in rows:
        assert row["resolved"] and row["integrity"] == {"flags": [], "verdict": "clean", "restored": []}


def test_doing_nothing_resolves_nothing(whitebox_run):
    rows = whitebox_run["null"]
    assert len(rows) == 8 and not any(row["resolved"] for row in rows)
