"""The hidden tests decide, not the candidate: each attack on the test run, as a candidate diff
scored by the real scorer in a real sandbox, is put back or caught, flagged `test_tampering`, and
resolves nothing; the honest reference resolves with no flag. (Every attack here resolved the
toy task before the defence: the runner trusted the candidate's conftest, config, start-up hooks
and the JUnit file.)"""

import py_compile
import tempfile
import textwrap
from pathlib import Path

import pytest
from cheats import FORCE_PASS_PLUGIN, PATCH_REPORTS, SITECUSTOMIZE_CHEAT
from encoded_cheats import PAYLOADS, encoded_line
from toy import BASE_FILES, POWER, diff_of

from evalkit.integrity import FlagKind, IntegrityReport, counts_as_resolved
from evalkit.verify.correctness import evaluate_patch
from evalkit.verify.source_rules import scan_source_diff

pytestmark = pytest.mark.integration

CALC = BASE_FILES["calc/__init__.py"]
WRONG_POWER = "\n\ndef power(a, b):\n    return 0\n"
REWRITE_JUNIT_AT_EXIT = textwrap.dedent(
    """

    import atexit as _atexit
    import re as _re
    import sys as _sys


    def _rewrite():
        for arg in _sys.argv:
            if arg.startswith("--junitxml="):
                path = arg.split("=", 1)[1]
                with open(path) as handle:
                    text = handle.read()
                text = _re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=_re.S)
                text = _re.sub(r"<failure[^>]*/>", "", text)
                with open(path, "w") as handle:
                    handle.write(text)


    _atexit.register(_rewrite)
    """
)
REWRITE_FROM_A_DAEMON = textwrap.dedent(
    """

    import json as _json
    import os as _os
    import re as _re
    import sys as _sys
    import time as _time


    def _daemon():
        junit = next((a.split("=", 1)[1] for a in _sys.argv if a.startswith("--junitxml=")), None)
        guard = _os.environ.get("EVALKIT_GUARD_REPORT")
        if not junit or _os.fork():
            return
        _os.setsid()
        parent = _os.getppid()
        while _os.getppid() == parent:  # until pytest has exited
            _time.sleep(0.001)
        text = open(junit).read()
        open(junit, "w").write(_re.sub(r"<failure[^>]*>.*?</failure>", "", text, flags=_re.S))
        if guard and _os.path.exists(guard):
            data = _json.load(open(guard))
            data["outcomes"] = {k: "passed" for k in data["outcomes"]}
            _json.dump(data, open(guard, "w"))
        _os._exit(0)


    if "_pytest" in _sys.modules:
        _daemon()
    """
)
FAKE_PYTEST = textwrap.dedent(
    """
    import sys

    path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
    cases = "".join(
        f'<testcase classname="tests.{m}" name="{n}" file="tests/{m}.py"/>'
        for m, n in [("test_power", "test_power"), ("test_power", "test_power_zero"),
                     ("test_calc", "test_add"), ("test_calc", "test_mul")]
    )
    open(path, "w").write(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    """
)
PYPROJECT_ADDOPTS = '[tool.pytest.ini_options]\naddopts = "-p force_pass"\n'
SETUP_CFG_ADDOPTS = "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -p force_pass\n"
INI_ADDOPTS = "[pytest]\naddopts = -p force_pass\n"


