"""The three trees a reviewer reads, side by side in one sandbox: `base` (the task's workspace, as
the agent found it), `candidate` and `reference` (copies of the base with each change applied).
The reviewer gets reading tools only (review_tools.py), never a shell, and the trees are made
unwritable once built: nothing a review does changes what the next review of the task reads.

One sandbox serves every review of a task: the reference tree is built once, the candidate tree
again for each change."""

from __future__ import annotations

import shlex

from evalkit.diffs import APPLY_METHODS
from evalkit.sandbox.protocol import Sandbox

TREES = ("base", "candidate", "reference")
ROOT = "/tmp/review"
SETUP_TIMEOUT_S = 120.0


class ReviewTrees:
    """The trees of one task's review sandbox, by name; `show(candidate_patch)` builds the
    candidate's and says whether its change applied."""

    def __init__(self, sandbox: Sandbox, reference_patch: str) -> None:
        self.sandbox = sandbox
        self.paths = {"base": sandbox.workdir, "candidate": f"{ROOT}/candidate", "reference": f"{ROOT}/reference"}
        self.reference_applied = self._build("reference", reference_patch)

    def _build(self, tree: str, patch: str) -> bool:
        """`tree` as a fresh copy of the base with `patch` applied (the first method that takes it),
        then unwritable; whether it applied (else the tree is the base)."""
        path, diff = self.paths[tree], f"{ROOT}/{tree}.diff"
        q = shlex.quote
        self.sandbox.exec(
            f"mkdir -p {ROOT} && chmod -R u+w {q(path)} 2>/dev/null; rm -rf {q(path)} && "
            f"cp -a {q(self.sandbox.workdir)} {q(path)} && chmod -R u+w {q(path)}",  # the base may be frozen
            timeout=SETUP_TIMEOUT_S,
        )
        applied = not patch.strip()
        if patch.strip():
            self.sandbox.write_as_user(diff, patch.encode("utf-8", errors="surrogateescape"))
            for method in APPLY_METHODS:
                if self.sandbox.exec(f"cd {q(path)} && {method.shell(diff)}", timeout=SETUP_TIMEOUT_S).ok:
                    applied = True
                    break
                self.sandbox.exec(f"cd {q(path)} && git checkout -q -- . && git clean -fdq", timeout=SETUP_TIMEOUT_S)
        self.sandbox.exec(f"rm -f {q(diff)}; chmod -R a-w {q(path)}", timeout=SETUP_TIMEOUT_S)
        return applied

    def show(self, candidate_patch: str) -> bool:
        """The candidate tree rebuilt with `candidate_patch`; whether it applied."""
        return self._build("candidate", candidate_patch)

    def freeze_base(self) -> None:
        """The base made unwritable too (the sandbox is the review's alone)."""
        self.sandbox.exec(f"chmod -R a-w {shlex.quote(self.sandbox.workdir)}", timeout=SETUP_TIMEOUT_S)
