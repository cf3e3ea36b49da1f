"""The deterministic intent of a gathered prompt: the commit message's subject and body, the release
note the change adds, and where the change lives; short, and never code."""

from evalkit.diffs import patched_text
from evalkit.gather.intent import intent_draft, release_notes

MESSAGE = """\
Support nested arrays (#41)

Arrays may now hold arrays, as the TOML spec allows; before, the parser
stopped at the inner bracket with a confusing error.

For example:

```python
loads("a = [[1, 2], [3]]")
```

    decoder.load_array(inner)

Adds tests for deep nesting.

Signed-off-by: Dev <dev@example.com>
"""
PATCH = """\
diff --git a/toml/decoder.py b/toml/decoder.py
--- a/toml/decoder.py
+++ b/toml/decoder.py
@@ -10,2 +10,3 @@ class Decoder:
     def load_array(self, text):
-        return text.split(",")
+        items = self._split(text)
+        return [self.load_array(i) if i.startswith("[") else i for i in items]
diff --git a/CHANGELOG.rst b/CHANGELOG.rst
--- a/CHANGELOG.rst
+++ b/CHANGELOG.rst
@@ -1,2 +1,6 @@
 Changelog
 =========
+
+0.11.0
+------
+- :func:`loads` reads nested arrays of any depth.
"""

DECODER = "import re\n" + "\n" * 7 + 'class Decoder:\n    def load_array(self, text):\n        return text.split(",")\n'
SOURCES = {"toml/decoder.py": (DECODER, patched_text(DECODER, PATCH, "toml/decoder.py"))}


def test_the_draft_says_what_and_why_and_where_without_code():
    draft = intent_draft(MESSAGE, PATCH, SOURCES)
    assert draft.startswith("Support nested arrays. Arrays may now hold arrays, as the TOML spec allows;")
    assert "loads reads nested arrays of any depth." in draft and "Release note" not in draft  # no label of ours
    assert draft.endswith("The work is in `toml/decoder.py`, around `Decoder.load_array`.")
    assert not any(code in draft for code in ("```", "loads(", "load_array(", "#41", "Signed-off", "tests"))
    assert 200 <= len(draft) <= 400


def test_the_draft_is_shortened_by_whole_sentences_and_keeps_where_the_work_is():
    draft = intent_draft("Rework parsing\n\n" + "The parser was slow and wrong. " * 30, PATCH, SOURCES, max_chars=250)
    assert len(draft) <= 250 and draft.endswith("wrong. The work is in `toml/decoder.py`, around `Decoder.load_array`.")
    assert draft.startswith("Rework parsing. The parser was slow and wrong.") and "…" not in draft


def test_a_subject_too_long_for_the_hint_keeps_the_subject_whole():
    subject = "Let the decoder read arrays nested to any depth inside inline tables and arrays of tables"
    draft = intent_draft(subject, PATCH, SOURCES, max_chars=len(subject) + 40)
    assert draft == subject + ". The work is in `toml/decoder.py`."
    assert intent_draft(subject, PATCH, SOURCES, max_chars=len(subject) + 5) == subject + "."


def test_release_notes_are_prose_without_headings_or_markup():
    assert release_notes(PATCH) == "loads reads nested arrays of any depth."
    assert intent_draft("", PATCH, SOURCES) == ""


def test_a_release_note_wrapped_over_lines_is_one_sentence_and_its_code_blocks_are_left_out():
    """A wrapped bullet's second line is indented like code; it had been dropped, leaving "Overriding
    `Context.resolve` is deprecated, override." (seen on jinja)."""
    notes = """\
diff --git a/CHANGES.rst b/CHANGES.rst
--- a/CHANGES.rst
+++ b/CHANGES.rst
@@ -1,1 +1,9 @@
 Version 3.0
+-   Overriding ``Context.resolve`` is deprecated, override
+    ``Context.resolve_or_missing`` instead. :issue:`1234`
+-   Add new ``boolean`` and ``false`` tests.
+
+    .. code-block:: python
+
+        loads("a = [[1, 2], [3]]")
+
"""
    assert release_notes(notes) == (
        "Overriding `Context.resolve` is deprecated, override `Context.resolve_or_missing` instead. "
        "Add new `boolean` and `false` tests."
    )


def test_release_note_links_and_their_targets_are_left_out():
    """Seen on jinja: "(`#665`_)" and its target ".. _#665: https://..." had left "(``_). . _#665:."."""
    notes = """\
diff --git a/CHANGES b/CHANGES
--- a/CHANGES
+++ b/CHANGES
@@ -1,1 +1,4 @@
 Version 2.10
+- Add tests for all comparison operators: ``eq``, ``ne``. (`#665`_)
+
+.. _#665: https://github.com/pallets/jinja/pull/665
"""
    assert release_notes(notes) == "Add tests for all comparison operators: `eq`, `ne`."


def test_release_note_sections_asides_and_markup_are_not_prose():
    """marshmallow's "Other changes:" and "*Backwards-incompatible*:", sqlparse's "Security Fixes"
    heading, jinja's "(codename ..., released ...)" and click's {pr}`3677` had reached prompts."""
    notes = """\
diff --git a/CHANGELOG.rst b/CHANGELOG.rst
--- a/CHANGELOG.rst
+++ b/CHANGELOG.rst
@@ -1,1 +1,7 @@
 Changelog
+(codename to be selected, release date to be decided)
+Security Fixes
+~~~~~~~~~~~~~~
+Other changes:
+- *Backwards-incompatible*: `__version__` is deprecated (:issue:`1`). Two issues were fixed:
+- Validate colors passed as `fg` {pr}`3677`
"""
    assert release_notes(notes) == (
        "Backwards-incompatible: `__version__` is deprecated. Two issues were fixed. Validate colors passed as `fg`."
    )


def test_the_messages_first_two_sentences_come_before_the_hints_names():
    """pyflakes' "String formatting linting." lost "Add lint rule for f-strings without placeholders."
    to the names of a long hint, in the room a long interface section leaves."""
    message = "String formatting linting\n\n* Add lint rule for f-strings without placeholders\n\n* Add more\n"
    said = "String formatting linting. Add lint rule for f-strings without placeholders."
    draft = intent_draft(message, PATCH, SOURCES, max_chars=len(said) + 40)
    assert draft == said + " The work is in `toml/decoder.py`."
