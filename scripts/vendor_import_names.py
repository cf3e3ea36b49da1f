"""Vendor pipreqs' import-name → distribution table into evalkit (`evalkit/gather/import_names.txt`).

gather's environment repair installs the distribution of a module the tests could not import; most
are named as they are imported, and pipreqs (Apache-2.0) keeps the table of those that are not
(`yaml:PyYAML`, `dateutil:python_dateutil`). evalkit copies the data file once, with its provenance,
rather than depending on pipreqs and its dependencies at run time.

Usage: python scripts/vendor_import_names.py [--version 0.5.0] [--wheel PATH]
Without --wheel the wheel is fetched with `pip download --no-deps` into a temporary folder.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "pipreqs"
DEFAULT_VERSION = "0.5.0"
KNOWN_WHEEL_SHA256 = {"0.5.0": "0809f6217028e35785f80e90217e18043e58c99ba28175e28320f9074dd03874"}
DATA_PATH = "pipreqs/mapping"
OUT = Path(__file__).resolve().parent.parent / "evalkit" / "gather" / "import_names.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--wheel", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        wheel = args.wheel
        if wheel is None:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "-q",
                    "-d",
                    folder,
                    f"{PACKAGE}=={args.version}",
                ],
                check=True,
            )
            wheel = next(Path(folder).glob("*.whl"))
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        known = KNOWN_WHEEL_SHA256.get(args.version)
        if known and digest != known:
            print(f"{wheel.name}: sha256 {digest} is not the recorded {known}", file=sys.stderr)
            return 2
        data = zipfile.ZipFile(wheel).read(DATA_PATH).decode()
    header = (
        f"# import name:distribution, from {PACKAGE} {args.version} ({wheel.name}, sha256 {digest}), {DATA_PATH};\n"
        f"# Apache-2.0, https://github.com/bndr/pipreqs. Vendored {datetime.date.today()}"
        " by scripts/vendor_import_names.py.\n"
    )
    OUT.write_text(header + data)
    print(f"{OUT}: {len(data.splitlines())} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
