"""Model endpoints: the built-in OpenAI-compatible server and its reference policies."""

from evalkit.models.policies import AssistantTurn, NullPolicy, OraclePolicy, Policy, ToolCall
from evalkit.models.server import ModelServer

__all__ = ["AssistantTurn", "ModelServer", "NullPolicy", "OraclePolicy", "Policy", "ToolCall"]
