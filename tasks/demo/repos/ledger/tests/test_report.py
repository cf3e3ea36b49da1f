from ledger import report


def test_format_amount():
    assert report.format_amount(1234.5) == "1,234.50"
    assert report.format_amount(-3) == "-3.00"


def test_balance_report_sections(book):
    text = report.balance_report(book)
    lines = text.splitlines()
    assert lines[0] == "Assets"
    assert any(line.split() == ["checking", "2,700.00"] for line in lines)
    assert any(line.split() == ["Total", "assets", "2,760.00"] for line in lines)
    assert "Liabilities" in lines and "Expenses" in lines


def test_income_statement(book):
    lines = report.income_statement(book).splitlines()
    assert lines[-1].split() == ["Net", "income", "1,700.00"]
    assert any(line.split() == ["Total", "expenses", "1,300.00"] for line in lines)


def test_register_running_balance(book):
    lines = report.register(book, "checking").splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("2024-01-01  Opening balance")
    assert lines[-1].split()[-2:] == ["-100.00", "2,700.00"]
