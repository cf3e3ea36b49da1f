"""How counts read in what evalkit prints: "1 turn", "2 turns", never "1 turns" or "1 task(s)"."""

from __future__ import annotations


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """`singular` when `n` is one, else its plural (`singular + "s"` unless given)."""
    if n == 1:
        return singular
    return plural_form if plural_form is not None else singular + "s"


def counted(n: int, singular: str, plural_form: str | None = None) -> str:
    """`n` followed by the noun in the right number: `counted(1, "turn")` is "1 turn"."""
    return f"{n} {plural(n, singular, plural_form)}"
