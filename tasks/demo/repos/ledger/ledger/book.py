"""The Book: a set of accounts plus the journal of transactions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from .errors import LedgerError, UnknownAccount
from .model import Account, AccountType, Posting, Transaction


class Book:
    def __init__(
        self,
        accounts: Iterable[Account] = (),
        transactions: Iterable[Transaction] = (),
    ) -> None:
        self._accounts: dict[str, Account] = {}
        self._transactions: list[Transaction] = []
        for account in accounts:
            self.add_account(account)
        for tx in transactions:
            self.add_transaction(tx)

    # -- accounts -------------------------------------------------------

    @property
    def accounts(self) -> list[Account]:
        return sorted(self._accounts.values(), key=lambda a: a.name)

    def add_account(self, account: Account) -> Account:
        if account.name in self._accounts:
            raise LedgerError(f"account already exists: {account.name}")
        self._accounts[account.name] = account
        return account

    def open_account(
        self, name: str, type: AccountType | str, description: str = ""
    ) -> Account:
        return self.add_account(Account(name, AccountType(type), description))

    def account(self, name: str) -> Account:
        try:
            return self._accounts[name]
        except KeyError:
            raise UnknownAccount(name) from None

    def has_account(self, name: str) -> bool:
        return name in self._accounts

    # -- transactions ---------------------------------------------------

    @property
    def transactions(self) -> list[Transaction]:
        return list(self._transactions)

    def add_transaction(self, tx: Transaction) -> Transaction:
        tx.validate()
        for name in tx.accounts():
            self.account(name)
        if tx.id is None:
            tx.id = max((t.id for t in self._transactions), default=0) + 1
        elif any(t.id == tx.id for t in self._transactions):
            raise LedgerError(f"duplicate transaction id: {tx.id}")
        self._transactions.append(tx)
        self._transactions.sort(key=lambda t: (t.date, t.id))
        return tx

    def post(
        self,
        date: dt.date,
        description: str,
        postings: Iterable[tuple[str, float]],
    ) -> Transaction:
        tx = Transaction(date, description, [Posting(a, amt) for a, amt in postings])
        return self.add_transaction(tx)

    # -- queries --------------------------------------------------------

    def postings_for(self, name: str) -> list[tuple[Transaction, Posting]]:
        self.account(name)
        return [
            (tx, p) for tx in self._transactions for p in tx.postings if p.account == name
        ]

    def balance(self, name: str) -> float:
        """Balance of an account, signed so that its normal side is positive."""
        account = self.account(name)
        raw = sum(p.amount for _, p in self.postings_for(name))
        return raw * account.type.normal_sign

    def balances(self) -> dict[str, float]:
        return {a.name: self.balance(a.name) for a in self.accounts}

    def trial_balance(self) -> tuple[float, float]:
        """Total debits and total credits over the whole journal."""
        debits = credits = 0.0
        for tx in self._transactions:
            for p in tx.postings:
                if p.amount > 0:
                    debits += p.amount
                else:
                    credits -= p.amount
        return debits, credits
