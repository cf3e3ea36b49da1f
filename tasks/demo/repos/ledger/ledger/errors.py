class LedgerError(Exception):
    """Base class for every error raised by the ledger."""


class UnknownAccount(LedgerError):
    def __init__(self, name: str):
        super().__init__(f"unknown account: {name}")
        self.name = name


class UnbalancedTransaction(LedgerError):
    """The postings of a transaction do not sum to zero."""
