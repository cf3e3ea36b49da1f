"""`oracle-user`: a deterministic simulated user for tests and demos. It answers with the intent
sentences a question is most about, preferring what the prompt does not already say, and "I don't
know." when no sentence shares a word with the question. No model, no tokens."""

from __future__ import annotations

from evalkit.user.answer import UserAnswer
from evalkit.user.context import UserContext
from evalkit.user.leaks import redact
from evalkit.user.overlap import DONT_KNOW, answer_class, given_words, in_prompt, relevant_sentences


class OracleUser:
    name = "oracle-user"

    def answer(self, question: str, context: UserContext, deadline: float | None = None) -> UserAnswer:
        """The relevant intent sentences the prompt lacks, else those it has (redundant), else
        "I don't know."; classed by the overlap rule before redaction."""
        relevant = relevant_sentences(question, context)
        given = given_words(context)
        new = [s for s in relevant if not in_prompt(s, given)]
        text = " ".join(new or relevant) or DONT_KNOW
        question_class = answer_class(text, context)
        clean, redacted = redact(text, context.leak_sources)
        return UserAnswer(clean, question_class, redacted)
