"""A review session for a command (`run`, `score`, `reviewer calibrate`): the reviewer's client,
its price, and (agentic mode) a sandbox backend of its own, all closed when the session ends; and
where a reviewer's calibration on a suite is kept (reports/reviewers/), for the run's summary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evalkit.review.endpoint import ReviewerChoice, reviewer_client
from evalkit.review.reviewer import Reviewer
from evalkit.review.session import ReviewSession
from evalkit.scoring.prices import Price, price_for

REVIEWERS_DIR = Path("reports/reviewers")


def calibration_path(reviewer: str, suite: str, mode: str) -> Path:
    """Where a calibration is kept by default: reports/reviewers/<reviewer>__<suite>[__no-tools].json."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in reviewer)
    return REVIEWERS_DIR / f"{safe}__{suite}{'' if mode == 'agentic' else '__' + mode}.json"


def find_calibration(suite: str, reviewer: str, mode: str) -> dict | None:
    """The reviewer's calibration on `suite` as its file holds it, None without a (readable) one."""
    path = calibration_path(reviewer, suite, mode)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@contextmanager
def open_review(
    choice: ReviewerChoice | None, prices: dict[str, Price], run_id: str, backend_name: str
) -> Iterator[ReviewSession | None]:
    """The session reviewing with `choice` (None: no review), its sandboxes labelled `run_id`."""
    if choice is None:
        yield None
        return
    from evalkit.cli.common import _open_backend

    with reviewer_client(choice) as client:
        price = price_for(prices, client.spec.model, client.spec.name)
        backend = _open_backend(run_id, backend_name) if choice.mode == "agentic" else None
        try:
            with ReviewSession(Reviewer(client, choice.mode, choice.max_turns, price), backend) as session:
                yield session
        finally:
            if backend is not None:
                backend.close()
