"""The outputs of `evalkit compare`: the terminal table, the markdown summary (CI job summary, PR
comment) and JUnit XML, each from a `Comparison` alone (the JSON form is its `model_dump()`)."""

from __future__ import annotations

from junitparser import Failure, JUnitXml, TestCase, TestSuite
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evalkit.report.compare.cutoff import cutoff_lines
from evalkit.report.compare.findings import AxisResult, Comparison, Flip
from evalkit.report.compare.integrity import integrity_lines, junit_properties, markdown_lines
from evalkit.report.compare.user_condition import describe
from evalkit.wording import counted

AGENT_CHARS = 60  # of an agent's name in the comparison's setting line
_VERDICT_TEXT = {
    "small_drop": "drop within --max-drop",
    "improvement": "improved",
    "no_change": "no significant change",
}


def verdict_text(axis: AxisResult) -> str:
    if axis.regression:
        return "REGRESSION" if axis.deciding else "worse (not deciding)"
    return _VERDICT_TEXT[axis.verdict]


def headline(comparison: Comparison) -> str:
    """`No regression` or `REGRESSION in resolved, composite`, plus non-deciding axes that got worse."""
    text = f"REGRESSION in {', '.join(comparison.regressions)}" if comparison.regression else "No regression"
    also = [a.axis for a in comparison.axes if a.regression and not a.deciding]
    return f"{text}; also worse (not deciding): {', '.join(also)}" if also else text


def _cells(axis: AxisResult) -> list[str]:
    p = "<0.001" if axis.p_worse < 0.001 else f"{axis.p_worse:.3f}"
    return [
        axis.axis,
        f"{axis.base:.3f}",
        f"{axis.new:.3f}",
        f"{axis.diff:+.3f}",
        f"[{axis.ci_low:+.3f}, {axis.ci_high:+.3f}]",
        p,
        verdict_text(axis),
    ]


def _columns(comparison: Comparison) -> list[str]:
    return ["axis", "base", "new", "diff", f"{1 - comparison.alpha:.0%} CI", "p (new worse)", "verdict"]


def _several_samples(comparison: Comparison) -> bool:
    return any(t.samples > 1 for t in comparison.task_outcomes)


def _flip_names(comparison: Comparison, flips: list[Flip]) -> list[str]:
    several = _several_samples(comparison)
    return [f"{f.task_id} #{f.sample}" if several else f.task_id for f in flips]


def _side(model: str, agent: str, agents_shown: bool, user: str | None = None, users_shown: bool = False) -> str:
    """`model`, or `model under agent` (a command folded and cut: all of it is in the JSON), and
    `with a simulated (…) user` / `without a user` when the runs differ in the user."""
    shown = model
    if agents_shown:
        folded = " ".join(agent.split())
        shown = f"{model} under {folded if len(folded) <= AGENT_CHARS else folded[: AGENT_CHARS - 1] + '…'}"
    return f"{shown} {describe(user)}" if users_shown else shown


def _setting(comparison: Comparison) -> str:
    c = comparison
    agents_shown = c.base_agent != c.new_agent or c.base_agent != "tool-loop"
    users = c.base_user != c.new_user
    unpaired = f"; unpaired attempts ignored: {c.unpaired_base} base, {c.unpaired_new} new"
    failures = (
        f"; {counted(c.harness_failures, 'pair')} with an endpoint or sandbox error left out"
        if c.harness_failures
        else ""
    )
    return (
        f"suite {c.suite}: base {c.base_run} ({_side(c.base_model, c.base_agent, agents_shown, c.base_user, users)}) → "
        f"new {c.new_run} ({_side(c.new_model, c.new_agent, agents_shown, c.new_user, users)}), "
        f"{counted(c.pairs, 'pair')} over {counted(c.tasks, 'task')}"
        f"{unpaired if c.unpaired_base or c.unpaired_new else ''}{failures}. "
        f"Regression = one-sided p < {c.alpha:g} and a drop over {c.max_drop:g}; "
        f"the exit code follows {', '.join(c.deciding_axes)}."
    )


def comparison_table(comparison: Comparison) -> Table:
    table = Table(title=escape(f"{comparison.base_run} → {comparison.new_run}"))
    for column in _columns(comparison):
        table.add_column(escape(column), justify="left" if column in ("axis", "verdict") else "right")
    for axis in comparison.axes:
        style = "bold red" if axis.regression and axis.deciding else "yellow" if axis.regression else None
        style = "green" if axis.verdict == "improvement" else style
        table.add_row(*(escape(cell) for cell in _cells(axis)), style=style)
    return table


