"""The code-quality axis on real git diffs: the demo suite's reference changes, and a small repo
where each kind of litter is added on its own and must be counted exactly."""

from __future__ import annotations

import ast
import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from toy import diff_of, write_files

from evalkit.diffs import changed_paths, is_test_path
from evalkit.scoring import quality_lint
from evalkit.scoring.quality import DEFAULT_WEIGHTS, score_quality
from evalkit.scoring.quality_review import Touched
from evalkit.scoring.quality_structure import changed_functions

DEMO_TASK = "ledger-period-filter"
DEMO_FILE = "ledger/book.py"  # touched by the reference; its base has no print( and no `import os`

CORE = textwrap.dedent(
    """
    import sys


    def total(values):
        result = sum(
            values,
        )
        return result


    def mean(values):
        return total(values) / len(values)


    def spread(values):
        return max(values) - min(values)


    def describe(values):
        return f"{mean(values)} +- {spread(values)}"
    """
).lstrip()
MEDIAN = (  # 8 added lines
    "\n\ndef median(values):\n"
    "    ordered = sorted(values)\n"
    "    middle = len(ordered) // 2\n"
    "    if len(ordered) % 2:\n"
    "        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2\n"
)
BASE = {
    "pkg/__init__.py": "",
    "pkg/core.py": CORE,
    "pkg/cli.py": "from pkg.core import mean\n\n\ndef main(argv):\n    print(mean([float(a) for a in argv]))\n",
    "tests/test_core.py": "from pkg.core import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n",
    "poetry.lock": "# lock\n",
    "README.md": "# pkg\n",
}
AFTER_CORE = CORE + MEDIAN


def reader(root: Path):
    """`base_file` over a folder, as the scorer's callers build it."""
    return lambda path: (root / path).read_text() if (root / path).is_file() else None


def small_repo(root: Path):
    """The small repo's base tree in `root`, its `base_file`, and the reference change (adds `median`)."""
    base = write_files(root / "base", BASE)
    return base, reader(base), diff_of(base, {"pkg/core.py": AFTER_CORE})


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return small_repo(tmp_path_factory.mktemp("repo"))


def score(repo, edits: dict[str, str | None], **kwargs):
    base, base_file, reference = repo
    return score_quality(diff_of(base, edits), reference, base_file, **kwargs)


def core_with(*extra: str) -> str:
    return AFTER_CORE + "".join(extra)


@pytest.fixture(scope="module")
def demo(demo_suite, tmp_path_factory):
    """One demo task, a copy of its base tree (diffs are taken next to it, never in tasks/), and
    its reference change as full after-texts, so that a test can add to it and take a real diff."""
    task = next(t for t in demo_suite.tasks if t.id == DEMO_TASK)
    root = tmp_path_factory.mktemp("demo")
    base, after = root / "base", root / "reference"
    for copy in (base, after):
        subprocess.run(["cp", "-r", str(task.source.snapshot), str(copy)], check=True)
    subprocess.run(["git", "apply", "-"], cwd=after, input=task.patch, text=True, check=True, capture_output=True)
    return task, base, {path: (after / path).read_text() for path in changed_paths(task.patch)}


def before_first_return(text: str, statement: str, base: str | None = None) -> str:
    """`statement` inserted before the first `return name` line, at its indentation; with `base`,
    at the start of the first function the change from `base` alters (an edit elsewhere is out of
    the task's scope too), `{name}` its first parameter."""
    if base is not None:
        changed = {name.split(".")[-1] for _, name in changed_functions([Touched("f.py", base, text, frozenset())])}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name in changed and node.args.args:
                body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
                lines = text.splitlines(keepends=True)
                first = lines[body[0].lineno - 1]
                indent = first[: len(first) - len(first.lstrip())]
                inserted = f"{indent}{statement.format(name=node.args.args[0].arg)}\n"
                return "".join([*lines[: body[0].lineno - 1], inserted, *lines[body[0].lineno - 1 :]])
        raise AssertionError("no function the change alters to anchor the edit")
    match = re.search(r"^( +)return (\w+)$", text, flags=re.M)
    assert match, "no `return name` line to anchor the edit"
    return text[: match.start()] + f"{match.group(1)}{statement.format(name=match.group(2))}\n" + text[match.start() :]


def base_text(base: Path) -> str:
    return (base / DEMO_FILE).read_text()


# --- the demo suite -------------------------------------------------------------------------


def test_every_demo_reference_is_perfect_against_itself(demo_suite):
    for task in demo_suite.tasks:
        result = score_quality(task.patch, task.patch, reader(task.source.snapshot))
        assert result.score == 1.0, (task.id, result)
        assert result.parts == dict.fromkeys(DEFAULT_WEIGHTS, 1.0)
        assert (result.extra_files, result.missed_files, result.size_ratio) == ([], [], 1.0)
        assert result.reference_lines == result.changed_lines > 0
        assert result.note is None


