"""The axes every attempt is scored on, in one list: weights, summaries, compare, the terminal,
the leaderboard and its JavaScript all read it, so adding an axis is its scorer plus one entry.

`correctness` is the hidden tests' verdict (shown as the resolved rate); the others are means over
an attempt's evidence in [0, 1], higher better. `composite` is their weighted mean (weights below,
overridable under [scoring.weights]); a reviewer model's score (`reviewer`) is reported beside the axes
and weighted only when the user gives it a weight.

Each axis names the evidence it `needs`; an agent declares the evidence it produces (the Agent
protocol's `evidence`, kept on every attempt). An axis whose needs an attempt did not produce is
not applicable to it: no score (None, shown "n/a"), left out of the composite (the weights are
renormalised over the axes that apply) and out of every mean, never counted as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

# What an attempt can leave behind for scoring. The harness takes the diff itself, so every attempt
# has it; the rest only an agent that reports it produces.
DIFF = "diff"  # the sandbox's change (always: the harness takes it)
USAGE = "usage"  # token counts and turns, reported per attempt
TOOL_CALLS = "tool_calls"  # evalkit's tool-call events (calls, faults) in the trajectory
FINAL_MESSAGE = "final_message"  # the agent's closing message (a submit summary)
# the conversation with its model as the model proxy recorded it (tools offered, the model's tool
# calls and replies): what an agent evalkit did not write leaves instead of evalkit's tool events
TRAFFIC = "traffic"
EVIDENCE: frozenset[str] = frozenset({DIFF, USAGE, TOOL_CALLS, FINAL_MESSAGE, TRAFFIC})


@dataclass(frozen=True)
class Axis:
    name: str  # the key in scores.jsonl, summary.json and evalkit.toml's [scoring.weights]
    label: str  # what a person reads (terminal, leaderboard)
    weight: float  # default weight in the composite
    meaning: str  # one line for the leaderboard's notes
    needs: frozenset[str] = frozenset({DIFF})  # the evidence it is scored from (EVIDENCE)
    or_needs: frozenset[str] | None = None  # other evidence it can be scored from instead

    def applies(self, produced: frozenset[str]) -> bool:
        """Whether an attempt that produced `produced` can be scored on this axis."""
        return self.needs <= produced or (self.or_needs is not None and self.or_needs <= produced)


AXES: tuple[Axis, ...] = (
    Axis("correctness", "correctness", 0.60, "the hidden FAIL_TO_PASS and PASS_TO_PASS tests pass (1 or 0)"),
    Axis("quality", "quality", 0.15, "what a reviewer would send back: defects, leftovers, churn, scope, size"),
    # tokens and turns are what it measures; time alone would score an agent on its wall clock only
    Axis(
        "efficiency", "efficiency", 0.10, "1 - the share of the token, turn and time budgets used", frozenset({USAGE})
    ),
    # its penalties count tool-call faults and judge the closing message: it needs both, or the
    # recorded traffic, from which the parts an agent's own tools hide are left out (not counted 0)
    Axis(
        "interaction",
        "interaction",
        0.15,
        "1 - penalties for tool misuse and an unspecific end",
        frozenset({TOOL_CALLS, FINAL_MESSAGE}),
        frozenset({TRAFFIC}),
    ),
)
NOT_APPLICABLE = "n/a"  # how an axis an attempt cannot be scored on is shown
COMPOSITE = "composite"  # the weighted mean of AXES
REVIEWER = "reviewer"  # a reviewer model's score: reported beside the axes, weighted only if the user says

AXIS_NAMES: tuple[str, ...] = tuple(axis.name for axis in AXES)
# the per-model means shown beside the resolved rate (correctness is that rate), composite last
MEAN_AXES: tuple[str, ...] = (*(axis.name for axis in AXES if axis.name != "correctness"), COMPOSITE)
# every axis column of an attempt's scores row
SCORE_COLUMNS: tuple[str, ...] = (*AXIS_NAMES, COMPOSITE)
LABELS: dict[str, str] = {axis.name: axis.label for axis in AXES} | {COMPOSITE: COMPOSITE, REVIEWER: REVIEWER}
