"""The bridge to agents evalkit did not write: a recording model proxy they call instead of the
model, one `AttemptChannel` (budgets, counters, trajectory) per attempt behind its own key."""

from evalkit.bridge.channel import AttemptChannel
from evalkit.bridge.proxy import ModelProxy
from evalkit.bridge.run_proxy import RunProxy

__all__ = ["AttemptChannel", "ModelProxy", "RunProxy"]
