"""The agent: tool schemas now; the tool-calling loop on the openai SDK comes with `evalkit run`."""

from evalkit.agent.tools import TOOL_NAMES, TOOL_SCHEMAS

__all__ = ["TOOL_NAMES", "TOOL_SCHEMAS"]
