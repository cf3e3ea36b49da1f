import datetime as dt

import pytest

from ledger import Book, LedgerError, UnbalancedTransaction, UnknownAccount


def test_balance_of_empty_account():
    book = Book()
    book.open_account("cash", "asset")
    assert book.balance("cash") == 0


def test_balances_follow_normal_side(book):
    assert book.balance("checking") == 2700
    assert book.balance("cash") == 60
    assert book.balance("card") == 60
    assert book.balance("salary") == 3000
    assert book.balance("food") == 100
    assert book.balance("opening") == 1000


def test_trial_balance_is_even(book):
    debits, credits = book.trial_balance()
    assert debits == credits == 5400


def test_duplicate_account_rejected(book):
    with pytest.raises(LedgerError):
        book.open_account("cash", "asset")


def test_posting_to_unknown_account(book):
    with pytest.raises(UnknownAccount):
        book.post(dt.date(2024, 3, 1), "Lunch", [("food", 10), ("wallet", -10)])


def test_unbalanced_post_is_not_recorded(book):
    before = len(book.transactions)
    with pytest.raises(UnbalancedTransaction):
        book.post(dt.date(2024, 3, 1), "Oops", [("food", 10), ("cash", -5)])
    assert len(book.transactions) == before


def test_transactions_sorted_by_date_and_ids_assigned(book):
    tx = book.post(dt.date(2023, 12, 31), "Early", [("cash", 1), ("opening", -1)])
    assert tx.id == 7
    assert book.transactions[0] is tx
    assert [t.id for t in book.transactions[1:]] == [1, 2, 3, 4, 5, 6]


def test_postings_for_account(book):
    rows = book.postings_for("food")
    assert [(tx.description, p.amount) for tx, p in rows] == [("Groceries", 60), ("Market", 40)]


def test_balances_dict(book):
    balances = book.balances()
    assert set(balances) == {"checking", "cash", "card", "opening", "salary", "food", "rent"}
    assert balances["rent"] == 1200
