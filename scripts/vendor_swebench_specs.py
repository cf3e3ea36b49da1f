"""Vendor SWE-bench's per-version install specs for Python repositories into evalkit.

The tables (`MAP_REPO_VERSION_TO_SPECS_PY` and the requirement / environment.yml paths) live in
`swebench/harness/constants/python.py` up to swebench 4.1.0; the 5.x wheel no longer carries them.
evalkit copies them once, with their provenance, rather than depending on an old harness at run time.

Usage: python scripts/vendor_swebench_specs.py [--version 4.1.0] [--wheel PATH] [--out PATH]
Without --wheel the wheel is fetched with `pip download --no-deps` into a temporary folder. The module
is executed alone from the wheel (it imports nothing), never through the swebench package, so none of
swebench's dependencies are needed.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path

PACKAGE = "swebench"
DEFAULT_VERSION = "4.1.0"  # the last release whose wheel carries harness/constants/python.py
# wheels whose bytes were checked once by hand; the module is executed, so a known version must match
KNOWN_WHEEL_SHA256 = {"4.1.0": "1243776f720047cc9e20a427f7a52b75c13a07abda6154fb60fe77f82ec8af57"}
MODULE_PATH = "swebench/harness/constants/python.py"
TABLES = {  # JSON key → name in the module
    "specs": "MAP_REPO_VERSION_TO_SPECS_PY",
    "requirements_paths": "MAP_REPO_TO_REQS_PATHS",
    "environment_yml_paths": "MAP_REPO_TO_ENV_YML_PATHS",
}
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "evalkit" / "envs" / "swebench_specs.json"


def download_wheel(version: str, folder: Path) -> Path:
    """The swebench wheel of `version`, fetched by pip (no dependencies) into `folder`."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={version}", "--no-deps", "--only-binary", ":all:",
         "-d", str(folder), "-q"],
        check=True,
    )  # fmt: skip
    wheels = sorted(folder.glob(f"{PACKAGE}-{version}-*.whl"))
    if not wheels:
        sys.exit(f"pip download left no {PACKAGE}-{version} wheel in {folder}")
    return wheels[0]


def load_module(wheel: Path, version: str) -> types.ModuleType:
    """The constants module executed in a fresh namespace, straight from the wheel's bytes."""
    expected = KNOWN_WHEEL_SHA256.get(version)
    if expected and hashlib.sha256(wheel.read_bytes()).hexdigest() != expected:
        sys.exit(f"{wheel.name}: sha256 differs from the {PACKAGE} {version} wheel checked before ({expected})")
    with zipfile.ZipFile(wheel) as archive:
        try:
            source = archive.read(MODULE_PATH).decode("utf-8")
        except KeyError:
            sys.exit(f"{wheel.name} has no {MODULE_PATH}: pick a swebench version <= {DEFAULT_VERSION}")
    module = types.ModuleType("vendored_swebench_constants_python")
    exec(compile(source, f"{wheel.name}/{MODULE_PATH}", "exec"), module.__dict__)
    return module


def vendored(wheel: Path, version: str) -> dict:
    """The JSON document: provenance first, then the tables as the module defines them."""
    module = load_module(wheel, version)
    with zipfile.ZipFile(wheel) as archive:
        module_sha256 = hashlib.sha256(archive.read(MODULE_PATH)).hexdigest()
    provenance = {
        "package": PACKAGE,
        "version": version,
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "module": MODULE_PATH,
        "module_sha256": module_sha256,
        "tables": dict(TABLES),
        "vendored_on": datetime.date.today().isoformat(),
        "generator": "scripts/vendor_swebench_specs.py",
    }
    tables = {key: getattr(module, name) for key, name in TABLES.items()}
    return {"provenance": provenance, **json.loads(json.dumps(tables))}  # JSON round trip: plain lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--wheel", type=Path, help="a wheel already downloaded (skips pip)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="swebench-wheel-") as folder:
        wheel = args.wheel or download_wheel(args.version, Path(folder))
        document = vendored(wheel, args.version)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    counts = {repo: len(versions) for repo, versions in document["specs"].items()}
    print(f"wrote {args.out}: {len(counts)} repositories, {sum(counts.values())} (repo, version) specs")
    print(f"from {document['provenance']['wheel']} sha256 {document['provenance']['wheel_sha256']}")


if __name__ == "__main__":
    main()
