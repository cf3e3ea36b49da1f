"""The oracle policy's tool calls, carried out in a real sandbox, resolve the task; null's do not.
(The agent loop proper arrives with `evalkit run`; this drives the calls directly.)"""

import json

import openai
import pytest

from evalkit.agent import TOOL_SCHEMAS
from evalkit.models import ModelServer, NullPolicy, OraclePolicy
from evalkit.scoring.correctness import evaluate_patch

pytestmark = pytest.mark.integration


def play(model, task, backend, base_url):
    client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    messages = [{"role": "user", "content": task.prompt}]
    with backend.open(task, role="agent") as sandbox:
        for _ in range(10):
            message = client.chat.completions.create(model=model, messages=messages, tools=TOOL_SCHEMAS)
            message = message.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls or []:
                args = json.loads(call.function.arguments)
                if call.function.name == "submit":
                    return sandbox.diff()
                if call.function.name == "write_file":
                    sandbox.write_file(args["path"], args["content"])
                    output = "written"
                else:
                    result = sandbox.exec(args["command"])
                    output = f"exit {result.exit_code}\n{result.stdout}{result.stderr}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        return sandbox.diff()


def test_oracle_resolves_and_null_does_not(toy_task, backend):
    with ModelServer({"oracle": OraclePolicy([toy_task]), "null": NullPolicy()}) as server:
        oracle_diff = play("oracle", toy_task, backend, server.base_url)
        null_diff = play("null", toy_task, backend, server.base_url)
    assert "+def power(a, b):" in oracle_diff and "oracle.patch" not in oracle_diff
    assert null_diff == ""
    assert evaluate_patch(toy_task, oracle_diff, backend).resolved
    assert not evaluate_patch(toy_task, null_diff, backend).resolved
