"""The leaderboard's agent column and grouping in a real headless Chromium, opened from disk: an
agent named with markup is shown as text (shortened, whole in the tooltip) and never runs; the
rows group by agent as `--group-by agent` asked, by model or not at all from the page's control,
and a sort keeps each group together."""

from __future__ import annotations

import pytest
from leaderboard_fixtures import agent_runs, chromium, opened

from evalkit.report.leaderboard.output import write_leaderboard

pytestmark = pytest.mark.integration

EVIL_AGENT = "command:echo '</script><script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">' && agent"


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("agent-groups")
    loop, agent = agent_runs(toy_suite_dir, root, EVIL_AGENT)
    return write_leaderboard([loop, agent], root / "report", group_by="agent")


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def shown(page) -> list[list[str]]:
    """The table body as shown: a group header row is one cell, a data row its model and agent."""
    return page.locator("table.board tbody tr").evaluate_all(
        "rows => rows.map(r => r.classList.contains('group') ? [r.textContent] : "
        "[r.children[0].textContent.split(' ')[0], r.children[1].textContent])"
    )


def test_rows_come_grouped_by_agent_with_the_agent_as_text(browser, report):
    with opened(browser, report) as page:
        assert page.evaluate("window.pwned") is None
        rows = shown(page)
        headers = [row[0] for row in rows if len(row) == 1]
        assert headers[0] == "agent: tool-loop (2 rows)"  # the best-placed row's group first
        assert headers[1].startswith("agent: command:echo '</script><script>window.pw") and len(headers) == 2
        assert headers[1].endswith("&& agent (2 rows)") and "…" in headers[1]  # shortened in the middle
        assert rows[1:3] == [["gpt-4o", "tool-loop"], ["qwen", "tool-loop"]]
        agent_cell = page.locator("table.board tbody tr:not(.group) td:nth-child(2) span.agent").last
        assert agent_cell.get_attribute("title") == EVIL_AGENT  # the whole name on hover
        assert len(agent_cell.inner_text()) <= 40 and "…" in agent_cell.inner_text()
        assert page.locator("table.board img").count() == 0 and page.evaluate("window.pwned") is None
        assert page.locator("table.board .badge.agent-crash").all_inner_texts() == ["1 agent crash"]  # qwen's


def test_the_page_switches_the_grouping_and_a_sort_keeps_groups_together(browser, report):
    with opened(browser, report) as page:
        page.select_option("select[aria-label='group the rows']", "model")
        rows = shown(page)
        assert [row[0] for row in rows if len(row) == 1] == ["model: gpt-4o (2 rows)", "model: qwen (2 rows)"]
        assert [row[0] for row in rows if len(row) == 2] == ["gpt-4o", "gpt-4o", "qwen", "qwen"]
        page.locator("table.board thead th button", has_text="resolved %").click()  # worst first: qwen's group first
        assert [row[0] for row in shown(page) if len(row) == 1] == ["model: qwen (2 rows)", "model: gpt-4o (2 rows)"]
        page.select_option("select[aria-label='group the rows']", "none")
        assert all(len(row) == 2 for row in shown(page)) and len(shown(page)) == 4
