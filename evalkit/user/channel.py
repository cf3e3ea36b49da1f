"""One attempt's line to its simulated user: the agent's questions (the tool loop's `ask_user` tool,
or the `ask-user` command of an agent in a sandbox, through the model proxy) passed to the run's user
simulator, within the task's question budget, and what they cost kept apart from the agent's own usage.

The simulator runs on the host, never in the agent's container, and its answer (redacted by the
simulator) goes back to the agent as the tool's result or the command's output. Past
`max_questions` the agent is told to decide alone, and the question is counted `over_budget`, not asked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evalkit.models.client import Usage
from evalkit.user.answer import QuestionClass, UserAnswer
from evalkit.user.context import UserContext
from evalkit.user.protocol import UserSimulator

OVER_BUDGET = "over_budget"  # a question past the budget: not asked, counted beside the simulator's classes
NO_MORE_QUESTIONS = "No more questions: decide from the code and the request."
NO_ANSWER = "No answer: the user could not be reached; decide from the code and the request."


@dataclass
class UserChannel:
    """Asks `simulator` (who knows `context`) at most `max_questions` questions and tallies them."""

    simulator: UserSimulator
    context: UserContext
    max_questions: int
    questions: int = 0  # every question the agent asked, over budget included (the classes sum to it)
    classes: Counter[str] = field(default_factory=Counter)  # informative/redundant/unanswered/over_budget
    leaks: int = 0  # identifiers and lines of the reference change taken out of answers
    usage: Usage = field(default_factory=lambda: Usage(reported=True))  # the simulator's, never the agent's
    time_s: float = 0.0

    @property
    def name(self) -> str:
        return self.simulator.name

    def ask(self, question: str, deadline: float | None = None) -> tuple[str, dict]:
        """What the agent is told, and the fields of the trajectory's `user` event; the simulator
        answers by `deadline` (the attempt's end) at the latest."""
        self.questions += 1
        if self.questions > self.max_questions:
            self.classes[OVER_BUDGET] += 1
            return NO_MORE_QUESTIONS, {"question": question, "answer": NO_MORE_QUESTIONS, "class": OVER_BUDGET}
        try:
            answer = self.simulator.answer(question, self.context, deadline)
        except Exception as exc:  # noqa: BLE001 - a simulator's failure is the attempt's record, never a crash
            answer = UserAnswer("", QuestionClass.UNANSWERED, 0, Usage(), error=f"{type(exc).__name__}: {exc}")
        text = answer.text if answer.text.strip() and answer.error is None else NO_ANSWER
        self.classes[answer.question_class.value] += 1
        self.leaks += answer.redacted
        self.usage += answer.usage
        self.time_s += answer.latency_s
        return text, {
            "question": question,
            "answer": text,
            "class": answer.question_class.value,
            "redacted": answer.redacted,
            "usage": answer.usage.as_dict(),
            "latency_s": round(answer.latency_s, 4),
            "error": answer.error,
        }
