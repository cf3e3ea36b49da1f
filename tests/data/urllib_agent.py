"""A minimal coding agent for `--agent command:...` tests: the standard library only (the sandbox
image has no openai SDK). It asks the model at $OPENAI_BASE_URL (key $OPENAI_API_KEY) to work on
$EVALKIT_PROMPT with one tool, `bash`, runs each call in the workspace and sends the output back,
until a reply calls no tool (exit 0) or the model answers with an error (exit 1)."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

BASH = {"type": "function", "function": {"name": "bash", "description": "Run a shell command.", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}


def ask(messages):
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps({"model": "any", "messages": messages, "tools": [BASH]}).encode(),
        headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["choices"][0]["message"]


messages = [{"role": "user", "content": os.environ["EVALKIT_PROMPT"]}]
for turn in range(50):
    try:
        reply = ask(messages)
    except urllib.error.HTTPError as exc:
        print(f"model error {exc.code}: {exc.read().decode()[:300]}", file=sys.stderr)
        sys.exit(1)
    messages.append(reply)
    calls = reply.get("tool_calls") or []
    print(f"turn {turn + 1}: {len(calls)} tool call(s)")
    if not calls:
        print(reply.get("content") or "")
        sys.exit(0)
    for call in calls:
        command = json.loads(call["function"]["arguments"])["command"]
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": done.stdout + done.stderr})
