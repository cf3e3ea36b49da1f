import datetime as dt

import pytest

from ledger import Account, AccountType, LedgerError, Posting, Transaction, UnbalancedTransaction


def make_tx(*postings, description="Test"):
    return Transaction(dt.date(2024, 3, 1), description, [Posting(a, x) for a, x in postings])


def test_normal_sign_by_type():
    assert AccountType.ASSET.normal_sign == 1
    assert AccountType.EXPENSE.normal_sign == 1
    assert AccountType.LIABILITY.normal_sign == -1
    assert AccountType.INCOME.normal_sign == -1
    assert AccountType.EQUITY.normal_sign == -1


def test_account_type_coerced_from_string():
    assert Account("cash", "asset").type is AccountType.ASSET


@pytest.mark.parametrize(
    "name", ["", " cash", "cash ", "a=b"], ids=["empty", "leading-space", "trailing-space", "equals"]
)
def test_invalid_account_names(name):
    with pytest.raises(LedgerError):
        Account(name, AccountType.ASSET)


def test_balanced_transaction_validates():
    make_tx(("cash", 10), ("food", -4), ("rent", -6)).validate()


def test_unbalanced_transaction_rejected():
    with pytest.raises(UnbalancedTransaction):
        make_tx(("cash", 10), ("food", -9)).validate()


def test_transaction_needs_two_postings():
    with pytest.raises(LedgerError):
        make_tx(("cash", 0)).validate()


def test_zero_posting_rejected():
    with pytest.raises(LedgerError):
        make_tx(("cash", 0), ("food", 0)).validate()


def test_blank_description_rejected():
    with pytest.raises(LedgerError):
        make_tx(("cash", 1), ("food", -1), description="  ").validate()
