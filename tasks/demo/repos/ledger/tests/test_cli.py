from ledger import storage


def test_init_creates_empty_ledger(tmp_path, cli):
    path = tmp_path / "new.json"
    code, out, _ = cli("-f", path, "init")
    assert code == 0
    assert "created" in out
    assert storage.load(path).accounts == []


def test_init_refuses_to_overwrite(ledger_file, cli):
    code, _, err = cli("-f", ledger_file, "init")
    assert code == 1
    assert "already exists" in err


def test_account_add_and_list(ledger_file, cli):
    code, _, _ = cli("-f", ledger_file, "account", "add", "savings", "--type", "asset")
    assert code == 0
    code, out, _ = cli("-f", ledger_file, "account", "list")
    assert any(line.split()[:2] == ["savings", "asset"] for line in out.splitlines())


def test_post_with_elided_amount(ledger_file, cli):
    code, out, _ = cli("-f", ledger_file, "post", "2024-03-01", "Lunch", "food=12.5", "cash")
    assert code == 0
    assert "#7" in out
    book = storage.load(ledger_file)
    assert book.balance("cash") == 47.5


def test_post_unbalanced_fails(ledger_file, cli):
    code, _, err = cli("-f", ledger_file, "post", "2024-03-01", "Lunch", "food=12", "cash=-10")
    assert code == 1
    assert "does not balance" in err
    assert len(storage.load(ledger_file).transactions) == 6


def test_post_invalid_date(ledger_file, cli):
    code, _, _ = cli("-f", ledger_file, "post", "2024-13-01", "Lunch", "food=1", "cash")
    assert code == 2


def test_balance_single_account(ledger_file, cli):
    code, out, _ = cli("-f", ledger_file, "balance", "checking")
    assert code == 0
    assert out.split() == ["checking", "2,700.00"]


def test_balance_unknown_account(ledger_file, cli):
    code, _, err = cli("-f", ledger_file, "balance", "wallet")
    assert code == 1
    assert "unknown account: wallet" in err


def test_report_income(ledger_file, cli):
    code, out, _ = cli("-f", ledger_file, "report", "income")
    assert code == 0
    assert out.splitlines()[-1].split() == ["Net", "income", "1,700.00"]


def test_register(ledger_file, cli):
    code, out, _ = cli("-f", ledger_file, "register", "food")
    assert code == 0
    assert len(out.splitlines()) == 2


def test_missing_ledger_file(tmp_path, cli):
    code, _, err = cli("-f", tmp_path / "none.json", "balance")
    assert code == 1
    assert "ledger init" in err
