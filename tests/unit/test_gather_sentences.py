"""Shortening a prompt to its character budget: whole sentences are dropped from the end, and a
first sentence that is itself too long loses its parentheses, then ends at a clause with a full
stop; never "…" in the middle of a sentence (drafts had ended "rename 'fill' to…")."""

from evalkit.gather.sentences import sentences, shorten

TEXT = (
    "Rename the fill option to padding. The old name clashed with the colour option, so users mixed "
    "them up (see the 2.0 notes, e.g. the table on the first page). Callers no longer need to pass both."
)


def test_sentences_split_at_full_stops_but_not_inside_abbreviations_or_versions():
    assert sentences(TEXT) == [
        "Rename the fill option to padding.",
        "The old name clashed with the colour option, so users mixed them up (see the 2.0 notes, e.g. the "
        "table on the first page).",
        "Callers no longer need to pass both.",
    ]
    assert sentences("Works on Python 3.8. Drops `v1.2` support! Why? Because.") == [
        "Works on Python 3.8.",
        "Drops `v1.2` support!",
        "Why?",
        "Because.",
    ]


def test_a_text_that_fits_is_unchanged():
    assert shorten(TEXT, len(TEXT)) == TEXT


def test_trailing_sentences_are_dropped_whole():
    assert shorten(TEXT, len(TEXT) - 1) == TEXT.rsplit(" Callers", 1)[0]
    assert shorten(TEXT, 60) == "Rename the fill option to padding."


def test_a_first_sentence_too_long_loses_its_parentheses_then_ends_at_a_clause():
    long = "The old name clashed with the colour option (see the notes), so users mixed them up all the time."
    assert shorten(long, 90) == "The old name clashed with the colour option, so users mixed them up all the time."
    assert shorten(long, 60) == "The old name clashed with the colour option."
    assert shorten("Add a flag; it is off by default, as before", 30) == "Add a flag."


def test_a_sentence_without_any_clause_is_cut_at_a_word_with_a_full_stop():
    cut = shorten("Add things " + "word " * 40, 60)
    assert len(cut) <= 60 and cut.endswith("word.") and "…" not in cut and "  " not in cut
