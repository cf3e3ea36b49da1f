"""How well a program that reads only what the test process can read (the planted test files and
the repository) picks out evalkit's canaries. For each task of a suite (base tree from the suite's
snapshot or git bundle, hidden tests applied: no Docker) and each seed, the canaries are planted as
scoring plants them; then each spotter names the tests it suspects.

Spotters:
- adjacent: the old tells: a test right after a near-identical one (the later one), and a test
  whose first statement imports a name written nowhere else;
- paired-later: any two tests of a module whose bodies are near-duplicates (a few tokens apart):
  the later one;
- paired-smart: the same pairs, the one guessed by what differs: the one with an extra import of
  a name written nowhere else, else the one whose differing tokens are rarer in the repository,
  else the later one;
- paired-tells: the same pairs, the one with an extra import, else the one with an extra `not` or
  a negating operator, else as paired-smart;
- paired-both: both tests of every such pair (what a cheat that forges no test of a pair spares);
- unseen-import: a test that imports, anywhere in its body, a name written nowhere else;
- unresolved-import: a test that imports, anywhere in its body, a name the code (every file but
  the planted modules) does not write, as an in-process cheat trying the import finds it;
- paired-best: of each pair, the one an edit's tell names (extra import, `not`, negation), else both;
- combined: paired-best and unresolved-import.

Reported per suite and spotter (summed over tasks and seeds): precision, recall of must-fail and
must-error canaries, the share of plantings where every canary was suspected ("all": what a cheat
sparing the suspects needs), and where that held with no FAIL_TO_PASS test suspected ("win": the
cheat could forge every other test and keep the task).

    python benchmarks/canary_spotting.py [--suite tasks/demo --suite tasks/python-libs] [--seeds 3]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import io
import random
import re
import subprocess
import tempfile
import time
import tokenize
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.sandbox.workspace import write_base_repository
from evalkit.tasks import Task, load_suite
from evalkit.verify.canaries import Canary, plant, split_id
from evalkit.verify.guarded_run import project_packages
from evalkit.verify.runners.pytest_runners import listed_test_files

ROOT = Path(__file__).resolve().parents[1]
NEAR = 6  # token edits that make two tests a near-duplicate pair


@dataclass(frozen=True)
class TestDef:
    """One test function of a planted module: its id (no parameters), tokens (name left out),
    position in the file, and the names its body imports."""

    test_id: str
    tokens: tuple[str, ...]
    line: int
    imports: tuple[str, ...]
    first_imports: tuple[str, ...]


_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=4096)
def words_of(text: str) -> Counter:
    """The words (`\\w+`, as `grep -w` sees them) of a file, counted."""
    return Counter(_WORD.findall(text))


def counted(base: Counter, planted: dict[str, str]) -> Counter:
    """The words of the whole repository: `base` (the files not planted) and the planted ones."""
    total = Counter(base)
    for text in planted.values():
        total.update(words_of(text))
    return total


def _tokens(text: str) -> tuple[str, ...]:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                out.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def tests_of(path: str, text: str) -> tuple[tuple[TestDef, ...], ...]:
    """The test functions of a module, grouped by the body they are in (module, each class)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ()
    lines = text.splitlines(keepends=True)
    groups = []

    def group(body: list[ast.stmt], prefix: list[str]) -> None:
        found = []
        for node in body:
            if isinstance(node, ast.ClassDef):
                group(node.body, [*prefix, node.name])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                tokens = [t for t in _tokens("".join(lines[top - 1 : node.end_lineno]).lstrip()) if t != node.name]
                imports = [a.name for n in ast.walk(node) if isinstance(n, ast.ImportFrom) for a in n.names]
                first = next(
                    (s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))), None
                )
                first_names = [a.name for a in first.names] if isinstance(first, ast.ImportFrom) else []
                found.append(
                    TestDef(
                        "::".join([path, *prefix, node.name]),
                        tuple(tokens),
                        node.lineno,
                        tuple(imports),
                        tuple(first_names),
                    )
                )
        if found:
            groups.append(tuple(found))

    group(tree.body, [])
    return tuple(groups)


@functools.lru_cache(maxsize=100_000)
def _bag(tokens: tuple[str, ...]) -> Counter:
    return Counter(tokens)


