"""`evalkit compare` over runs that differ in the simulated user (issue 19): each side's user
condition, read from its attempts, and the note that says the two differ. The attempts are paired
by (task, sample) as always, so the comparison measures what the user changed."""

from __future__ import annotations

import pandas as pd


def user_condition(frame: pd.DataFrame) -> str | None:
    """`simulated (MODEL)` when the run's attempts had a simulated user, else None."""
    if "user" not in frame or frame["user"].isna().all():
        return None
    users = frame[frame["user"].notna()]
    models = sorted({str(m) for m in users.get("user_model", pd.Series(dtype=object)).dropna()})
    kind = str(users["user"].iloc[0])
    return f"{kind} ({', '.join(models)})" if models else kind


def describe(condition: str | None) -> str:
    return f"with a {condition} user" if condition else "without a user"


def user_note(base: str | None, new: str | None) -> str | None:
    """The note of a comparison whose runs differ in the user; None when they agree."""
    if base == new:
        return None
    return (
        f"the runs differ in the simulated user: base {describe(base)}, new {describe(new)}; attempts are paired "
        "by (task, sample) as usual, so the differences below are the user's effect (if nothing else changed)"
    )