def test_a_debug_print_in_a_file_without_prints_costs_hygiene(demo):
    task, base, reference = demo
    clean = score_quality(task.patch, task.patch, reader(base))
    with_print = before_first_return(reference[DEMO_FILE], 'print("debug", {name})', base_text(base))
    patch = diff_of(base, {**reference, DEMO_FILE: with_print})
    result = score_quality(patch, task.patch, reader(base))
    assert result.debug_prints == 1
    assert result.new_lint == {} and result.breakpoints == 0
    assert result.charged == {"hygiene": 0.2} and result.parts["hygiene"] == 0.6667
    assert result.score == clean.score - 0.2
    [finding] = result.findings
    assert (finding.part, finding.path) == ("hygiene", DEMO_FILE) and "debug print" in finding.what
    assert with_print.splitlines()[finding.line - 1].strip().startswith("print(")


def test_prints_in_a_file_that_already_prints_are_not_debugging(repo):
    cli = BASE["pkg/cli.py"] + '    print("done")\n'
    assert score(repo, {"pkg/core.py": AFTER_CORE, "pkg/cli.py": cli}).debug_prints == 0


def test_pprint_and_ic_count_even_where_prints_are_normal(repo):
    cli = BASE["pkg/cli.py"] + "    pprint(argv)\n    ic(argv)\n"
    assert score(repo, {"pkg/core.py": AFTER_CORE, "pkg/cli.py": cli}).debug_prints == 2


def test_a_breakpoint_is_counted(demo):
    task, base, reference = demo
    edited = before_first_return(reference[DEMO_FILE], "breakpoint()", base_text(base))
    patch = diff_of(base, {**reference, DEMO_FILE: edited})
    result = score_quality(patch, task.patch, reader(base))
    assert result.breakpoints == 1
    assert result.charged == {"hygiene": 0.2}


def test_pdb_imports_and_set_trace_are_counted_once_per_line(repo):
    result = score(repo, {"pkg/core.py": core_with("\n\nimport pdb; pdb.set_trace()\nimport ipdb\n")})
    assert result.breakpoints == 2


def test_an_unrelated_file_is_out_of_scope(demo):
    task, base, reference = demo
    unrelated = "ledger/errors.py"
    assert unrelated not in reference
    edits = {**reference, unrelated: (base / unrelated).read_text() + "\n\nSPARE = 1\n"}
    result = score_quality(diff_of(base, edits), task.patch, reader(base))
    assert result.extra_files == [unrelated]
    assert result.missed_files == []
    assert result.charged["scope"] == 0.2 and result.parts["scope"] == 0.6
    assert [f.path for f in result.findings if f.part == "scope"] == [unrelated]


def test_an_unused_import_is_new_lint(demo):
    task, base, reference = demo
    after = reference[DEMO_FILE]
    with_import = after.replace(
        "from __future__ import annotations\n", "from __future__ import annotations\nimport os\n", 1
    )
    assert with_import != after
    patch = diff_of(base, {**reference, DEMO_FILE: with_import})
    result = score_quality(patch, task.patch, reader(base))
    assert result.new_lint == {"F401": 1}
    assert result.charged == {"lint": 0.15} and result.parts["lint"] == 0.75
    assert [f.what.split()[0] for f in result.findings] == ["F401"]


# --- the small repo ---------------------------------------------------------------------------


def test_the_reference_against_itself(repo):
    result = score(repo, {"pkg/core.py": AFTER_CORE})
    assert result.score == 1.0
    assert result.size_ratio == 1.0 and result.changed_lines == result.reference_lines == 8


def test_lint_already_in_the_base_is_not_charged(repo):
    # `import sys` is unused in the base already; a second unused one is the change's
    result = score(repo, {"pkg/core.py": "import sys\nimport json\n" + AFTER_CORE.removeprefix("import sys\n")})
    assert result.new_lint == {"F401": 1}


def test_a_broken_file_is_a_syntax_error_not_lint(repo):
    result = score(repo, {"pkg/core.py": core_with("\n\ndef broken(:\n    pass\n")})
    assert result.syntax_errors == ["pkg/core.py"]
    assert result.parts["syntax"] == 0.0
    assert result.new_lint == {}


