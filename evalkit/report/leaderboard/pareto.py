"""The Pareto frontier of the leaderboard's chart: the models no other beats on both cost and
resolved rate (or on the x axis shown instead of cost)."""

from __future__ import annotations

from collections.abc import Sequence


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the (cost, resolved) points no other point dominates, by increasing cost.

    A point is dominated when another costs no more and resolves no less, and is strictly better
    in one of the two: what is left is the cheapest way to reach each resolved rate. Equal points
    do not dominate each other, so both stay."""

    def dominated(cost: float, resolved: float) -> bool:
        return any(c <= cost and r >= resolved and (c < cost or r > resolved) for c, r in points)

    return sorted((i for i, (c, r) in enumerate(points) if not dominated(c, r)), key=lambda i: (points[i][0], i))
