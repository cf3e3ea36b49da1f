"""A tiny double-entry bookkeeping library."""

from .book import Book
from .errors import LedgerError, UnbalancedTransaction, UnknownAccount
from .model import Account, AccountType, Posting, Transaction

__all__ = [
    "Account",
    "AccountType",
    "Book",
    "LedgerError",
    "Posting",
    "Transaction",
    "UnbalancedTransaction",
    "UnknownAccount",
]
