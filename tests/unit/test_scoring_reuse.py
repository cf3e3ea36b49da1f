"""What scoring a run shares between attempts changes no score: one QualityCache (ruff findings
remembered by file content, many files to a ruff run, a copied empty repository) scores a varied
set of changes exactly as each scored alone, in any order; and `score_run` takes the workspaces a
backend already built, once per task source, writing the same scores.jsonl byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from toy import diff_of, one_attempt_run, write_files

from evalkit.records import AttemptRecord
from evalkit.sandbox.workspace import build_workspace
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.quality import QualityCache, score_quality
from evalkit.scoring.quality_lint import Linter
from evalkit.scoring.run_scores import score_run

CORE = "import sys\n\n\ndef total(values):\n    return sum(values)\n"
BASE = {
    "pkg/__init__.py": "",
    "pkg/core.py": CORE,
    "pkg/cli.py": "from pkg.core import total\n\n\ndef main(argv):\n    print(total(argv))\n",
    "tests/test_core.py": "from pkg.core import total\n\n\ndef test_total():\n    assert total([1]) == 1\n",
    "poetry.lock": "# lock\n",
}
MEAN = "\n\ndef mean(values):\n    return total(values) / len(values)\n"
SLOPPY = "def f(items=[]):\n    unused = 1\n    try:\n        return items\n    except:\n        pass\n"
VARIED = {  # name -> edits over BASE (None: the empty patch)
    "reference": {"pkg/core.py": CORE + MEAN},
    "unused import, one already in the base": {"pkg/core.py": "import json\n" + CORE + MEAN},
    "syntax error": {"pkg/core.py": CORE + MEAN + "\n\ndef broken(:\n    pass\n"},
    "debug print and breakpoint": {"pkg/core.py": CORE + MEAN.replace("    return", "    breakpoint()\n    return")},
    "import in a new package's __init__": {"pkg/core.py": CORE + MEAN, "pkg/sub/__init__.py": "import os\n"},
    "the same text as a module": {"pkg/core.py": CORE + MEAN, "pkg/sub.py": "import os\n"},
    "bugbear and bare except in a new file": {"pkg/core.py": CORE + MEAN, "pkg/helpers.py": SLOPPY},
    "the same new file again": {"pkg/core.py": CORE + MEAN, "pkg/helpers.py": SLOPPY},
    "a deleted module and a lock edit": {"pkg/cli.py": None, "poetry.lock": "# lock\n# changed\n"},
    "lint in a test file": {"tests/test_core.py": BASE["tests/test_core.py"] + "import os\n"},
    "a file with windows line ends": {"pkg/core.py": (CORE + MEAN).replace("\n", "\r\n") + "import os\r\n"},
    "empty": None,
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    base = write_files(tmp_path_factory.mktemp("reuse") / "base", BASE)
    patches = {name: "" if edits is None else diff_of(base, edits) for name, edits in VARIED.items()}
    patches["applies with fuzz"] = patches["reference"].replace(" def total(values):", " def total(numbers):")
    patches["does not apply"] = patches["reference"].replace("pkg/core.py", "pkg/missing.py")
    base_file = lambda path: (base / path).read_text() if (base / path).is_file() else None  # noqa: E731
    return base_file, patches


def test_one_cache_scores_every_change_as_it_scores_alone_in_any_order(repo):
    base_file, patches = repo
    reference = patches["reference"]
    alone = {name: score_quality(patch, reference, base_file) for name, patch in patches.items()}
    order = [*patches, *reversed(patches)]  # the second pass is served from what the first one linted
    with QualityCache() as cache:
        shared = [score_quality(patches[name], reference, base_file, cache=cache) for name in order]
    assert shared == [alone[name] for name in order]
    # the set is varied: lint added (in an __init__ too), a syntax error, litter, one unscored
    assert alone["unused import, one already in the base"].new_lint == {"F401": 1}
    assert alone["import in a new package's __init__"].new_lint == {"F401": 1}
    assert alone["bugbear and bare except in a new file"].new_lint == {"B006": 1, "E722": 1, "F841": 1, "S110": 1}
    assert alone["syntax error"].syntax_errors == ["pkg/core.py"]
    assert alone["debug print and breakpoint"].breakpoints == 1
    assert alone["does not apply"].note is not None and alone["empty"].note == "empty patch"


def test_files_linted_together_get_the_findings_each_gets_alone():
    files = [
        ("pkg/__init__.py", b"import os\n"),
        ("pkg/a.py", b"import os\n"),
        ("b.py", SLOPPY.encode()),
        ("c.py", b"def broken(:\n"),
        ("d.py", b"x = 1\r\nimport os\r\n"),
    ]
    together = Linter()
    together.lint(files)
    for path, text in files:
        assert together.counts({path: text}) == Linter().counts({path: text}), path
    assert together.counts({"b.py": SLOPPY.encode()})["b.py"] == {"B006": 1, "E722": 1, "F841": 1, "S110": 1}


def test_scoring_takes_a_backends_workspace_once_per_task_source(toy_task, tmp_path):
    twin = toy_task.model_copy(update={"id": f"{toy_task.id}-twin"})  # another task over the same base tree
    store = one_attempt_run(toy_task, tmp_path / "suite", tmp_path / "run")
    for task in (toy_task, twin):
        for sample, patch in enumerate((task.patch, task.patch + _new_file("calc/extra.py", "import os\n"))):
            store.append(AttemptRecord(run_id="run", task_id=task.id, model="oracle", sample=sample, resolved=True,
                                       stop_reason="submitted", model_patch=patch, patch_applied=True))  # fmt: skip
    tasks = {toy_task.id: toy_task, twin.id: twin}
    score_run(store, tasks, ScoringSettings())
    built = store.paths.scores.read_bytes()
    asked: list[str] = []

    def workspace(task):
        asked.append(task.id)
        return build_workspace(task.source)

    score_run(store, tasks, ScoringSettings(), workspace=workspace)
    assert store.paths.scores.read_bytes() == built
    assert asked == [toy_task.id]
    assert b'"F401":1' in built


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines(keepends=True)
    header = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    return header + f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}" for line in lines)


def test_the_quality_cache_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with QualityCache() as cache:
        cache.linter.lint([("a.py", b"import os\n")])
    assert list(Path(tmp_path).iterdir()) == []
