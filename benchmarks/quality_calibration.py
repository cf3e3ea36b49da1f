"""How well the quality axis tells each shipped task's reference change from sloppy variants of it
(evalkit/calibration/sloppy_variants.py: the same behaviour, the kind of change a reviewer sends
back). Per kind: the tasks it could be made on, the share where the variant scores lower than the
reference, the share caught (at least 0.15 lower), the mean gap, and the area under the ROC curve
of reference against variant (1: every reference above every variant; 0.5: chance). And the
references' own median. `--check-tests` first runs each variant's hidden tests in a Docker
sandbox, as scoring does, and keeps only variants that apply and resolve the task (the
calibration is about changes that work). `evalkit reviewer calibrate` reports the same figures
for a reviewer model beside these.

    python benchmarks/quality_calibration.py [--suite tasks/demo] [--check-tests] [--per-repository N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from evalkit.calibration.corpus import build_corpus, chosen_tasks
from evalkit.calibration.figures import CAUGHT, kind_figures, table_lines
from evalkit.calibration.sloppy_variants import ALL_KINDS
from evalkit.scoring.quality import QualityCache, score_quality
from evalkit.tasks import load_suite

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks/demo")
    parser.add_argument("--per-repository", type=int, default=0)
    parser.add_argument("--check-tests", action="store_true", help="keep only variants that resolve the task")
    args = parser.parse_args()
    corpus = build_corpus(chosen_tasks(load_suite(args.suite).tasks, args.per_repository))
    checked = None
    if args.check_tests:
        from evalkit.sandbox.docker.backend import DockerBackend, docker_client
        from evalkit.verify.correctness import evaluate_patch

        backend = DockerBackend(docker_client(), run_id="bench-quality-calibration")
        checked = {}
        try:
            for case in corpus:
                for kind, diff in case.variants.items():
                    checked[(case.task.id, kind)] = bool(evaluate_patch(case.task, diff, backend).resolved)
        finally:
            backend.close()
    references: dict[str, float] = {}
    by_kind: dict[str, dict[str, float]] = {kind: {} for kind in ALL_KINDS}
    with QualityCache() as cache:
        for n, case in enumerate(corpus, 1):
            task = case.task
            print(f"[{n}/{len(corpus)}] {task.id}", file=sys.stderr, flush=True)
            references[task.id] = score_quality(case.reference, task.patch, case.base_file, cache=cache).score or 0.0
            for kind, diff in case.variants.items():
                if checked is not None and not checked.get((task.id, kind)):
                    continue
                by_kind[kind][task.id] = score_quality(diff, task.patch, case.base_file, cache=cache).score or 0.0
    values = list(references.values())
    print(
        f"suite {args.suite}: {len(corpus)} tasks; references' quality median {statistics.median(values):.3f}, "
        f"mean {statistics.mean(values):.3f}, min {min(values):.3f}"
    )
    if checked is not None:
        print(f"variants that apply and resolve their task: {sum(checked.values())} of {len(checked)}")
    for line in table_lines([kind_figures(kind, references, scores) for kind, scores in by_kind.items()]):
        print(line)
    print(f"caught: at least {CAUGHT} below the task's reference; AUC: each reference against each variant of the kind")


if __name__ == "__main__":
    main()
