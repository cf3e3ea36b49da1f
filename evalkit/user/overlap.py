"""The overlap rule: which intent sentences a question is about, and what class an answer has,
by the content words they share. Deterministic, so the built-in user and the fallback for a
model user's unreadable class agree with each other and with themselves across runs.

An answer is *redundant* when the prompt already gives most of its words (PROMPT_COVERAGE),
*informative* when it adds words of the hidden intent the prompt lacks, and *unanswered* when it
says nothing (or "I don't know")."""

from __future__ import annotations

import re

from evalkit.user.answer import QuestionClass
from evalkit.user.context import UserContext

DONT_KNOW = "I don't know."
PROMPT_COVERAGE = 0.75  # share of an answer's words the prompt gives for the answer to add nothing
MAX_SENTENCES = 2  # a busy developer answers in a sentence or two
_WORD = re.compile(r"[a-z][a-z0-9_]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DONT_KNOW = re.compile(r"\b(?:i\s+)?(?:don'?t|do\s+not)\s+know\b", re.I)
_STOPWORD_TEXT = (
    "a an and are as at be been but by can could did do does doing for from had has have how i if in into "
    "is it its it's just may me might must my no not of on or our should so some than that the their them "
    "then there these they this those to too us was we were what when where which while who why will with "
    "would yes you your about any also all each other such only like want need use used using"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def content_words(text: str) -> set[str]:
    """Lower-case words that carry meaning, a plural's `s` dropped ("Keys" and "key" are one word)."""
    words = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS or len(word) < 3:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return words


def sentences(text: str) -> list[str]:
    """The sentences of a text (split after . ! or ?): the unit oracle-user answers in."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def given_words(context: UserContext) -> set[str]:
    """What the agent was told: the prompt and the interface."""
    return content_words(f"{context.prompt}\n{context.interface}")


def in_prompt(text: str, given: set[str]) -> bool:
    """Whether the agent was already told `text`: most of its content words are in `given`."""
    words = content_words(text)
    return bool(words) and len(words & given) >= PROMPT_COVERAGE * len(words)


def relevant_sentences(question: str, context: UserContext) -> list[str]:
    """The intent sentences sharing the most content words with the question (none when none share)."""
    asked = content_words(question)
    scored = [(len(content_words(s) & asked), s) for s in sentences(context.intent)]
    best = max((score for score, _ in scored), default=0)
    return [s for score, s in scored if best and score == best][:MAX_SENTENCES]


def answer_class(answer: str, context: UserContext) -> QuestionClass:
    """The class of an answer by overlap: nothing said → unanswered; mostly the prompt's words →
    redundant; words of the intent the prompt lacks → informative; else unanswered."""
    words = content_words(answer)
    if not words or _DONT_KNOW.search(answer):
        return QuestionClass.UNANSWERED
    given = given_words(context)
    if in_prompt(answer, given):
        return QuestionClass.REDUNDANT
    hidden = content_words(f"{context.intent}\n{context.change_summary}")
    return QuestionClass.INFORMATIVE if (words - given) & hidden else QuestionClass.UNANSWERED
