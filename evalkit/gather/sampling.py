"""The cap that keeps scoring a gathered task fast: a test function parametrised thousands of ways
(seen: 18,000 and 51,000 FAIL_TO_PASS ids) keeps a sample of its ids, the same on every gather.
Pure and light (the command line reads the default)."""

from __future__ import annotations

MAX_IDS_PER_FUNCTION = 25


def sample_per_function(test_ids: list[str], per_function: int) -> list[str]:
    """The ids (sorted) with at most `per_function` of each test function (an id without its
    `[parameters]`): a function with more keeps ids evenly spread over its sorted ids, first and
    last included. Deterministic, so a gather run twice keeps the same sample."""
    groups: dict[str, list[str]] = {}
    for test_id in sorted(test_ids):
        groups.setdefault(test_id.split("[", 1)[0], []).append(test_id)
    kept = []
    for ids in groups.values():
        if len(ids) <= per_function:
            kept += ids
        elif per_function == 1:
            kept.append(ids[0])
        else:
            step = (len(ids) - 1) / (per_function - 1)
            kept += [ids[round(i * step)] for i in range(per_function)]
    return sorted(kept)
