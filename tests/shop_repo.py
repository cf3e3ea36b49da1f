"""A small git repository with a known history, built with real git for the gather tests.

Commits after the root, oldest first, and what `evalkit gather` must make of each:

    feature   "Add discount codes to the cart"   → task (4 FAIL_TO_PASS, the cart tests PASS_TO_PASS)
    docs      "Explain the cart in the README"   → left out: no test change
    tests     "Cover empty carts"                → left out: tests only
    flaky     "feat(shipping): estimate ..."     → task; its coin-flip test is dropped as flaky
    refactor  "Move money rounding to a helper"  → left out: its new tests already pass before
    small     "Reject negative quantities"       → left out: too small
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

EXPECTED_TASK_SUBJECTS = ["feat(shipping): estimate shipping by weight", "Add discount codes to the cart (#12)"]
EXPECTED_REJECTIONS = {
    "Reject negative quantities": ("history", "too small"),
    "Move money rounding to a helper": ("validation", "no FAIL_TO_PASS test: the new tests already pass"),
    "Cover empty carts": ("history", "tests only: no source change"),
    "Explain the cart in the README": ("history", "no test change"),
}
FLAKY_TEST = "tests/test_shipping.py::test_estimate_is_stable_under_load"


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


CART = _d(
    '''
    """A shopping cart."""


    class Cart:
        def __init__(self):
            self.lines = []

        def add(self, sku, price, quantity=1):
            self.lines.append((sku, price, quantity))

        def total(self):
            return round(sum(price * quantity for _, price, quantity in self.lines), 2)
    '''
)
CART_TESTS = _d(
    """
    from shop.cart import Cart


    def test_total():
        cart = Cart()
        cart.add("a", 2.5, 2)
        cart.add("b", 1.0)
        assert cart.total() == 6.0


    def test_empty_total_is_zero_after_adding_nothing():
        assert Cart().total() == 0
    """
)
DISCOUNTS = _d(
    '''
    """Discount codes: percentage or fixed amount, with an optional minimum total."""

    from dataclasses import dataclass


    class UnknownCode(KeyError):
        pass


    @dataclass(frozen=True)
    class Discount:
        code: str
        percent: float = 0.0
        amount: float = 0.0
        minimum: float = 0.0

        def applies_to(self, total):
            return total >= self.minimum

        def reduce(self, total):
            if not self.applies_to(total):
                return total
            reduced = total * (1 - self.percent / 100) - self.amount
            return max(0.0, round(reduced, 2))


    CODES = {
        "SAVE10": Discount("SAVE10", percent=10),
        "FIVEOFF": Discount("FIVEOFF", amount=5, minimum=20),
    }


    def lookup(code):
        try:
            return CODES[code.strip().upper()]
        except KeyError:
            raise UnknownCode(code) from None
    '''
)
CART_WITH_DISCOUNTS = _d(
    '''
    """A shopping cart."""

    from shop.discounts import lookup


    class Cart:
        def __init__(self):
            self.lines = []
            self.discount = None

        def add(self, sku, price, quantity=1):
            self.lines.append((sku, price, quantity))

        def total(self):
            return round(sum(price * quantity for _, price, quantity in self.lines), 2)

        def apply_code(self, code):
            """Use a discount code; an unknown code raises UnknownCode and changes nothing."""
            self.discount = lookup(code)

        def remove_code(self):
            self.discount = None

        def payable(self):
            total = self.total()
            if self.discount is None:
                return total
            return self.discount.reduce(total)
    '''
)
DISCOUNT_TESTS = _d(
    """
    import pytest

    from shop.cart import Cart
    from shop.discounts import UnknownCode


    def cart_of(total):
        cart = Cart()
        cart.add("x", total)
        return cart


    def test_percent_code():
        cart = cart_of(50)
        cart.apply_code("save10")
        assert cart.payable() == 45.0


    def test_fixed_code_needs_minimum():
        small, big = cart_of(10), cart_of(30)
        small.apply_code("FIVEOFF")
        big.apply_code("FIVEOFF")
        assert (small.payable(), big.payable()) == (10, 25.0)


    def test_unknown_code_changes_nothing():
        cart = cart_of(10)
        with pytest.raises(UnknownCode):
            cart.apply_code("NOPE")
        assert cart.payable() == 10


    def test_remove_code():
        cart = cart_of(50)
        cart.apply_code("SAVE10")
        cart.remove_code()
        assert cart.payable() == 50
    """
)
SHIPPING = _d(
    '''
    """Shipping estimates by parcel weight and zone."""

    RATES = {
        "domestic": [(1.0, 4.5), (5.0, 9.0), (20.0, 18.0)],
        "europe": [(1.0, 9.0), (5.0, 16.0), (20.0, 35.0)],
        "world": [(1.0, 15.0), (5.0, 28.0), (20.0, 60.0)],
    }
    FREE_ABOVE = 100.0


    class TooHeavy(ValueError):
        pass


    def parcel_weight(items):
        """Total weight in kg of (weight, quantity) pairs, packaging included."""
        net = sum(weight * quantity for weight, quantity in items)
        return round(net * 1.05 + 0.1, 3)


    def estimate(items, zone="domestic", order_total=0.0):
        """Shipping price for the items; free for large domestic orders."""
        if zone not in RATES:
            raise KeyError(f"unknown zone {zone!r}")
        if zone == "domestic" and order_total >= FREE_ABOVE:
            return 0.0
        weight = parcel_weight(items)
        for limit, price in RATES[zone]:
            if weight <= limit:
                return price
        raise TooHeavy(f"{weight} kg is over the {RATES[zone][-1][0]} kg limit")
    '''
)
SHIPPING_TESTS = _d(
    """
    import random

    import pytest

    from shop.shipping import TooHeavy, estimate, parcel_weight


    def test_weight_includes_packaging():
        assert parcel_weight([(1.0, 2)]) == 2.2


    def test_estimate_by_zone():
        assert estimate([(0.5, 1)]) == 4.5
        assert estimate([(2.0, 1)], zone="europe") == 16.0


    def test_free_domestic_shipping_above_100():
        assert estimate([(2.0, 1)], order_total=120) == 0.0


    def test_too_heavy():
        with pytest.raises(TooHeavy):
            estimate([(30.0, 1)])


    def test_estimate_is_stable_under_load():
        assert random.random() < 0.5  # a flaky test, as found in the wild
    """
)
MONEY = _d(
    '''
    """Money helpers: rounding half up to cents, and formatting."""

    from decimal import ROUND_HALF_UP, Decimal


    def to_cents(value):
        """Round a price to cents, half up (0.125 -> 0.13), as accountants expect."""
        return float(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


    def line_total(price, quantity):
        return to_cents(price * quantity)


    def format_money(value, currency="EUR"):
        """'12.50 EUR' style text for receipts."""
        return f"{to_cents(value):.2f} {currency}"


    def split_evenly(value, parts):
        """Split an amount into `parts` cent amounts that add up exactly."""
        cents = int(round(to_cents(value) * 100))
        base, extra = divmod(cents, parts)
        return [(base + (1 if i < extra else 0)) / 100 for i in range(parts)]
    '''
)
MONEY_TESTS = _d(
    """
    from shop.cart import Cart


    def test_total_of_many_lines():
        cart = Cart()
        for _ in range(3):
            cart.add("a", 0.1)
        assert cart.total() == 0.3


    def test_total_with_quantities():
        cart = Cart()
        cart.add("a", 1.25, 4)
        assert cart.total() == 5.0
    """
)
README = "# shop\n\nA tiny shop library.\n"


def _git(repo: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def _commit(repo: Path, files: dict[str, str], message: str, day: int) -> None:
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    _git(repo, "add", "--all")
    date = f"2024-03-{day:02d}T12:00:00+00:00"
    _git(repo, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", message, "--date", date)


def build_shop_repo(repo: Path) -> Path:
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _commit(
        repo,
        {"shop/__init__.py": "", "shop/cart.py": CART, "tests/test_cart.py": CART_TESTS, "README.md": README},
        "Start the shop library",
        1,
    )
    _commit(
        repo,
        {
            "shop/discounts.py": DISCOUNTS,
            "shop/cart.py": CART_WITH_DISCOUNTS,
            "tests/test_discounts.py": DISCOUNT_TESTS,
        },
        "Add discount codes to the cart (#12)\n\nCustomers can enter a code at checkout: percentage or fixed\n"
        "amount, some with a minimum order total. Unknown codes are refused.\n\nAdds tests.\n\n"
        "Signed-off-by: Dev <dev@example.com>\n",
        2,
    )
    _commit(repo, {"README.md": README + "\nUse `Cart.add` then `Cart.total`.\n"}, "Explain the cart in the README", 3)
    _commit(
        repo,
        {"tests/test_cart.py": CART_TESTS + "\n\ndef test_new_cart_has_no_lines():\n    assert Cart().lines == []\n"},
        "Cover empty carts",
        4,
    )
    _commit(
        repo,
        {
            "shop/shipping.py": SHIPPING,
            "shop/__init__.py": '"""Shop."""\n\nfrom shop.shipping import estimate\n\n__all__ = ["estimate"]\n',
            "tests/test_shipping.py": SHIPPING_TESTS,
        },
        "feat(shipping): estimate shipping by weight\n\n"
        "Zones domestic, europe and world; free domestic shipping above 100.\n",
        5,
    )
    _commit(
        repo,
        {"shop/money.py": MONEY, "tests/test_money.py": MONEY_TESTS, "shop/cart.py": CART_WITH_DISCOUNTS.replace(
            '"""A shopping cart."""\n', '"""A shopping cart."""\n\nfrom shop.money import to_cents\n'
        ).replace("return round(sum(", "return to_cents(sum(").replace("), 2)\n", "))\n", 1)},
        "Move money rounding to a helper",
        6,
    )  # fmt: skip
    cart = (repo / "shop/cart.py").read_text()
    _commit(
        repo,
        {
            "shop/cart.py": cart.replace(
                "    def add(self, sku, price, quantity=1):\n",
                "    def add(self, sku, price, quantity=1):\n        if quantity < 0:\n"
                '            raise ValueError("negative quantity")\n',
            ),
            "tests/test_cart.py": (repo / "tests/test_cart.py").read_text()
            + "\n\ndef test_negative_quantity():\n    import pytest\n\n    with pytest.raises(ValueError):\n"
            '        Cart().add("a", 1.0, -1)\n',
        },
        "Reject negative quantities",
        7,
    )
    return repo