def test_commented_out_code_is_litter_but_prose_is_not(repo):
    code = score(repo, {"pkg/core.py": core_with("\n# result = total(values)\n# return result / 2\n")})
    prose = score(
        repo, {"pkg/core.py": core_with("\n# The median of an even count is the mean\n# of the two middle values.\n")}
    )
    words = score(repo, {"pkg/core.py": core_with("\n# TODO: faster\n# Arrange\n")})
    one_line = score(repo, {"pkg/core.py": core_with("\n# return result / 2\n")})
    assert code.commented_code == 1 and code.charged == {"hygiene": 0.4}  # ruff's eradicate: a line each
    assert prose.charged == {} and one_line.charged == {"hygiene": 0.2}
    assert words.charged == {"markers": 0.15}  # the TODO; a bare word is prose


def test_a_whitespace_only_reindent_is_counted(repo):
    reindented = AFTER_CORE.replace("        values,\n", "            values,\n")
    result = score(repo, {"pkg/core.py": reindented})
    assert result.whitespace_only_hunks == 1
    assert result.charged == {"hygiene": 0.2}
    assert score(repo, {"pkg/core.py": AFTER_CORE}).whitespace_only_hunks == 0


def test_stray_files(repo):
    result = score(
        repo,
        {
            "pkg/core.py": AFTER_CORE,
            "scratch.py": "x = 1\n",
            "pkg/core.py.orig": CORE,
            "pkg/debug_median.py": "x = 1\n",
            "run.log": "ok\n",
            "tests/test_median.py": "def test_x():\n    pass\n",  # a test where tests live
            "pkg/stats.py": "x = 1\n",  # a real module, if out of scope
        },
    )
    assert result.stray_files == ["pkg/core.py.orig", "pkg/debug_median.py", "run.log", "scratch.py"]


def test_files_the_reference_adds_are_not_stray(tmp_path):
    base = tmp_path / "base"
    (base / "pkg").mkdir(parents=True)
    (base / "pkg" / "__init__.py").write_text("")
    reference = diff_of(base, {"tool.py": "x = 1\n"})
    assert score_quality(reference, reference, reader(base)).stray_files == []


def test_editing_a_lock_file_is_forbidden(repo):
    result = score(repo, {"pkg/core.py": AFTER_CORE, "poetry.lock": "# lock\n# changed\n"})
    assert result.forbidden_edits == ["poetry.lock"]
    assert result.extra_files == ["poetry.lock"]
    custom = score(repo, {"pkg/core.py": AFTER_CORE, "README.md": "A package. Not Python.\n"}, forbidden=("*.md",))
    assert custom.forbidden_edits == ["README.md"]
    assert custom.syntax_errors == []  # only .py files are parsed


def test_a_forbidden_file_the_reference_edits_is_allowed(repo):
    base, base_file, _ = repo
    edits = {"pkg/core.py": AFTER_CORE, "poetry.lock": "# lock\n# median\n"}
    reference = diff_of(base, edits)
    assert score_quality(reference, reference, base_file).forbidden_edits == []


def test_size_outside_half_to_double_the_reference_costs(repo):
    copies = "".join(MEDIAN.replace("median", f"median{i}") for i in range(2, 5))
    result = score(repo, {"pkg/core.py": core_with(copies)})
    assert result.size_ratio == 4.0
    assert result.parts["size"] == 0.5


def test_test_files_count_neither_in_scope_nor_in_size(repo):
    tests = BASE["tests/test_core.py"] + "\n\ndef test_more():\n    assert mean([2]) == 2\n"
    result = score(repo, {"pkg/core.py": AFTER_CORE, "tests/test_core.py": tests, "tests/test_new.py": "x = 1\n"})
    assert (result.extra_files, result.stray_files, result.size_ratio) == ([], [], 1.0)
    assert result.score == 1.0


def test_quality_knows_test_files_by_the_rule_gather_and_integrity_use(repo):
    # `testing/` is a test folder to gathering (diffs.DEFAULT_TEST_GLOBS); quality agrees
    result = score(repo, {"pkg/core.py": AFTER_CORE, "testing/helpers.py": "def make():\n    return [1]\n"})
    assert (result.extra_files, result.size_ratio, result.score) == ([], 1.0, 1.0)
    assert is_test_path("testing/helpers.py")


def test_missing_a_reference_file_costs_scope(repo):
    base, base_file, _ = repo
    reference = diff_of(base, {"pkg/core.py": AFTER_CORE, "pkg/cli.py": BASE["pkg/cli.py"] + "    return 0\n"})
    result = score_quality(diff_of(base, {"pkg/core.py": AFTER_CORE}), reference, base_file)
    assert result.missed_files == ["pkg/cli.py"]
    assert result.charged == {"scope": 0.1}  # 0.2 x half the reference's files


def committed_copy(base: Path, work: Path) -> list[str]:
    """`base` copied to `work` as a git repository with one commit; returns the git command to use
    there (for what `diff_of` cannot express: binary files, renames)."""
    subprocess.run(["cp", "-r", str(base), str(work)], check=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *command], cwd=work, check=True, capture_output=True)
    return git


