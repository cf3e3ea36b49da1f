"""`--user-model NAME` → a simulated user: the built-in ones by name, any other name a model
endpoint resolved the way `--model` resolves it."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.errors import EvalkitError
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.user.model_user import ModelUser
from evalkit.user.oracle_user import OracleUser
from evalkit.user.protocol import UserSimulator

BUILTIN_USERS: dict[str, Callable[[], UserSimulator]] = {"oracle-user": OracleUser}


def make_user(name: str, resolve_model: Callable[[str], ModelSpec]) -> UserSimulator:
    """The simulator called `name`; a built-in agent policy (oracle, null, replay) cannot be one."""
    if name in BUILTIN_USERS:
        return BUILTIN_USERS[name]()
    spec = resolve_model(name)
    if spec.builtin:
        builtin = ", ".join(BUILTIN_USERS)
        raise EvalkitError(
            f"--user-model {name}: a built-in agent policy cannot answer questions; use {builtin} or a model endpoint"
        )
    return ModelUser(ChatClient(spec))