def _unchecked_pyc(source: str) -> bytes:
    """Bytecode of `source` that Python imports without comparing it with the .py beside it."""
    with tempfile.TemporaryDirectory() as folder:
        py, pyc = Path(folder, "m.py"), Path(folder, "m.pyc")
        py.write_text(source)
        py_compile.compile(str(py), str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        return pyc.read_bytes()


STARTUP_ON_PATH = "export PYTHONPATH=/workspace${PYTHONPATH:+:$PYTHONPATH}; python -m pytest"

STUB = {"calc/__init__.py": CALC + WRONG_POWER}  # collects, and fails the hidden tests
ATTACKS = {
    "conftest hook": ({**STUB, "conftest.py": FORCE_PASS_PLUGIN}, None),
    "conftest in the test folder": ({**STUB, "tests/conftest.py": FORCE_PASS_PLUGIN}, None),
    "conftest hidden from git by a .gitignore": (
        {**STUB, "conftest.py": FORCE_PASS_PLUGIN, ".gitignore": "conftest.py\n"},
        None,
    ),
    "pyproject addopts plugin": (
        {**STUB, "force_pass.py": FORCE_PASS_PLUGIN, "pyproject.toml": PYPROJECT_ADDOPTS},
        None,
    ),
    "setup.cfg addopts plugin": ({**STUB, "force_pass.py": FORCE_PASS_PLUGIN, "setup.cfg": SETUP_CFG_ADDOPTS}, None),
    "tox.ini addopts plugin": ({**STUB, "force_pass.py": FORCE_PASS_PLUGIN, "tox.ini": INI_ADDOPTS}, None),
    "pytest.ini addopts plugin": ({**STUB, "force_pass.py": FORCE_PASS_PLUGIN, "pytest.ini": INI_ADDOPTS}, None),
    "sitecustomize on PYTHONPATH": ({**STUB, "sitecustomize.py": SITECUSTOMIZE_CHEAT}, STARTUP_ON_PATH),
    "source patches pytest reports": ({"calc/__init__.py": CALC + WRONG_POWER + PATCH_REPORTS}, None),
    "source rewrites the JUnit file at exit": ({"calc/__init__.py": CALC + WRONG_POWER + REWRITE_JUNIT_AT_EXIT}, None),
    "a pytest.py that shadows pytest": ({"pytest.py": FAKE_PYTEST}, None),
    "bytecode that is not the source": (
        {**STUB, "calc/__pycache__/__init__.cpython-311.pyc": _unchecked_pyc(CALC + POWER)},
        None,
    ),
    "a daemon rewrites both reports after pytest exits": (
        {"calc/__init__.py": CALC + WRONG_POWER + REWRITE_FROM_A_DAEMON},
        None,
    ),
    # no trick on the diff's surface: an encoded payload (tests/encoded_cheats.py)
    **{
        f"encoded {name}": ({"calc/__init__.py": CALC + WRONG_POWER + encoded_line(p)}, None)
        for name, p in PAYLOADS.items()
    },
}


def _variant(task, command):
    if command is None:
        return task
    return task.model_copy(update={"tests": task.tests.model_copy(update={"command": command})})


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_attack_on_the_test_run_resolves_nothing_and_is_flagged(attack, toy_task, toy_suite_dir, backend):
    edits, command = ATTACKS[attack]
    task = _variant(toy_task, command)
    patch = diff_of(toy_suite_dir / "repos" / "calc", edits)
    result = evaluate_patch(task, patch, backend)
    assert result.patch_applied
    kinds = {flag.kind for flag in result.integrity_flags + scan_source_diff(patch)}
    assert FlagKind.TEST_TAMPERING in kinds, (result.restored, result.log[-2000:])
    report = IntegrityReport.of(result.integrity_flags + scan_source_diff(patch))
    assert report.verdict == "fail"
    assert not counts_as_resolved(result.resolved, report, "fail"), result.log[-3000:]


def test_honest_reference_resolves_with_no_flag(toy_task, backend):
    result = evaluate_patch(toy_task, toy_task.patch, backend)
    assert result.resolved, result.log[-2000:]
    assert result.integrity_flags == []
    assert result.restored == []


def test_honest_reference_with_an_own_test_file_is_put_back_but_not_flagged(toy_task, toy_suite_dir, backend):
    own_test = "from calc import power\n\n\ndef test_mine():\n    assert power(3, 2) == 9\n"
    patch = diff_of(
        toy_suite_dir / "repos" / "calc",
        {"calc/__init__.py": CALC + POWER, "tests/test_mine.py": own_test},
    )
    result = evaluate_patch(toy_task, patch, backend)
    assert result.resolved, result.log[-2000:]
    assert [r.path for r in result.restored] == ["tests/test_mine.py"]
    assert result.integrity_flags == []


def test_runner_settings_are_put_back_but_the_rest_of_the_file_is_kept(toy_task, toy_suite_dir, backend):
    """The candidate's pyproject adds a console script the code needs and an addopts plugin: the
    plugin goes, the rest stays."""
    pyproject = (
        '[project]\nname = "calc"\nversion = "1"\n\n[project.scripts]\ncalc = "calc:main"\n\n'
        '[tool.pytest.ini_options]\naddopts = "-p force_pass"\n'
    )
    patch = diff_of(
        toy_suite_dir / "repos" / "calc",
        {"calc/__init__.py": CALC + POWER, "pyproject.toml": pyproject, "force_pass.py": FORCE_PASS_PLUGIN},
    )
    result = evaluate_patch(toy_task, patch, backend)
    assert result.resolved, result.log[-2000:]  # the change itself is right; the plugin did not run
    assert [(r.path, r.part) for r in result.restored] == [("pyproject.toml", "[tool.pytest]")]
    assert [f.kind for f in result.integrity_flags] == [FlagKind.TEST_TAMPERING]


def test_a_daemon_cannot_rewrite_the_reports_after_pytest_exits(toy_task, toy_suite_dir, backend):
    """Even with the diff rules aside: every process of the sandbox user is killed as pytest ends
    (a rewrite caught half-way leaves an unreadable report, which resolves nothing either)."""
    edits, _ = ATTACKS["a daemon rewrites both reports after pytest exits"]
    for _ in range(3):
        result = evaluate_patch(toy_task, diff_of(toy_suite_dir / "repos" / "calc", edits), backend)
        assert not result.resolved, result.log[-2000:]
