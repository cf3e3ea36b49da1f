"""Tool calls written into a reply's text (tool_call_format = "text"), as small open models do."""

import json

from evalkit.agent.text_calls import parse_text_tool_calls
from evalkit.agent.tools import TOOL_NAMES


def _calls(text):
    calls = parse_text_tool_calls(text, TOOL_NAMES, 3)
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def test_hermes_tagged_calls_are_parsed_in_order():
    text = (
        "Let me look first.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n"
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>'
    )
    assert _calls(text) == [("bash", {"command": "ls"}), ("read_file", {"path": "a.py"})]


def test_an_unclosed_tag_at_the_end_of_a_reply_still_counts():
    text = '<tool_call>{"name": "submit", "arguments": {"summary": "done"}}'
    assert _calls(text) == [("submit", {"summary": "done"})]


def test_a_fenced_json_block_or_a_bare_object_naming_a_tool():
    assert _calls('I will run:\n```json\n{"name": "bash", "arguments": {"command": "pwd"}}\n```') == [
        ("bash", {"command": "pwd"})
    ]
    assert _calls('{"name": "search", "parameters": {"pattern": "def main"}}') == [("search", {"pattern": "def main"})]


def test_openai_shaped_objects_and_string_arguments():
    inner = json.dumps({"type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}})
    text = f"<tool_call>{inner}</tool_call>"
    (call,) = parse_text_tool_calls(text, TOOL_NAMES, 2)
    assert call["id"] == "text_2_0" and call["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}


def test_prose_json_and_unknown_tools_are_not_calls():
    assert _calls("The config is {\"debug\": true}.") == []
    assert _calls('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>') == []
    assert _calls("<tool_call>{not json}</tool_call>") == []
    assert _calls(None) == [] and _calls("") == []
