"""`--agent qwen-code`: Qwen Code (npm `@qwen-code/qwen-code`, the version its recipe pins), the
npm-distributed CLI coding agent evalkit installs (sandboxes/agents/qwen-code/; docs/agents.md, "Qwen
Code", says why this one).

What it does against an OpenAI-compatible endpoint, as seen through the proxy (0.24.4):
- Runs headless (`qwen --approval-mode yolo --output-format stream-json PROMPT`, no approval
  prompt, no sandbox of its own) with `--auth-type openai`, its base URL and key from the flags.
- Always streams (`stream: true`, `stream_options.include_usage`, `max_tokens` 32000) and takes the
  proxy's whole-call tool deltas. Its system prompt is its own ("You are Qwen Code, a
  non-interactive CLI agent..."); the first user message is several text parts (skills, the
  folder tree, deferred tools, the date) with the task prompt last.
- Offers ~14 tools: `run_shell_command(command, ...)`, `edit(file_path, old_string, new_string)`,
  `write_file(file_path, content)`, `read_file`, `glob`, `grep_search`, `agent`, `skill`,
  `tool_search`/`tool_call` and others. The built-in policies use its shell: its edit tools take
  `file_path`, not evalkit's `path`, so the dialect leaves them out (models/dialect.py). It sends
  each call back re-serialized (compact JSON) with `content: null`, tool results as text parts.
- Ends when a reply has no tool call (exit 0, a final `result` event on stdout): the oracle's
  last turn and null's only one are plain messages.
- A 400 (the proxy's answer once a budget is spent) ends it at once, exit code 1. A 5xx it retries
  in its own loop (7 tries of the SDK's 4, backoff up to 30 s), whatever `x-should-retry` says: the
  proxy answers the request that met an endpoint failure with a 502 and the retry with a 400, which
  ends it (before that 400 it went on until the wall time; test_installed_agent_faults).
- Writes its state under `QWEN_HOME` (/tmp/evalkit-agent/qwen: never the workspace), and its
  events as JSON lines on stdout, which is the agent's log kept beside the trajectory.
- Offline: the recipe's settings.json (system settings, read-only) turns off telemetry, usage
  statistics, the update check, follow-up suggestions and the background memory agents (by
  default one more model call after the answer, with the whole conversation); nothing else
  reaches for the network. Start-up is 5-10 s of node on this machine; its shell tool parses each
  command (tree-sitter) before running it, seconds for the oracle's 10 kB patch.
"""

from __future__ import annotations

from evalkit.agent.installed import AGENT_TMP, InstalledAgent
from evalkit.sandbox.recipes import AGENT_ROOT

# the wrapper runs `qwen` headless on $EVALKIT_PROMPT with QWEN_HOME under EVALKIT_AGENT_HOME
QWEN_CODE = InstalledAgent("qwen-code", f"{AGENT_ROOT}/qwen-code/evalkit-agent", env={"EVALKIT_AGENT_HOME": AGENT_TMP})
