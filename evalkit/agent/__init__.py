"""Agents: what works on a task in a sandbox. protocol.py is the seam (Agent, AgentOutcome) and
agent_table.py finds an agent by its `--agent` name; evalkit's own is `tool-loop` (tool_loop.py,
driving loop.py with the tools of tools.py); any other runs in the sandbox as a shell command
calling its model through the run's proxy (command_agent.py: `command:TEMPLATE`), the installed
ones by name (installed.py, qwen_code.py).

Nothing is imported here, so `evalkit.agent.agent_table` stays light: the command line names the
agents in its help and checks `--agent NAME` without loading an agent.
"""
