import pytest

from kvstore import Store
from kvstore.cli import main


@pytest.fixture
def db(tmp_path):
    return tmp_path / "data.log"


@pytest.fixture
def store(db):
    s = Store(db)
    yield s
    s.close()


@pytest.fixture
def cli(db, capsys):
    """Run the CLI in-process against ``db``; returns (exit_code, stdout, stderr)."""

    def run(*argv):
        try:
            code = main(["--db", str(db), *map(str, argv)])
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
