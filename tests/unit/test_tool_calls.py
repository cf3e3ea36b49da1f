"""Tool calls the model gets wrong are answered with an error message and a counted fault before
anything reaches the sandbox; the schemas the model sees are the ones the arguments are checked
against."""

import json

import pytest

from evalkit.agent.tools import TOOL_ARGS, TOOL_SCHEMAS, ToolBox
from evalkit.records import ToolFault


class UntouchableSandbox:
    workdir = "/workspace"

    def __getattr__(self, name):
        raise AssertionError(f"a rejected call reached the sandbox ({name})")


@pytest.fixture
def toolbox():
    return ToolBox(UntouchableSandbox(), command_timeout_s=5, output_limit=1000)


@pytest.mark.parametrize(
    ("name", "arguments", "fault", "says"),
    [
        ("bash", "{'command': 'ls'}", ToolFault.MALFORMED_JSON, "not valid JSON"),
        ("bash", '["ls"]', ToolFault.MALFORMED_JSON, "must be a JSON object"),
        ("rm_rf", "{}", ToolFault.UNKNOWN_TOOL, "unknown tool `rm_rf`"),
        ("bash", "{}", ToolFault.BAD_ARGUMENTS, "command: Field required"),
        ("bash", '{"command": 5}', ToolFault.BAD_ARGUMENTS, "command: Input should be a valid string"),
        ("edit", '{"path": "a", "old_string": "x"}', ToolFault.BAD_ARGUMENTS, "new_string: Field required"),
        ("read_file", '{"path": "a", "mode": "r"}', ToolFault.BAD_ARGUMENTS, "mode: Extra inputs"),
        ("bash", '{"command": "ls", "timeout": -1}', ToolFault.BAD_ARGUMENTS, "timeout"),
    ],
)
def test_bad_calls_become_error_messages_and_faults(toolbox, name, arguments, fault, says):
    outcome = toolbox.run(name, arguments)
    assert outcome.fault is fault
    assert outcome.content.startswith("Error:") and says in outcome.content


def test_submit_needs_no_sandbox_and_carries_the_summary(toolbox):
    outcome = toolbox.run("submit", json.dumps({"summary": "Added power() to calc/__init__.py"}))
    assert outcome.fault is None and outcome.submitted == "Added power() to calc/__init__.py"


def test_schemas_match_the_argument_models():
    assert [s["function"]["name"] for s in TOOL_SCHEMAS] == list(TOOL_ARGS)
    for schema in TOOL_SCHEMAS:
        parameters = schema["function"]["parameters"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert schema["function"]["description"]
        model = TOOL_ARGS[schema["function"]["name"]]
        required = [n for n, f in model.model_fields.items() if f.is_required()]
        assert parameters.get("required", []) == required
        assert "anyOf" not in json.dumps(parameters)  # plain types only: small local models cope better
