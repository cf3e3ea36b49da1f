"""Draft prompts a person would write: no merge fragments, release-note labels, references to what
the agent cannot see or literal escapes; a hollow merge asks for what its branch did."""

from evalkit.gather.intent import intent_draft
from evalkit.gather.merges import hollow_merge, merge_message
from evalkit.gather.prompt_faults import prompt_faults
from evalkit.gather.prose import readable_prose


def test_merge_fragments_labels_and_references_go_and_leave_no_orphans():
    said = readable_prose(
        "Merge, add E265 for space before block comment; issue. Release note: Report E265 for space "
        "before block comment. (Issue 22.)"
    )
    assert said == "Add E265 for space before block comment. Report E265 for space before block comment."
    assert prompt_faults(said) == []
    assert readable_prose("Add a wrap option (as suggested in Issue 22).") == "Add a wrap option."
    assert readable_prose("Thanks @alice for the report. Handle tabs in cells.") == "Handle tabs in cells."


def test_literal_escapes_become_whitespace():
    assert readable_prose("Add wrap option.\\n\\nIt wraps long cells.") == "Add wrap option.\n\nIt wraps long cells."


def test_the_checker_names_each_fault():
    faults = prompt_faults("Merge pull request #3 from bob/x. Fixes #12.\\n")
    assert any(f.startswith("merge fragment") for f in faults) and any(f.startswith("reference") for f in faults)
    assert any(f.startswith("literal escape") for f in faults)
    assert any(f.startswith("cut sentence") for f in prompt_faults("Handle the empty input and"))


def test_a_hollow_merge_takes_its_intent_from_the_branch():
    message = "Merge pull request #34 from bob/wrap"
    assert hollow_merge(message) and not hollow_merge("Merge AoT fragments when building a table")
    branch = ["Add a wrap option to tables\n\nLong cells wrap at the column width.", "fix typo", "wip"]
    assert merge_message(message, branch) == branch[0]
    titled = merge_message(message + "\n\nWrap long cells in tables", ["Add wrap", "Test wrap at width", "lint"])
    assert titled.startswith("Wrap long cells in tables")


def test_a_release_note_joins_the_draft_in_its_own_words_without_a_label():
    patch = (
        "diff --git a/CHANGES.rst b/CHANGES.rst\n--- a/CHANGES.rst\n+++ b/CHANGES.rst\n@@ -1,2 +1,3 @@\n"
        " Unreleased\n ----------\n+- Report E265 for a space missing before a block comment.\n"
    )
    draft = intent_draft("Add E265", patch, {}, max_chars=400)
    assert "Release note" not in draft and "Report E265" in draft and prompt_faults(draft) == []
