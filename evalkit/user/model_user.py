"""A simulated user played by any chat endpoint `--model` accepts.

It is told to be the busy developer who wrote the prompt, is given the hidden intent and the
change in outline, and must end with a line `CLASS: informative|redundant|unanswered`. Its answer
goes through `redact` whatever the prompt said (a model cannot be trusted not to quote code); a
class it does not give readably is decided by the overlap rule; an endpoint that fails leaves the
question unanswered with the error recorded, never the attempt failed."""

from __future__ import annotations

import re
import time

from evalkit.models.client import ChatClient, EndpointError
from evalkit.models.messages import Usage, text_of
from evalkit.user.answer import QuestionClass, UserAnswer
from evalkit.user.context import UserContext
from evalkit.user.leaks import redact
from evalkit.user.overlap import answer_class

NO_ANSWER = "No answer: the user did not reply. Decide from the code and the request."
ANSWER_TIMEOUT_S = 120.0  # one question, retries included
_CLASS_LINE = re.compile(r"^[\s*_`]*CLASS[\s*_`]*:(.*)$", re.I | re.M)

SYSTEM_PROMPT = """You are the developer who wrote the request below for a coding agent. You are busy.
The agent may ask you a question about what you want. Answer it like that developer would: briefly
(one to three sentences), in plain words, WITHOUT code, file contents, or names of functions, classes
or variables that the request does not already use. Say "I don't know." when what you want (below)
does not say.

The request the agent got:
{prompt}

What you actually want (the agent does not see this):
{intent}
{interface}
Your change, in outline (for you only; never name these to the agent):
{summary}

After your answer, write one last line classifying the question:
CLASS: informative   (your answer told the agent something the request did not say)
CLASS: redundant     (the request already said it)
CLASS: unanswered    (you don't know)"""


def system_prompt(context: UserContext) -> str:
    interface = f"\nThe interface the agent was given:\n{context.interface}\n" if context.interface else ""
    return SYSTEM_PROMPT.format(
        prompt=context.prompt, intent=context.intent, interface=interface, summary=context.change_summary
    )


def parse_reply(reply: str) -> tuple[str, QuestionClass | None]:
    """(the answer without its class line, the class it names or None when none is readable)."""
    found = None
    for match in _CLASS_LINE.finditer(reply):
        found = match
    if found is None:
        return reply.strip(), None
    answer = (reply[: found.start()] + reply[found.end() :]).strip()
    try:
        return answer, QuestionClass(found.group(1).strip(" *_`.").lower())
    except ValueError:
        return answer, None


class ModelUser:
    """Answers through `client` (one chat completion per question, no tools)."""

    def __init__(self, client: ChatClient, timeout_s: float = ANSWER_TIMEOUT_S) -> None:
        self.client = client
        self.name = client.spec.name
        self.timeout_s = timeout_s

    def close(self) -> None:
        """Close the client's connections (the run that made this user ends)."""
        self.client.close()

    def answer(self, question: str, context: UserContext, deadline: float | None = None) -> UserAnswer:
        """The model's reply, redacted and classed (its own class line, else the overlap rule);
        asked for at most `timeout_s`, and never past the attempt's `deadline`."""
        messages = [
            {"role": "system", "content": system_prompt(context)},
            {"role": "user", "content": question},
        ]
        started = time.perf_counter()
        try:
            own = time.monotonic() + self.timeout_s
            reply = self.client.complete(messages, [], own if deadline is None else min(own, deadline))
        except EndpointError as exc:
            return UserAnswer(NO_ANSWER, QuestionClass.UNANSWERED, 0, Usage(), time.perf_counter() - started, str(exc))
        text, question_class = parse_reply(text_of(reply.message.get("content")))
        text = without_code(text)
        if question_class is None:
            question_class = answer_class(text, context)
        clean, redacted = redact(text, context.leak_sources)
        return UserAnswer(clean, question_class, redacted, reply.usage, reply.latency_s)


CODE_LEFT_OUT = "[code left out]"
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)  # a fenced block, or one the model never closed


def without_code(text: str) -> str:
    """The answer with its fenced code blocks left out: the user answers in words (a small model
    told so still writes code, invented or not; the reference's own lines are redacted besides)."""
    return _FENCED.sub(CODE_LEFT_OUT, text).strip()
