"""The guard's check that pytest's outcome functions are still pytest's own."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import _pytest.outcomes

import evalkit.verify

GUARD = Path(evalkit.verify.__file__).parent / "guard_plugin.py"


def _guard():
    spec = importlib.util.spec_from_file_location("guard_under_test", GUARD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _ForgedFail:
    def __call__(self, reason="", pytrace=True):
        return None


def test_pytest_outcome_functions_are_traced_to_pytest_even_as_callable_instances():
    guard = _guard()
    assert guard._code_file(_pytest.outcomes.fail) == _pytest.outcomes.__file__  # a `_Fail()` in pytest 9
    assert guard._code_file(_ForgedFail()) == __file__
    assert guard._code_file(len) is None  # a builtin is no function of pytest's


def test_an_untouched_pytest_raises_no_tampering():
    guard = _guard()
    guard._check_critical("start")
    assert guard._state["tampered"] == []


def test_the_guard_kills_strays_only_inside_a_sandbox_and_never_as_root(monkeypatch):
    monkeypatch.delenv("EVALKIT_SANDBOX", raising=False)
    assert not _guard().KILL_STRAYS  # a host: no sandbox mark
    monkeypatch.setenv("EVALKIT_SANDBOX", "1")
    assert _guard().KILL_STRAYS is (os.getuid() != 0)
