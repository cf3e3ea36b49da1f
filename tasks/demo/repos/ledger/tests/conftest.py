import datetime as dt

import pytest

from ledger import Book, storage
from ledger.cli import main


@pytest.fixture
def book():
    b = Book()
    b.open_account("checking", "asset")
    b.open_account("cash", "asset")
    b.open_account("card", "liability")
    b.open_account("opening", "equity")
    b.open_account("salary", "income")
    b.open_account("food", "expense")
    b.open_account("rent", "expense")
    b.post(dt.date(2024, 1, 1), "Opening balance", [("checking", 1000), ("opening", -1000)])
    b.post(dt.date(2024, 1, 5), "Groceries", [("food", 60), ("card", -60)])
    b.post(dt.date(2024, 1, 31), "January salary", [("checking", 3000), ("salary", -3000)])
    b.post(dt.date(2024, 2, 1), "Rent", [("rent", 1200), ("checking", -1200)])
    b.post(dt.date(2024, 2, 3), "ATM", [("cash", 100), ("checking", -100)])
    b.post(dt.date(2024, 2, 10), "Market", [("food", 40), ("cash", -40)])
    return b


@pytest.fixture
def ledger_file(tmp_path, book):
    path = tmp_path / "ledger.json"
    storage.save(book, path)
    return path


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process; returns (exit_code, stdout, stderr)."""

    def run(*argv):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
