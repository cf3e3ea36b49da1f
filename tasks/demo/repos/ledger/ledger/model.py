"""Core data types: accounts, postings and transactions."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import Enum

from .errors import LedgerError, UnbalancedTransaction


class AccountType(str, Enum):
    ASSET = "asset"
    LIABILITY = "liability"
    EQUITY = "equity"
    INCOME = "income"
    EXPENSE = "expense"

    @property
    def normal_sign(self) -> int:
        """+1 for debit-normal accounts, -1 for credit-normal ones."""
        return 1 if self in (AccountType.ASSET, AccountType.EXPENSE) else -1


@dataclass(frozen=True)
class Account:
    name: str
    type: AccountType
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip() or "=" in self.name:
            raise LedgerError(f"invalid account name: {self.name!r}")
        if not isinstance(self.type, AccountType):
            object.__setattr__(self, "type", AccountType(self.type))


@dataclass(frozen=True)
class Posting:
    """A single leg of a transaction: positive amounts debit, negative credit."""

    account: str
    amount: float


@dataclass
class Transaction:
    date: dt.date
    description: str
    postings: list[Posting] = field(default_factory=list)
    id: int | None = None

    def total(self) -> float:
        return sum(p.amount for p in self.postings)

    def accounts(self) -> set[str]:
        return {p.account for p in self.postings}

    def validate(self) -> None:
        if not self.description.strip():
            raise LedgerError("a transaction needs a description")
        if len(self.postings) < 2:
            raise LedgerError("a transaction needs at least two postings")
        if any(p.amount == 0 for p in self.postings):
            raise LedgerError("postings must have a non-zero amount")
        if self.total() != 0:
            raise UnbalancedTransaction(
                f"transaction {self.description!r} does not balance "
                f"(off by {self.total():.2f})"
            )