def print_comparison(comparison: Comparison, console: Console) -> None:
    console.print(comparison_table(comparison))
    console.print(escape(_setting(comparison)), highlight=False, soft_wrap=True)
    for line in cutoff_lines(comparison):
        console.print(escape(line), highlight=False, soft_wrap=True)
    for title, flips in (("resolved → unresolved", comparison.lost), ("unresolved → resolved", comparison.gained)):
        names = _flip_names(comparison, flips)
        console.print(f"{title} ({len(names)}): {escape(', '.join(names)) or '—'}", highlight=False, soft_wrap=True)
    section = comparison.integrity
    for line, style in zip(
        integrity_lines(section, _several_samples(comparison)),
        (None, "bold red" if section.newly_failing else None, "dim"),
        strict=True,
    ):
        console.print(f"[{style}]{escape(line)}[/]" if style else escape(line), highlight=False, soft_wrap=True)
    for note in comparison.notes:
        console.print(f"[yellow]note[/] {escape(note)}", highlight=False, soft_wrap=True)
    style = "bold red" if comparison.regression else "bold green"
    console.print(f"[{style}]{escape(headline(comparison))}[/]", highlight=False, soft_wrap=True)


def markdown_report(comparison: Comparison) -> str:
    """A summary for a CI job summary or a PR comment: headline, table, flips, notes."""
    columns = _columns(comparison)
    lines = [
        f"## {headline(comparison)}",
        "",
        _setting(comparison),
        "",
        *(f"- {line}" for line in cutoff_lines(comparison)),
        *([""] if comparison.base_after_cutoff or comparison.new_after_cutoff else []),
        "| " + " | ".join(columns) + " |",
        "|" + "|".join("---" if c in ("axis", "verdict") else "---:" for c in columns) + "|",
    ]
    for axis in comparison.axes:
        cells = _cells(axis)
        if axis.regression:
            cells[-1] = f"**{cells[-1]}**"
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for title, flips in (("Resolved → unresolved", comparison.lost), ("Unresolved → resolved", comparison.gained)):
        names = _flip_names(comparison, flips)
        listed = ", ".join(f"`{name}`" for name in names) or "none"
        lines += [f"**{title} ({len(names)}):** {listed}", ""]
    lines += markdown_lines(comparison.integrity, _several_samples(comparison))
    lines += [f"- note: {note}" for note in comparison.notes]
    return "\n".join(lines).rstrip() + "\n"


def junit_report(comparison: Comparison) -> JUnitXml:
    """One test case per paired task (failing when its resolved rate dropped: resolved →
    unresolved with one sample) and one per deciding axis (failing when that axis regressed).
    Integrity sets no case's outcome: its counts are properties of the axes suite, and a task whose
    new attempts the integrity scan newly failed says so in its system-out (and failure message)."""
    xml = JUnitXml("evalkit compare")
    tasks = TestSuite(f"{comparison.suite}: tasks")
    newly_failing: dict[str, list[str]] = {}
    for flip in comparison.integrity.newly_failing:
        newly_failing.setdefault(flip.task_id, []).append(f"sample {flip.sample}: {', '.join(flip.kinds) or '?'}")
    for outcome in comparison.task_outcomes:
        case = TestCase(outcome.task_id, classname="evalkit.compare.tasks")
        integrity = newly_failing.get(outcome.task_id)
        if integrity:
            case.system_out = f"integrity fail in the new run, not in the base: {'; '.join(integrity)}"
        if outcome.dropped:
            if outcome.samples == 1:
                message = "resolved in the base run, unresolved in the new run"
            else:
                message = (
                    f"resolved rate {outcome.base_resolved:.2f} → {outcome.new_resolved:.2f} "
                    f"over {outcome.samples} samples"
                )
            case.result = [Failure(message + (" (integrity fail in the new run)" if integrity else ""))]
        tasks.add_testcase(case)
    axes = TestSuite(f"{comparison.suite}: axes")
    for name, value in junit_properties(comparison.integrity):  # <properties> come before the cases
        axes.add_property(name, value)
    for axis in comparison.axes:
        if not axis.deciding:
            continue
        case = TestCase(axis.axis, classname="evalkit.compare.axes")
        if axis.regression:
            failure = Failure(
                f"{axis.axis} {axis.base:.3f} → {axis.new:.3f} ({axis.diff:+.3f}, "
                f"CI [{axis.ci_low:+.3f}, {axis.ci_high:+.3f}], p = {axis.p_worse:.4f})"
            )
            failure.text = headline(comparison)
            case.result = [failure]
        axes.add_testcase(case)
    for suite in (tasks, axes):
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    return xml
