"""Plain-text reports over a Book."""

from __future__ import annotations

from .book import Book
from .model import AccountType

SECTION_TITLES = {
    AccountType.ASSET: "Assets",
    AccountType.LIABILITY: "Liabilities",
    AccountType.EQUITY: "Equity",
    AccountType.INCOME: "Income",
    AccountType.EXPENSE: "Expenses",
}


def format_amount(amount: float) -> str:
    return f"{amount:,.2f}"


def _render(rows: list[tuple[str, str]]) -> str:
    """Render (label, amount) rows with the amounts right-aligned."""
    if not rows:
        return ""
    label_width = max(20, *(len(label) for label, _ in rows))
    amount_width = max(12, *(len(amount) for _, amount in rows))
    lines = [
        f"{label:<{label_width}}  {amount:>{amount_width}}".rstrip()
        for label, amount in rows
    ]
    return "\n".join(lines) + "\n"


def _section(book: Book, type: AccountType) -> tuple[list[tuple[str, str]], float]:
    accounts = [a for a in book.accounts if a.type is type]
    if not accounts:
        return [], 0.0
    title = SECTION_TITLES[type]
    rows = [(title, "")]
    total = 0.0
    for account in accounts:
        amount = book.balance(account.name)
        total += amount
        rows.append((f"  {account.name}", format_amount(amount)))
    rows.append((f"Total {title.lower()}", format_amount(total)))
    return rows, total


def balance_report(book: Book) -> str:
    rows: list[tuple[str, str]] = []
    for type in AccountType:
        section, _ = _section(book, type)
        rows.extend(section)
    return _render(rows)


def income_statement(book: Book) -> str:
    income_rows, income = _section(book, AccountType.INCOME)
    expense_rows, expenses = _section(book, AccountType.EXPENSE)
    rows = income_rows + expense_rows
    rows.append(("Net income", format_amount(income - expenses)))
    return _render(rows)


def register(book: Book, name: str) -> str:
    """Every posting to an account, with a running balance."""
    sign = book.account(name).type.normal_sign
    running = 0.0
    lines = []
    for tx, posting in book.postings_for(name):
        amount = posting.amount * sign
        running += amount
        description = tx.description if len(tx.description) <= 30 else tx.description[:29] + "~"
        lines.append(
            f"{tx.date.isoformat()}  {description:<30}  "
            f"{format_amount(amount):>12}  {format_amount(running):>12}"
        )
    return "\n".join(lines) + "\n" if lines else ""