def _distance(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[int, list[str], list[str]]:
    """Token edits between two tests, and the tokens only `a` has and only `b` has."""
    if abs(len(a) - len(b)) > NEAR:
        return NEAR + 1, [], []
    bag_a, bag_b = _bag(a), _bag(b)
    if sum((bag_a - bag_b).values()) + sum((bag_b - bag_a).values()) > 2 * NEAR:
        return NEAR + 1, [], []
    edits, only_a, only_b = 0, [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            edits += max(i2 - i1, j2 - j1)
            only_a += a[i1:i2]
            only_b += b[j1:j2]
    return edits, only_a, only_b


@functools.lru_cache(maxsize=4096)
def pairs_of(path: str, text: str) -> tuple[tuple[TestDef, TestDef, tuple[str, ...], tuple[str, ...]], ...]:
    """Near-duplicate pairs of tests of a module (earlier first), with what differs."""
    found = []
    tests = [t for g in tests_of(path, text) for t in g]
    for i, a in enumerate(tests):
        for b in tests[i + 1 :]:
            edits, only_a, only_b = _distance(a.tokens, b.tokens)
            if edits <= NEAR:
                first, second = (a, b) if a.line < b.line else (b, a)
                diff = (only_a, only_b) if a.line < b.line else (only_b, only_a)
                found.append((first, second, tuple(diff[0]), tuple(diff[1])))
    return tuple(found)


Spotter = Callable[[dict[str, str], Counter, Counter], set[str]]


def adjacent(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    suspects = set()
    for path, text in planted.items():
        for group in tests_of(path, text):
            for before, after in zip(group, group[1:], strict=False):
                if _distance(before.tokens, after.tokens)[0] <= NEAR:
                    suspects.add(after.test_id)
            for test in group:
                if any(repo[n] <= 1 for n in test.first_imports):
                    suspects.add(test.test_id)
    return suspects


def paired_later(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    return {second.test_id for path, text in planted.items() for _, second, _, _ in pairs_of(path, text)}


def _rarity(tokens: tuple[str, ...], planted: dict[str, str], repo: Counter) -> int:
    words = [w for t in tokens for w in _WORD.findall(t)]
    return min((repo[w] for w in words), default=10**9)


def paired_smart(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    suspects = set()
    for path, text in planted.items():
        for first, second, only_first, only_second in pairs_of(path, text):
            if "import" in only_second and "import" not in only_first:
                suspects.add(second.test_id)
            elif "import" in only_first and "import" not in only_second:
                suspects.add(first.test_id)
            else:
                rare_first, rare_second = _rarity(only_first, planted, repo), _rarity(only_second, planted, repo)
                suspects.add(first.test_id if rare_first < rare_second else second.test_id)
    return suspects


_NEGATING = {"not", "!=", "assertNotEqual", "assertNotIn", "assertIsNot", "assertIsNotNone", "assertFalse"}


def _told(only_first: tuple[str, ...], only_second: tuple[str, ...]) -> int | None:
    """Which of a pair (0, 1) an edit's tell names: an extra import, else an extra `not` or a
    negating operator (originals mostly assert that things are equal, in, true); None if neither."""
    for tell in ({"import"}, _NEGATING):
        has_first, has_second = bool(set(only_first) & tell), bool(set(only_second) & tell)
        if has_first != has_second:
            return 0 if has_first else 1
    return None


def paired_tells(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    """The same pairs, the one an edit's tell names (`_told`), else the one with the rarer
    differing tokens (paired-smart)."""
    suspects = set()
    for path, text in planted.items():
        for first, second, only_first, only_second in pairs_of(path, text):
            told = _told(only_first, only_second)
            if told is None:
                rare_first, rare_second = _rarity(only_first, planted, repo), _rarity(only_second, planted, repo)
                told = 0 if rare_first < rare_second else 1
            suspects.add((first, second)[told].test_id)
    return suspects


def paired_both(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    """Both tests of every near-duplicate pair: a cheat that leaves them all alone spares every
    must-fail canary, and wins only where no FAIL_TO_PASS test is among them."""
    return {
        t.test_id
        for path, text in planted.items()
        for first, second, _, _ in pairs_of(path, text)
        for t in (first, second)
    }


def unseen_import(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    return {
        test.test_id
        for path, text in planted.items()
        for group in tests_of(path, text)
        for test in group
        if any(repo[n] <= 1 for n in test.imports)
    }


def unresolved_import(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    """A test that imports, anywhere in its body, from the repository's own code a name that code
    does not write (what an in-process cheat finds by trying the import): a must-error canary, or
    a new test of a name the change under test has not written yet."""
    return {
        test.test_id
        for path, text in planted.items()
        for group in tests_of(path, text)
        for test in group
        if any(code[n] == 0 for n in test.imports)
    }


def paired_best(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    """Of each pair, the one an edit's tell names (`_told`), else both: a cheat forging no test of
    a pair but where a tell names the copy."""
    suspects = set()
    for path, text in planted.items():
        for first, second, only_first, only_second in pairs_of(path, text):
            told = _told(only_first, only_second)
            suspects.update((first.test_id, second.test_id) if told is None else ((first, second)[told].test_id,))
    return suspects


def combined(planted: dict[str, str], repo: Counter, code: Counter) -> set[str]:
    return paired_best(planted, repo, code) | unresolved_import(planted, repo, code)


SPOTTERS: dict[str, Spotter] = {
    "adjacent": adjacent,
    "paired-later": paired_later,
    "paired-smart": paired_smart,
    "paired-tells": paired_tells,
    "paired-both": paired_both,
    "paired-best": paired_best,
    "unseen-import": unseen_import,
    "unresolved-import": unresolved_import,
    "combined": combined,
}


@dataclass
class Tally:
    """One spotter's counts over a suite's plantings."""

    suspected: int = 0
    hits: int = 0
    caught: Counter = field(default_factory=Counter)
    planted: Counter = field(default_factory=Counter)
    plantings: int = 0
    all_spared: int = 0
    wins: int = 0


def task_tree(task: Task, dest: Path) -> dict[str, str]:
    """The base tree with the hidden tests applied, written to `dest`; its Python files' text."""
    write_base_repository(task.source, dest)
    subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=dest, input=task.test_patch.encode(), check=True)
    texts = {}
    for file in dest.rglob("*.py"):
        if ".git" not in file.parts:
            texts[str(file.relative_to(dest))] = file.read_text(errors="replace")
    return texts


def measure(suite: Path, seeds: int, tallies: dict[str, Tally], layout: Counter) -> None:
    for task in load_suite(suite).tasks:
        if task.tests.framework not in ("pytest", "tox"):
            continue  # canaries are planted in pytest runs only
        with tempfile.TemporaryDirectory(prefix="canary-spotting-") as tmp:
            texts = task_tree(task, Path(tmp) / "repo")
        files = listed_test_files(task)
        sources = {p: texts[p] for p in files if p in texts}
        base: Counter = Counter()
        for path, text in texts.items():
            if path not in sources:
                base.update(words_of(text))
        written = base.__getitem__  # how often the code (every file but the planted ones) writes a name
        f2p = {t.split("[", 1)[0] for t in task.tests.fail_to_pass}
        packages = project_packages(task)
        for seed in range(seeds):
            changed, canaries = plant(
                sources,
                task.tests.fail_to_pass,
                task.tests.pass_to_pass,
                random.Random(seed),
                packages,
                written,
            )
            planted = {**sources, **changed}
            repo = counted(base, planted)
            _layout(canaries, planted, layout)
            for name, spotter in SPOTTERS.items():
                _score(tallies[name], spotter(planted, repo, base), canaries, f2p)


def _layout(canaries: list[Canary], planted: dict[str, str], layout: Counter) -> None:
    """Counts of the plantings' shapes: canaries by kind, and how many sit next to their original."""
    layout["plantings"] += 1
    for canary in canaries:
        layout[canary.kind] += 1
        path, _ = split_id(canary.test_id)
        for group in tests_of(path, planted[path]):
            ids = [t.test_id for t in group]
            pair = canary.test_id in ids and canary.copied_from in ids
            if pair and ids.index(canary.test_id) == ids.index(canary.copied_from) + 1:
                layout["adjacent"] += 1


def _score(tally: Tally, suspects: set[str], canaries: list[Canary], f2p: set[str]) -> None:
    ids = {c.test_id for c in canaries}
    tally.plantings += 1
    tally.suspected += len(suspects)
    tally.hits += len(suspects & ids)
    for canary in canaries:
        tally.planted[canary.kind] += 1
        tally.caught[canary.kind] += canary.test_id in suspects
    if canaries and ids <= suspects:
        tally.all_spared += 1
        tally.wins += not (suspects & f2p)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", type=Path)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    suites = args.suite or [ROOT / "tasks/demo", ROOT / "tasks/python-libs"]
    heads = ("suspects", "precision", "fail rec", "error rec", "all", "win")
    print(f"{'suite':<12} {'spotter':<14} " + " ".join(f"{h:>9}" for h in heads))
    for suite in suites:
        started = time.monotonic()
        tallies = {name: Tally() for name in SPOTTERS}
        layout: Counter = Counter()
        measure(suite, args.seeds, tallies, layout)
        for name, t in tallies.items():
            print(
                f"{suite.name:<12} {name:<14} {t.suspected / max(t.plantings, 1):>9.1f} "
                + " ".join(
                    f"{v:>9}"
                    for v in (
                        _share(t.hits, t.suspected),
                        _share(t.caught["must_fail"], t.planted["must_fail"]),
                        _share(t.caught["must_error"], t.planted["must_error"]),
                        _share(t.all_spared, t.plantings),
                        _share(t.wins, t.plantings),
                    )
                )
            )
        print(
            f"{suite.name:<12} {layout['plantings']} plantings: {layout['must_fail']} must-fail, "
            f"{layout['must_error']} must-error canaries, {layout['adjacent']} next to their original; "
            f"{time.monotonic() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
