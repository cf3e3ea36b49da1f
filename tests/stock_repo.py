"""A two-commit repository built with real git: its second commit adds `Stock.reserve` (a method the
subject does not name: the interface must list it) and sets `last_hold` with `setattr`, which the
test reads (a name no definition gives: the task is underspecified)."""

from __future__ import annotations

from pathlib import Path

from shop_repo import _commit, _git

INVENTORY = (
    "class Stock:\n    def __init__(self):\n        self.items = {}\n\n"
    "    def add(self, sku, n):\n        self.items[sku] = self.items.get(sku, 0) + n\n"
)
RESERVE = (
    "\n    def reserve(self, sku, n, *, hold_minutes=15):\n"
    '        """Hold `n` units for a checkout; they come back after `hold_minutes`."""\n'
    "        self.items[sku] -= n\n"
    '        setattr(self, "last_hold", (sku, n, hold_minutes))\n'
)
TESTS = (
    "from shop.stock import Stock\n\n\n"
    "def test_add():\n    s = Stock()\n    s.add('a', 2)\n    assert s.items == {'a': 2}\n"
)
RESERVE_TESTS = (
    "\n\ndef test_reserve():\n    s = Stock()\n    s.add('a', 2)\n    s.reserve('a', 1, hold_minutes=5)\n"
    "    assert s.items == {'a': 1} and s.last_hold == ('a', 1, 5)\n"
)


def build_stock_repo(root: Path) -> Path:
    root.mkdir()
    _git(root, "init", "--quiet", "--initial-branch=main")
    files = {"shop/__init__.py": "", "shop/stock.py": INVENTORY, "tests/test_stock.py": TESTS}
    _commit(root, files, "Start", 1)
    files = {"shop/stock.py": INVENTORY + RESERVE, "tests/test_stock.py": TESTS + RESERVE_TESTS}
    _commit(root, files, "Hold stock during checkout", 2)
    return root
