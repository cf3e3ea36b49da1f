"""A simulated user the agent can ask (`ask_user`): what it knows of a task (context), who answers
(oracle-user, or a model), how each answer is classed and cleaned of the reference change, and one
attempt's channel to it (its question budget and tally)."""

from evalkit.user.answer import QuestionClass, UserAnswer
from evalkit.user.channel import UserChannel
from evalkit.user.context import UserContext, user_context
from evalkit.user.leaks import LeakSources, leak_sources, redact
from evalkit.user.model_user import ModelUser
from evalkit.user.oracle_user import OracleUser
from evalkit.user.protocol import UserSimulator
from evalkit.user.user_table import BUILTIN_USERS, make_user

__all__ = [
    "BUILTIN_USERS",
    "LeakSources",
    "ModelUser",
    "OracleUser",
    "QuestionClass",
    "UserAnswer",
    "UserChannel",
    "UserContext",
    "UserSimulator",
    "leak_sources",
    "make_user",
    "redact",
    "user_context",
]
