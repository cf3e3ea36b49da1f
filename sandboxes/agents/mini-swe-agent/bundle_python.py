"""Bundle the interpreter running this script into DEST, so that an agent runs on any task image.

The agent is installed once FROM evalkit's base (Debian bookworm, Python 3.11) and copied onto
every task image, whose own Python may be 3.9 (bullseye), 3.13 (trixie) or missing: the agent's
compiled packages are built for 3.11, and bookworm's python3.11 needs bookworm's glibc. So DEST
gets this interpreter, its standard library and every shared library it and the packages in
SCAN... load (glibc and its loader too), and `DEST/bin/python3`, a launcher that starts the
interpreter through the bundled loader with only the bundled libraries. Nothing is put in the
environment: the commands the agent runs (its shell, the task's tests) run on the image's system
as it is. Python finds its standard library from the launcher's place (DEST/lib/pythonX.Y).

usage: python3 bundle_python.py DEST [SCAN ...]
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

# parts of the standard library an agent never imports (tests, GUIs, the installer's wheels)
UNUSED = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "*-packages")
LOADER = "ld-linux-x86-64.so.2"
_LDD_LINE = re.compile(r"^\s*(?:(\S+) => )?(/\S+) \(0x[0-9a-f]+\)$")

LAUNCHER = """#!/bin/sh
# Python {version} bundled with its own loader and libraries (bundle_python.py): the task image's
# system may have another Python and an older glibc. --argv0 makes sys.executable this launcher.
root=$(dirname "$(dirname "$(readlink -f "$0")")")
exec "$root/so/{loader}" --library-path "$root/so" --argv0 "$root/bin/python3" "$root/bin/python{version}" "$@"
"""


def shared_libraries(files: list[Path]) -> dict[str, Path]:
    """name → path of every shared library the ELF `files` load (their dependencies included)."""
    found: dict[str, Path] = {}
    for path in files:
        result = subprocess.run(["ldd", str(path)], capture_output=True, text=True)
        for line in result.stdout.splitlines():
            match = _LDD_LINE.match(line)
            if match:
                target = Path(match[2])
                found.setdefault(Path(match[1] or target).name, target)
    return found


def elf_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.so*") if p.is_file() and _magic(p) == b"\x7fELF"]


def _magic(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(4)


def main(dest: Path, scan: list[Path]) -> None:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stdlib = Path(sysconfig.get_path("stdlib"))
    shutil.copytree(stdlib, dest / "lib" / f"python{version}", symlinks=False, ignore_dangling_symlinks=True,
                    ignore=shutil.ignore_patterns(*UNUSED))  # fmt: skip
    binary = dest / "bin" / f"python{version}"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(Path(sys.executable).resolve(), binary)
    ours = [dest, *scan]
    libraries = shared_libraries([binary, *elf_files(dest), *(f for folder in scan for f in elf_files(folder))])
    (dest / "so").mkdir()
    for name, path in sorted(libraries.items()):
        if not any(path.resolve().is_relative_to(folder) for folder in ours):  # a wheel's own libs stay beside it
            shutil.copy2(path.resolve(), dest / "so" / name)
    if not (dest / "so" / LOADER).is_file():
        sys.exit(f"bundle_python: ldd named no {LOADER}; this script knows x86-64 glibc only")
    launcher = dest / "bin" / "python3"
    launcher.write_text(LAUNCHER.format(version=version, loader=LOADER))
    launcher.chmod(0o755)
    for folder in (dest / "bin", dest / "so"):
        for path in folder.iterdir():
            os.chmod(path, 0o755)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
