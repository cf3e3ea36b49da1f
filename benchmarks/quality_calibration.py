"""How well the quality axis tells each shipped task's reference change from sloppy variants of it
(`quality_variants.py`: the same behaviour, the kind of change a reviewer sends back). Per kind:
the tasks it could be made on, the share where the variant scores lower than the reference, the
share caught (at least 0.15 lower), the mean gap, and the area under the ROC curve of reference
against variant (1: every reference above every variant; 0.5: chance). And the references' own
median. `--check-tests` first runs each variant's hidden tests in a Docker sandbox, as scoring
does, and keeps only variants that apply and resolve the task (the calibration is about changes
that work).

    python benchmarks/quality_calibration.py [--suite tasks/demo] [--check-tests] [--per-repository N]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from quality_variants import ALL_KINDS, diff_of, read_change, variants  # noqa: E402

from evalkit.sandbox.workspace import build_workspace  # noqa: E402
from evalkit.scoring.quality import QualityCache, score_quality  # noqa: E402
from evalkit.scoring.run_scores import base_tree  # noqa: E402
from evalkit.tasks import load_suite  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CAUGHT = 0.15


def auc(higher: list[float], lower: list[float]) -> float:
    """P(a reference scores above a variant), ties counting half (Mann-Whitney)."""
    pairs = [(h > v) + 0.5 * (h == v) for h in higher for v in lower]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def corpus(suite: Path, per_repository: int = 0) -> list[tuple[object, str, dict[str, str], object]]:
    """(task, rebuilt reference diff, kind -> variant diff, base reader) for each task."""
    tasks = load_suite(suite).tasks
    if per_repository:
        kept: dict[str, int] = {}
        chosen = []
        for task in tasks:
            repository = task.id.rsplit("-", 1)[0]
            if kept.get(repository, 0) < per_repository:
                kept[repository] = kept.get(repository, 0) + 1
                chosen.append(task)
        tasks = chosen
    out = []
    for task in tasks:
        built = build_workspace(task.source)
        with tarfile.open(fileobj=io.BytesIO(built.archive)) as archive:
            listing = sorted(name.removeprefix("./") for name in archive.getnames())
        reader = base_tree(task, lambda _task, built=built: built)
        change = read_change(task.patch, reader, listing)
        if change is None:
            continue
        out.append((task, diff_of(change.base, change.after), variants(task.patch, reader, listing), reader))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks/demo")
    parser.add_argument("--per-repository", type=int, default=0)
    parser.add_argument("--check-tests", action="store_true", help="keep only variants that resolve the task")
    args = parser.parse_args()
    rows = corpus(args.suite, args.per_repository)
    checked = None
    if args.check_tests:
        from evalkit.sandbox.docker.backend import DockerBackend, docker_client
        from evalkit.verify.correctness import evaluate_patch

        backend = DockerBackend(docker_client(), run_id="bench-quality-calibration")
        checked = {}
        try:
            for task, _, made, _ in rows:
                for kind, diff in made.items():
                    result = evaluate_patch(task, diff, backend)
                    checked[(task.id, kind)] = bool(result.resolved)
        finally:
            backend.close()
    references, by_kind = [], {kind: [] for kind in ALL_KINDS}
    with QualityCache() as cache:
        for n, (task, reference, made, reader) in enumerate(rows, 1):
            print(f"[{n}/{len(rows)}] {task.id}", file=sys.stderr, flush=True)
            ref = score_quality(reference, task.patch, reader, cache=cache).score or 0.0
            references.append(ref)
            for kind, diff in made.items():
                if checked is not None and not checked.get((task.id, kind)):
                    continue
                by_kind[kind].append((ref, score_quality(diff, task.patch, reader, cache=cache).score or 0.0))
    print(
        f"suite {args.suite}: {len(rows)} tasks; references' quality median {statistics.median(references):.3f}, "
        f"mean {statistics.mean(references):.3f}, min {min(references):.3f}"
    )
    if checked is not None:
        print(f"variants that apply and resolve their task: {sum(checked.values())} of {len(checked)}")
    print(f"{'kind':22} {'tasks':>5} {'lower':>6} {'caught':>7} {'mean gap':>9} {'AUC':>5} {'variant mean':>13}")
    for kind, pairs in by_kind.items():
        if not pairs:
            print(f"{kind:22} {0:5}")
            continue
        gaps = [r - v for r, v in pairs]
        print(
            f"{kind:22} {len(pairs):5} {sum(g > 0 for g in gaps) / len(gaps):6.0%} "
            f"{sum(g >= CAUGHT for g in gaps) / len(gaps):7.0%} {statistics.mean(gaps):9.3f} "
            f"{auc(references, [v for _, v in pairs]):5.2f} {statistics.mean(v for _, v in pairs):13.3f}"
        )
    print(
        f"caught: at least {CAUGHT} below the task's reference; AUC: every reference against each variant of the kind"
    )


if __name__ == "__main__":
    main()
