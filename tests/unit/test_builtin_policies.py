"""A built-in model's name → its policy: the one table `evalkit serve` and a run's built-in models
share, and its one-line errors when an input is missing or the name is unknown."""

import pytest

from evalkit.errors import EvalkitError
from evalkit.models.builtin import builtin_policy
from evalkit.models.policies import NullPolicy, OraclePolicy, ReplayPolicy


def test_each_name_gets_its_policy(demo_suite, tmp_path):
    trajectory = tmp_path / "t.jsonl"
    trajectory.write_text('{"type": "message", "message": {"role": "assistant", "content": "done"}}\n')
    assert isinstance(builtin_policy("oracle", demo_suite.tasks), OraclePolicy)
    assert isinstance(builtin_policy("null"), NullPolicy)
    assert isinstance(builtin_policy("replay", replay_path=trajectory), ReplayPolicy)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("oracle", "--policy oracle needs --suite: the oracle plays the reference changes of a suite"),
        ("replay", "--policy replay needs --trajectory FILE (a trajectory .jsonl or a folder of them)"),
        ("gpt", "--policy gpt: choose oracle, null or replay"),
    ],
)
def test_a_missing_input_or_unknown_name_is_one_line(name, message):
    with pytest.raises(EvalkitError) as caught:
        builtin_policy(name)
    assert str(caught.value) == message
