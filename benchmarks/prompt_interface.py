"""Prompt length and underspecified share: the demo suite (its hand-written prompts, judged against
the interface its tests need) and the suites the gather tests gather (tests/shop_repo.py and
tests/stock_repo.py; every candidate that passes screening, prompt made as `evalkit gather` makes
it). No Docker: validation is not run, so a candidate here may still fail it.

    .venv/bin/python benchmarks/prompt_interface.py
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from shop_repo import build_shop_repo  # noqa: E402
from stock_repo import build_stock_repo  # noqa: E402

from evalkit.diffs import DEFAULT_TEST_GLOBS, changed_paths, patched_text  # noqa: E402
from evalkit.gather.history import SizeLimits, commits, screen, split_commit  # noqa: E402
from evalkit.gather.interface import Interface, extract_interface, underspecified  # noqa: E402
from evalkit.gather.prompts import prompt_from_message  # noqa: E402
from evalkit.gather.task_prompt import task_prompt  # noqa: E402
from evalkit.gather.used_by_tests import used_by_tests  # noqa: E402
from evalkit.tasks import load_suite  # noqa: E402


def folder_search(folder: Path):
    text = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*.py"))

    def search(words: list[str], whole: bool) -> set[str]:
        return {w for w in words if (re.search(rf"\b{re.escape(w)}\b", text) if whole else w in text)}

    return search


def demo_rows() -> list[tuple[str, int, list[str], list[str]]]:
    rows = []
    for task in load_suite(ROOT / "tasks" / "demo").tasks:
        base = Path(task.source.snapshot)

        def texts(diff: str, base: Path = base) -> dict:
            found = {}
            for path in changed_paths(diff):
                if path.endswith(".py"):
                    before = (base / path).read_text() if (base / path).exists() else None
                    found[path] = (before, patched_text(before, diff, path))
            return found

        interface = extract_interface(
            texts(task.patch), used_by_tests(texts(task.test_patch)), task.patch, folder_search(base)
        )
        unsaid = underspecified(Interface(missing=interface.needed), task.prompt)  # with no interface section
        rows.append((task.id, len(task.prompt), underspecified(interface, task.prompt), unsaid))
    return rows


def gathered_rows(repo: Path, min_lines: int) -> list[tuple[str, int, int, list[str]]]:
    rows = []
    for commit in commits(repo):
        parts = split_commit(repo, commit, DEFAULT_TEST_GLOBS)
        if isinstance(screen(commit, *parts, SizeLimits(min_lines=min_lines, min_files=1)), str):
            continue
        made = task_prompt(repo, commit.parent, commit.sha, commit.message, parts)
        old = len(prompt_from_message(commit.message))
        rows.append((commit.message.splitlines()[0][:40], old, len(made.prompt), made.underspecified))
    return rows


def main() -> None:
    demo = demo_rows()
    print(f"demo suite: {len(demo)} tasks, median prompt {statistics.median(r[1] for r in demo)} chars")
    vague = [r for r in demo if r[2]]
    print(f"  underspecified with an interface section: {len(vague)}/{len(demo)}")
    unsaid = [r for r in demo if r[3]]
    print(
        f"  new names the tests use that the hand-written prompt does not say: {len(unsaid)}/{len(demo)} tasks: "
        + "; ".join(f"{r[0]}: {', '.join(r[3])}" for r in unsaid)
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, repo, min_lines in (
            ("shop", build_shop_repo(Path(tmp) / "shop"), 20),
            ("stock", build_stock_repo(Path(tmp) / "stock"), 1),
        ):
            rows = gathered_rows(repo, min_lines)
            print(
                f"{name}: {len(rows)} screened candidates, median prompt {statistics.median(r[2] for r in rows)} chars "
                f"(subject-and-body prompt before: {statistics.median(r[1] for r in rows)}), "
                f"underspecified {sum(bool(r[3]) for r in rows)}/{len(rows)}"
            )
            for subject, old, new, names in rows:
                print(f"  {subject:40} {old:4} → {new:4}" + (f"  underspecified: {', '.join(names)}" if names else ""))


if __name__ == "__main__":
    main()
