"""What the simulated user knows about a task: the prompt the agent got, the fuller intent behind
it, the interface, and the reference change in outline. Never the reference code or the hidden
tests: the user is the developer who asked, not an answer key."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.tasks.model import Task
from evalkit.user.leaks import LeakSources, leak_sources
from evalkit.user.summary import change_summary


@dataclass(frozen=True)
class UserContext:
    prompt: str  # the task prompt the agent got
    intent: str  # metadata["intent"], else metadata["original_message"], else the prompt
    interface: str  # metadata["interface"] (gathered tasks), else ""
    change_summary: str  # files changed and new public names, no code lines
    leak_sources: LeakSources  # what an answer must not reveal


def user_context(task: Task) -> UserContext:
    """The simulated user's knowledge of `task`; deterministic."""
    metadata = task.metadata
    intent = metadata.get("intent") or metadata.get("original_message") or task.prompt
    return UserContext(
        prompt=task.prompt,
        intent=intent.strip(),
        interface=metadata.get("interface", ""),
        change_summary=change_summary(task.patch),
        leak_sources=leak_sources(task),
    )
