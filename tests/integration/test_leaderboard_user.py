"""The leaderboard's simulated-user columns in a real headless Chromium, opened from disk: two runs
of one suite that differ only by the user show the model's resolved rate with and without a user
side by side, its ask rate and informative share; a user model named with markup stays text."""

from __future__ import annotations

import pytest
from leaderboard_fixtures import USER_EVIL, chromium, opened, user_runs

from evalkit.report.leaderboard.output import write_leaderboard

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("user-columns")
    return write_leaderboard(list(user_runs(toy_suite_dir, root)), root / "report")


def test_both_conditions_side_by_side_with_the_ask_rate(report):
    with chromium() as browser, opened(browser, report) as page:
        headers = page.locator("table.board thead th").all_inner_texts()
        wanted = ["resolved with user", "resolved without user", "ask rate", "informative share"]
        at = [headers.index(label) for label in wanted]
        cells = page.locator("table.board tbody tr").evaluate_all(
            "rows => rows.map(r => [...r.children].map(c => c.textContent))"
        )
        by_label = {row[0].split(" ")[0] + " " + row[0].split(" ")[1]: row for row in cells if "gpt-4o" in row[0]}
        asked, alone = by_label["gpt-4o (asked)"], by_label["gpt-4o (alone)"]
        assert [asked[i] for i in at] == ["100.0 %", "50.0 %", "100.0 % 1.50 q/attempt", "66.7 %"]
        assert [alone[i] for i in at] == ["100.0 %", "50.0 %", "—", "—"]
        evil = next(row for row in cells if row[0].startswith("qwen"))
        assert [evil[i] for i in at] == ["—", "—", "100.0 % 1.00 q/attempt", "0.0 %"]
        title = page.locator("table.board tbody td span[title*='answered by']").evaluate_all("s => s.map(x => x.title)")
        assert any(USER_EVIL in t for t in title) and any("$0.30" in t or "0.3" in t for t in title)
        assert page.locator("table.board img").count() == 0 and page.evaluate("window.pwned") is None


def test_an_attempt_shows_its_questions_and_the_users_cost_apart(report):
    with chromium() as browser, opened(browser, report) as page:
        titles = page.locator("table.matrix thead th").evaluate_all("cells => cells.map(c => c.title)")
        column = next(i for i, title in enumerate(titles) if "asked" in title)
        row = page.locator("table.matrix tbody tr", has_text="calc-power-again")
        row.locator(f"td:nth-child({column + 1}) button").click()
        dialog = page.locator("dialog#attempt")
        dialog.locator(".trajectory").wait_for()
        scores = dialog.locator("table.scores").inner_text()
        assert "informative questions 1" in scores and "redundant questions 1" in scores
        assert "simulated user's tokens 1,000,000" in scores and "simulated user's cost $0.15" in scores
        asked = dialog.locator(".trajectory .event.asked").all_inner_texts()  # each exchange, in words
        assert len(asked) == 2, asked
        assert "question to the simulated user · informative · asked with ask_user" in asked[0]
        assert "Question 1: which unit?" in asked[0] and "Cents, rounded half up." in asked[0]
        assert "redundant (the request already said)" in asked[1]


def test_an_answer_with_markup_stays_text_in_the_attempt_view(report):
    with chromium() as browser, opened(browser, report) as page:
        titles = page.locator("table.matrix thead th").evaluate_all("cells => cells.map(c => c.title)")
        column = titles.index("qwen")  # the run whose user is named with markup
        page.locator(f"table.matrix tbody tr td:nth-child({column + 1}) button").first.click()  # its only attempt
        dialog = page.locator("dialog#attempt")
        dialog.locator(".trajectory .event.asked").wait_for()
        assert USER_EVIL in dialog.locator(".trajectory .event.asked pre").last.inner_text()
        assert "unanswered" in dialog.locator(".trajectory .event.asked").inner_text()
        assert dialog.locator("img").count() == 0 and page.evaluate("window.pwned") is None
