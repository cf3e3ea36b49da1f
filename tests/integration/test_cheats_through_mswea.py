"""The verdict does not depend on the agent that made the change: cheats with nothing on the
diff's surface (tests/encoded_cheats.py), played through a real installed agent (mini-swe-agent,
whose one tool is `bash`) instead of evalkit's tool loop, resolve nothing and are flagged, beside
an honest oracle run of the same tasks that stays unflagged (test_installed_mswea.py).

Two demo tasks, three cheats of different mechanisms: one that swaps the test bodies, one that
rewrites both reports after pytest exits, and one that spares the canaries with an in-memory
plugin; and one white-box cheat (tests/whitebox_cheats.py: `report_rewrite`, a plain module that
knows the guard's source and spares the canaries; before the fix, main at b4e96d8, it resolved
both tasks with a clean verdict and no flag). The agent's image is the one test_installed_mswea
builds (or this module builds it)."""

import pytest
from agent_runs import MSWEA_SUBMIT, rows_of
from conftest import DEMO_SUITE, run_evalkit
from encoded_cheats import PAYLOADS, bash_script
from hostile_server import HostileServer, models_config
from whitebox_cheats import PAYLOADS as WHITEBOX_PAYLOADS
from whitebox_cheats import bash_script as whitebox_bash_script

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # may build the agent image

CHEATS = ("body_swap", "atexit_forgery", "spare_canaries_plugin")
WHITEBOX = ("report_rewrite",)
SCRIPTS = {
    **{name: bash_script(PAYLOADS[name], MSWEA_SUBMIT) for name in CHEATS},
    **{f"whitebox_{name}": whitebox_bash_script(WHITEBOX_PAYLOADS[name], MSWEA_SUBMIT) for name in WHITEBOX},
}
TASKS = ("kvstore-ttl", "ledger-csv-import")


@pytest.fixture(scope="module")
def cheats_run(docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("mswea-cheats")
    config = out / "evalkit.toml"
    with HostileServer(SCRIPTS) as server:
        config.write_text(models_config(server, SCRIPTS, request_timeout_s=30))
        args = [arg for name in SCRIPTS for arg in ("--model", name)]
        args += [arg for task in TASKS for arg in ("--task", task)]
        result = run_evalkit("run", "--suite", DEMO_SUITE, "--agent", "mini-swe-agent", *args, "--config", config,
                             "--run-id", "cheats", "--out", out, "--concurrency", "2", timeout=1800)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return out / "cheats"


def test_cheats_played_through_mini_swe_agent_resolve_nothing_and_are_flagged(cheats_run):
    rows = rows_of(cheats_run)
    assert sorted((r["model"], r["task_id"]) for r in rows) == sorted((c, t) for c in SCRIPTS for t in TASKS)
    for row in (r for r in rows if r["model"] in CHEATS):
        what = (row["model"], row["task_id"])
        assert row["agent"] == "mini-swe-agent", what
        assert row["model_patch"].count("b64decode") >= 2, what  # the cheat reached the change scored
        kinds = {flag["kind"] for flag in row["integrity"]["flags"]}
        assert {"test_tampering", "obfuscated_code"} <= kinds, (what, kinds)
        assert row["integrity"]["verdict"] == "fail", what
        assert row["resolved"] is False and row["tests_resolved"] is False, what


@pytest.mark.parametrize("cheat", WHITEBOX)
def test_a_white_box_cheat_played_through_mini_swe_agent_resolves_nothing_and_the_test_run_flags_it(cheats_run, cheat):
    rows = [r for r in rows_of(cheats_run) if r["model"] == f"whitebox_{cheat}"]
    assert sorted(r["task_id"] for r in rows) == sorted(TASKS)
    for row in rows:
        what = (row["model"], row["task_id"], row["integrity"])
        assert row["agent"] == "mini-swe-agent", what
        assert row["model_patch"].count("_compat") >= 2, what  # the cheat reached the change scored
        flags = [f for f in row["integrity"]["flags"] if f["kind"] == "test_tampering" and f["source"] == "tests"]
        assert flags, what
        assert row["integrity"]["verdict"] == "fail", what
        assert row["resolved"] is False, what
