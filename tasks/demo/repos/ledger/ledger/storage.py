"""Reading and writing a Book as a JSON document."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from .book import Book
from .errors import LedgerError
from .model import Account, AccountType, Posting, Transaction

FORMAT_VERSION = 1


def book_to_dict(book: Book) -> dict:
    return {
        "version": FORMAT_VERSION,
        "accounts": [
            {"name": a.name, "type": a.type.value, "description": a.description}
            for a in book.accounts
        ],
        "transactions": [
            {
                "id": tx.id,
                "date": tx.date.isoformat(),
                "description": tx.description,
                "postings": [
                    {"account": p.account, "amount": p.amount} for p in tx.postings
                ],
            }
            for tx in book.transactions
        ],
    }


def book_from_dict(data: dict) -> Book:
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise LedgerError(f"unsupported ledger format version: {version!r}")
    accounts = [
        Account(a["name"], AccountType(a["type"]), a.get("description", ""))
        for a in data.get("accounts", [])
    ]
    transactions = [
        Transaction(
            date=dt.date.fromisoformat(t["date"]),
            description=t["description"],
            postings=[Posting(p["account"], p["amount"]) for p in t["postings"]],
            id=t["id"],
        )
        for t in data.get("transactions", [])
    ]
    return Book(accounts, transactions)


def load(path: str | os.PathLike) -> Book:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LedgerError(f"no ledger at {path} (run `ledger init` first)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"{path} is not a valid ledger file: {exc}") from None
    return book_from_dict(data)


def save(book: Book, path: str | os.PathLike) -> None:
    """Write the book atomically: a crash never leaves a half-written file."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(book_to_dict(book), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