def test_deletions_and_binary_files_are_scored(repo, tmp_path):
    base, base_file, reference = repo
    work = tmp_path / "binary"
    git = committed_copy(base, work)
    (work / "pkg" / "core.py").write_text(AFTER_CORE)
    (work / "pkg" / "logo.png").write_bytes(b"\x89PNG\x00\x01\x02\xff")
    (work / "pkg" / "cli.py").unlink()
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    patch = subprocess.run([*git, "diff", "--cached", "--binary"], cwd=work, check=True, capture_output=True).stdout
    result = score_quality(patch.decode(), reference, base_file)
    assert result.note is None and result.parts["lint"] == 1.0 and result.syntax_errors == []
    assert result.extra_files == ["pkg/cli.py", "pkg/logo.png"]


def test_a_pure_rename_is_scored(repo, tmp_path):
    base, base_file, reference = repo
    work = tmp_path / "rename"
    git = committed_copy(base, work)
    subprocess.run([*git, "mv", "pkg/cli.py", "pkg/main.py"], cwd=work, check=True)
    patch = subprocess.run(
        [*git, "diff", "--cached", "-M"], cwd=work, check=True, capture_output=True, text=True
    ).stdout
    assert "rename from pkg/cli.py" in patch
    result = score_quality(patch, reference, base_file)
    assert result.note is None and result.extra_files == ["pkg/main.py"] and result.missed_files == ["pkg/core.py"]
    assert (result.parts["lint"], result.parts["syntax"], result.parts["hygiene"]) == (1.0, 1.0, 1.0)


def test_an_empty_patch_scores_zero(repo):
    _, base_file, reference = repo
    result = score_quality("", reference, base_file)
    assert (result.score, result.parts, result.note) == (0.0, {}, "empty patch")
    assert result.reference_lines == 8


def test_a_patch_that_does_not_apply_scores_zero(repo, tmp_path):
    _, base_file, reference = repo
    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "core.py").write_text("def something_else():\n    return 1\n")
    stale = diff_of(other, {"pkg/core.py": "def something_else():\n    return 2\n"})
    for patch in (stale, "this is not a diff\n", "--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-only one line\n"):
        result = score_quality(patch, reference, base_file)
        assert result.score == 0.0 and result.parts == {}
        assert "does not apply" in result.note


def test_paths_outside_the_repository_are_refused(repo):
    _, base_file, reference = repo
    patch = "--- a/../outside.py\n+++ b/../outside.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    allowed = set(changed_paths(reference))  # the reference's own files are read for its findings
    result = score_quality(patch, reference, lambda path: base_file(path) if path in allowed else pytest.fail(path))
    assert result.score == 0.0 and "outside the repository" in result.note


def test_without_ruff_its_parts_are_skipped_and_said_so(repo, monkeypatch):
    monkeypatch.setattr(quality_lint, "ruff_command", lambda: None)
    result = score(repo, {"pkg/core.py": "import json\n" + AFTER_CORE})
    assert not {"lint", "markers", "readability"} & set(result.parts) and result.new_lint == {}
    assert "ruff not available" in result.note
    assert result.score == 1.0


def test_custom_weights_are_merged_with_the_defaults_and_checked(repo):
    broken = {"pkg/core.py": core_with("\n\ndef broken(:\n    pass\n")}
    only_syntax = score(repo, broken, weights=dict.fromkeys(DEFAULT_WEIGHTS, 0.0) | {"syntax": 1.0})
    assert only_syntax.score == 0.0 and only_syntax.weights["syntax"] == 1.0
    assert score(repo, broken, weights={"syntax": 0.0}).score == 1.0
    with pytest.raises(ValueError, match="unknown"):
        score(repo, broken, weights={"style": 1.0})


def test_prints_in_a_file_where_the_reference_prints_too_are_not_debugging(tmp_path):
    from toy import BASE_FILES, diff_of, write_toy_suite

    suite = write_toy_suite(tmp_path)
    snapshot = next(p for p in suite.rglob("calc") if p.is_dir()).parent
    script = "from calc import add\n\nprint(add(1, 2))\nprint('done')\n"
    reference = diff_of(snapshot, {"tools/report.py": script})
    base_file = lambda path: (snapshot / path).read_text() if (snapshot / path).exists() else None  # noqa: E731
    assert score_quality(reference, reference, base_file).debug_prints == 0
    sloppy = diff_of(snapshot, {"calc/__init__.py": BASE_FILES["calc/__init__.py"] + "print('here')\n"})
    assert score_quality(sloppy, reference, base_file).debug_prints == 1
