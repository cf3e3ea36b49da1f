"""A gathered task's prompt: the intent (a deterministic draft from the commit message and the diff,
or a rewriter model's), then the interface section the changed tests need; with the names the
tests need that neither gives (the task is then *underspecified*). Reads the repository with git at
the commit and its parent; the decisions are the pure functions of `intent` and `interface`."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.diffs import changed_paths
from evalkit.gather.history import branch_messages, texts_at
from evalkit.gather.intent import intent_draft
from evalkit.gather.interface import Interface, Texts, extract_interface, underspecified
from evalkit.gather.merges import hollow_merge, merge_message
from evalkit.gather.prompt_faults import prompt_faults
from evalkit.gather.prompts import rewrite_prompt
from evalkit.gather.used_by_tests import used_by_tests
from evalkit.models.client import ChatClient
from evalkit.tasks.model import UNDERSPECIFIED

MIN_INTENT_CHARS = 160  # what to change and why needs a couple of sentences, however long the interface


@dataclass
class TaskPrompt:
    prompt: str  # "" when the commit message gives nothing to ask for
    metadata: dict[str, str] = field(default_factory=dict)
    underspecified: list[str] = field(default_factory=list)


def base_search(repo: Path, commit: str):
    """Which of some words the Python files at `commit` contain (one `git grep` per question)."""

    def search(words: list[str], whole_words: bool) -> set[str]:
        patterns = [arg for word in words for arg in ("-e", word)]
        result = subprocess.run(
            ["git", "grep", "-o", "-h", "-F", *(["-w"] if whole_words else []), *patterns, commit, "--", "*.py"],
            cwd=repo,
            capture_output=True,
            text=True,
            errors="replace",
        )
        return set(result.stdout.splitlines()) & set(words)

    return search


def interface_of(repo: Path, parent: str, sha: str, patch: str, test_patch: str, sources: Texts) -> Interface:
    """The interface of the commit `sha` (source part `patch`, its modules `sources`; test part
    `test_patch`)."""
    usage = used_by_tests(texts_at(repo, parent, sha, changed_paths(test_patch)))
    return extract_interface(sources, usage, patch, base_search(repo, parent))


def task_prompt(
    repo: Path,
    parent: str,
    sha: str,
    message: str,
    parts: tuple[str, str],
    max_chars: int = 400,
    rewriter: ChatClient | None = None,
) -> TaskPrompt:
    """The prompt of the commit `sha` (`parts`: its source and test diffs), its metadata
    (prompt_source, interface, rewrite_error, underspecified) and the names it leaves out.
    `max_chars` is for the whole prompt: the interface loses its docstring lines when they do not
    fit, and the intent gets what the interface leaves, at least MIN_INTENT_CHARS."""
    patch, test_patch = parts
    sources = texts_at(repo, parent, sha, changed_paths(patch))
    interface = interface_of(repo, parent, sha, patch, test_patch, sources)
    section = interface.render()
    if len(section) + MIN_INTENT_CHARS + 2 > max_chars:
        section = interface.render(summaries=False)  # signatures are needed, docstring lines are not
    budget = max(MIN_INTENT_CHARS, max_chars - len(section) - 2)  # the interface is never cut
    said = merge_message(message, branch_messages(repo, sha)) if hollow_merge(message) else message
    intent = intent_draft(said, patch, sources, budget, described={item.name for item in interface.items})
    if not intent:
        return TaskPrompt("")
    meta = {"prompt_source": "commit message and diff" + (" (the merged branch's messages)" if said != message else "")}
    if rewriter is not None:
        context = f"Draft request:\n{intent}" + (f"\n\n{section}" if section else "")
        rewritten, error = rewrite_prompt(rewriter, said, intent, budget, context)
        faults = prompt_faults(rewritten) if not error else []
        if error or faults:
            meta["rewrite_error"] = (
                error or f"the rewrite breaks the prompt rules ({'; '.join(faults)}): the draft kept"
            )
        else:
            intent, meta["prompt_source"] = rewritten, f"rewriter {rewriter.spec.name}"
    prompt = f"{intent}\n\n{section}" if section else intent
    if interface.items:
        meta["interface"] = ", ".join(dict.fromkeys(item.name for item in interface.items))
    missing = underspecified(interface, prompt)
    if missing:
        meta[UNDERSPECIFIED] = ", ".join(missing)
    return TaskPrompt(prompt, meta, missing)
