"""The error an attempt records when its agent in the sandbox exits non-zero: the agent's own last
words, from stderr, else from stdout (an agent that reports its end only there)."""

from evalkit.agent.command_agent import exit_error
from evalkit.sandbox.protocol import ExecResult


def test_the_last_line_on_stderr_says_why():
    result = ExecResult(3, "configuring\n", "warning: slow\nfatal: no provider configured\n\n", 1.0)
    assert exit_error(result) == "the agent command exited with code 3: fatal: no provider configured"


def test_an_agent_quiet_on_stderr_is_heard_on_stdout():
    result = ExecResult(1, "step 3\nmini-swe-agent exit status: RepeatedFormatError\n", " \n", 1.0)
    assert exit_error(result) == "the agent command exited with code 1: mini-swe-agent exit status: RepeatedFormatError"


def test_a_silent_failure_names_its_code_and_a_success_is_no_error():
    assert exit_error(ExecResult(2, "", "", 0.1)) == "the agent command exited with code 2"
    assert exit_error(ExecResult(0, "", "fatal: but it exited 0", 0.1)) is None
    assert len(exit_error(ExecResult(1, "", "x" * 5000, 0.1))) < 400
