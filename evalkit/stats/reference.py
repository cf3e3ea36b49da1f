"""SWE-bench reference figures for `evalkit stats`: computed by this package from the partial
SWE-bench copies (shipped as reference.json, rebuilt with `build_reference`), or from any
SWE-bench source on demand; plus the figures Cursor published, quoted and labelled as such.

Rebuild the shipped file (from the repository root):
    python -m evalkit.stats.reference tests/fixtures/swebench/swe_bench_lite_partial274.jsonl \\
        tests/fixtures/swebench/swe_bench_verified_mini50.csv
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.stats.suite_stats import row_figures, summarize
from evalkit.tasks.swebench import read_swebench_rows

REFERENCE_FILE = Path(__file__).with_name("reference.json")
COMPUTED_BY = "evalkit.stats.suite_stats.summarize([row_figures(r) for r in read_swebench_rows(file)])"

# Provenance of the two shared copies, as their README gives it (tests/fixtures/swebench/README.md).
PROVENANCE: dict[str, dict[str, str]] = {
    "swe_bench_lite_partial274.jsonl": {
        "key": "swebench_lite_partial",
        "label": "SWE-bench Lite (partial copy)",
        "source": "bupatianhei666/swe-reflexion@a3c9ff8303cdc6bfc056069cc0c6c62ba8764889:data/swe_bench_lite.jsonl",
        "caveat": "partial copy: 274 of the 300 SWE-bench Lite test instances, without test_patch, "
        "FAIL_TO_PASS and PASS_TO_PASS, so only the prompt and patch measures are computed",
    },
    "swe_bench_verified_mini50.csv": {
        "key": "swebench_verified_mini",
        "label": "SWE-bench Verified (mini subset)",
        "source": "Kabir08/SWEBench-verified-mini@78f99e26e23cde492d3251972f918b2b772ec856"
        ":data/filtered_huggingface_dataset/test/data.csv",
        "caveat": "partial copy: 50 of the 500 SWE-bench Verified instances, chosen by the copy's author "
        "as representative, not a random sample",
    },
}

PUBLISHED: dict[str, Any] = {
    "label": "published (Cursor, Composer 2 report)",
    "source": "Cursor Research, Composer 2 Technical Report (March 2026)",
    "note": "quoted, not computed by evalkit; the report does not say whether test changes count as changed lines",
    "figures": {
        "prompt_chars": {
            "CursorBench": {"median_approx": 390},
            "SWE-bench": {"range": [1200, 3000]},
            "text": "CursorBench median ≈ 390; SWE-bench 1,200–3,000",
        },
        "lines_without_tests": {
            "CursorBench": {"median": 181},
            "SWE-bench Verified / Multilingual": {"median_range": [7, 10]},
            "text": "CursorBench median 181; SWE-bench Verified / Multilingual median 7–10",
        },
    },
}


def computed_entry(source: str, label: str, origin: str, caveat: str, computed_at: str) -> dict[str, Any]:
    """Figures of one SWE-bench-format source (file or hub name), with where they come from."""
    rows = read_swebench_rows(source)
    return {
        "label": label,
        "file": Path(source).name if Path(source).is_file() else source,
        "source": origin,
        "rows": len(rows),
        "caveat": caveat,
        "computed_at": computed_at,
        "computed_by": COMPUTED_BY,
        "figures": summarize(row_figures(row) for row in rows),
    }


def build_reference(lite_path: Path, verified_path: Path, computed_at: str | None = None) -> dict[str, Any]:
    """The content of reference.json, from the two shared partial copies (named as shipped)."""
    computed_at = computed_at or datetime.date.today().isoformat()
    computed = {}
    for path in (Path(lite_path), Path(verified_path)):
        known = PROVENANCE.get(path.name)
        if known is None:
            raise EvalkitError(f"{path}: not one of the shared SWE-bench copies ({', '.join(PROVENANCE)})")
        computed[known["key"]] = computed_entry(
            str(path), known["label"], known["source"], known["caveat"], computed_at
        )
    return {"computed": computed, "published": PUBLISHED}


def reference_from_source(source: str) -> dict[str, Any]:
    """A reference computed now from any SWE-bench source (file or hub name), shaped as the shipped one."""
    path = Path(source)
    name, origin = (path.name, str(path.resolve())) if path.is_file() else (source, f"Hugging Face hub: {source}")
    caveat = "computed now from the given source, not a shipped reference"
    entry = computed_entry(source, f"{name} (computed now)", origin, caveat, datetime.date.today().isoformat())
    return {"computed": {"given": entry}, "published": PUBLISHED}


def shipped_reference() -> dict[str, Any]:
    """The figures shipped with evalkit (reference.json)."""
    return json.loads(REFERENCE_FILE.read_text())


def render(reference: dict[str, Any]) -> str:
    """reference.json's text: stable key order, 2-space indent, a final newline."""
    return json.dumps(reference, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m evalkit.stats.reference LITE_JSONL VERIFIED_CSV")
    REFERENCE_FILE.write_text(render(build_reference(Path(sys.argv[1]), Path(sys.argv[2]))))
    print(f"wrote {REFERENCE_FILE}")
