"""Command line interface: ``ledger [-f FILE] COMMAND ...``."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from . import report, storage
from .book import Book
from .errors import LedgerError
from .model import AccountType


def parse_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid date {text!r}, expected YYYY-MM-DD")


def parse_amount(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise LedgerError(f"invalid amount: {text!r}") from None


def parse_postings(items: list[str]) -> list[tuple[str, float]]:
    """Parse ``ACCOUNT=AMOUNT`` items; one item may omit the amount to balance."""
    postings: list[tuple[str, float | None]] = []
    for item in items:
        account, sep, amount = item.partition("=")
        postings.append((account, parse_amount(amount) if sep else None))
    missing = [i for i, (_, amount) in enumerate(postings) if amount is None]
    if len(missing) > 1:
        raise LedgerError("only one posting may omit its amount")
    if missing:
        total = sum(amount for _, amount in postings if amount is not None)
        postings[missing[0]] = (postings[missing[0]][0], -total)
    return postings  # type: ignore[return-value]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ledger", description="Double-entry bookkeeping.")
    parser.add_argument(
        "-f",
        "--file",
        default=os.environ.get("LEDGER_FILE", "ledger.json"),
        help="ledger file (default: $LEDGER_FILE or ledger.json)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("init", help="create an empty ledger file")

    account = sub.add_parser("account", help="manage accounts")
    account_sub = account.add_subparsers(dest="account_command", required=True)
    add = account_sub.add_parser("add", help="open a new account")
    add.add_argument("name")
    add.add_argument("--type", required=True, choices=[t.value for t in AccountType])
    add.add_argument("--description", default="")
    account_sub.add_parser("list", help="list accounts")

    post = sub.add_parser("post", help="record a transaction")
    post.add_argument("date", type=parse_date)
    post.add_argument("description")
    post.add_argument("postings", nargs="+", metavar="ACCOUNT[=AMOUNT]")

    balance = sub.add_parser("balance", help="show account balances")
    balance.add_argument("account", nargs="?")

    rep = sub.add_parser("report", help="print a report")
    rep.add_argument("kind", choices=["balances", "income"])

    reg = sub.add_parser("register", help="list the postings of an account")
    reg.add_argument("account")
    return parser


def cmd_init(args: argparse.Namespace) -> None:
    path = Path(args.file)
    if path.exists():
        raise LedgerError(f"{path} already exists")
    storage.save(Book(), path)
    print(f"created {path}")


def cmd_account(args: argparse.Namespace) -> None:
    book = storage.load(args.file)
    if args.account_command == "add":
        book.open_account(args.name, args.type, args.description)
        storage.save(book, args.file)
        print(f"added account {args.name}")
        return
    for account in book.accounts:
        line = f"{account.name:<24} {account.type.value:<10} {account.description}"
        print(line.rstrip())


def cmd_post(args: argparse.Namespace) -> None:
    book = storage.load(args.file)
    tx = book.post(args.date, args.description, parse_postings(args.postings))
    storage.save(book, args.file)
    print(f"posted transaction #{tx.id}")


def cmd_balance(args: argparse.Namespace) -> None:
    book = storage.load(args.file)
    if args.account:
        print(f"{args.account}  {report.format_amount(book.balance(args.account))}")
    else:
        sys.stdout.write(report.balance_report(book))


def cmd_report(args: argparse.Namespace) -> None:
    book = storage.load(args.file)
    if args.kind == "balances":
        sys.stdout.write(report.balance_report(book))
    else:
        sys.stdout.write(report.income_statement(book))


def cmd_register(args: argparse.Namespace) -> None:
    book = storage.load(args.file)
    sys.stdout.write(report.register(book, args.account))


COMMANDS = {
    "init": cmd_init,
    "account": cmd_account,
    "post": cmd_post,
    "balance": cmd_balance,
    "report": cmd_report,
    "register": cmd_register,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except LedgerError as exc:
        print(f"ledger: error: {exc}", file=sys.stderr)
        return 1
    return 0
