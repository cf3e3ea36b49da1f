"""How what evalkit prints reads: counts ("1 turn", "2 turns", never "1 turns" or "1 task(s)"),
and lines quoted from other programs' output without their terminal colours."""

from __future__ import annotations

import re

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def without_colour(text: str) -> str:
    """`text` without ANSI colour codes (the engine's build log, pytest under `--color yes`)."""
    return _COLOUR.sub("", text)


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """`singular` when `n` is one, else its plural (`singular + "s"` unless given)."""
    if n == 1:
        return singular
    return plural_form if plural_form is not None else singular + "s"


def counted(n: int, singular: str, plural_form: str | None = None) -> str:
    """`n` followed by the noun in the right number: `counted(1, "turn")` is "1 turn"."""
    return f"{n} {plural(n, singular, plural_form)}"
