"""Mechanical commits are screened out before validation: a reformat, a sweep of type annotations,
a syntax upgrade (pyupgrade), dropping old Pythons, a version bump. The evidence is the code (the
modules' syntax trees, compared once what such a sweep changes is set aside); the message only
widens the tolerance. A real feature beside them is never screened."""

import difflib
import textwrap

from evalkit.gather.history import Commit, SizeLimits, screen
from evalkit.gather.mechanical import mechanical_change


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def diff(path: str, before: str | None, after: str | None) -> str:
    old, new = (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True)
    return f"diff --git a/{path} b/{path}\n" + "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}"))


CACHE = _d(
    '''
    from __future__ import absolute_import
    import sys
    from typing import Optional

    __version__ = '1.0'

    if sys.version_info < (3,):
        text_type = unicode
    else:
        text_type = str


    class Cache(object):
        """A cache with a maximum size."""

        def __init__(self, maxsize, getsizeof=None):
            super(Cache, self).__init__()
            self.maxsize = maxsize
            self.getsizeof = getsizeof or (lambda value: 1)
            self.data = {}

        def __setitem__(self, key, value):
            size = self.getsizeof(value)
            if size > self.maxsize:
                raise ValueError('value too large: {} > {}'.format(size, self.maxsize))
            self.data[key] = value

        def describe(self, name):
            return text_type('%s holds %d' % (name, len(self.data)))
    '''
)


def reformatted(text: str) -> str:
    """What black makes of it: quotes, line breaks, and a docstring rewrapped."""
    return (
        text.replace("'", '"')
        .replace("raise ValueError(", "raise ValueError(\n                ")
        .replace("self.maxsize))", "self.maxsize)\n            )")
        .replace(
            '"""A cache with a maximum size."""', '"""\n        A cache with a\n        maximum size.\n        """'
        )
    )


def annotated(text: str) -> str:
    return (
        text.replace(
            "def __init__(self, maxsize, getsizeof=None):",
            ("def __init__(self, maxsize: int, getsizeof: Optional[Callable[[object], int]] = None) -> None:"),
        )
        .replace("self.data = {}", "self.data: dict[object, object] = {}")
        .replace("def describe(self, name):", "def describe(self, name: str) -> str:")
        .replace("from typing import Optional", "from typing import Callable, Optional")
    )


def upgraded(text: str) -> str:
    return (
        text.replace("from __future__ import absolute_import\n", "")
        .replace("class Cache(object):", "class Cache:")
        .replace("super(Cache, self).__init__()", "super().__init__()")
        .replace("'value too large: {} > {}'.format(size, self.maxsize)", "f'value too large: {size} > {self.maxsize}'")
    )


def py3_only(text: str) -> str:
    return (
        text.replace(
            "if sys.version_info < (3,):\n    text_type = unicode\nelse:\n    text_type = str\n", "text_type = str\n"
        )
        .replace("text_type(", "str(")
        .replace("text_type = str\n", "")
    )


def test_a_reformat_is_mechanical():
    assert mechanical_change("Tidy up", {"cache.py": (CACHE, reformatted(CACHE))}) == "mechanical: formatting only"


def test_a_sweep_of_type_annotations_is_mechanical():
    change = {"cache.py": (CACHE, annotated(CACHE))}
    assert mechanical_change("Add type hints", change) == "mechanical: type annotations only"


def test_a_syntax_upgrade_is_mechanical():
    change = {"cache.py": (CACHE, upgraded(CACHE))}
    assert mechanical_change("Modernise", change) == "mechanical: syntax upgrade (pyupgrade)"


def test_dropping_old_pythons_is_mechanical_even_with_a_compat_module_removed():
    compat = "import sys\nPY2 = sys.version_info[0] == 2\nif PY2:\n    string_types = (str, unicode)\n"
    change = {"cache.py": (CACHE, py3_only(CACHE)), "pkg/_compat.py": (compat, None)}
    assert mechanical_change("Drop Python 2", change) == "mechanical: drops old Python versions"


def test_a_version_bump_is_mechanical():
    change = {"cache.py": (CACHE, CACHE.replace("__version__ = '1.0'", "__version__ = '1.1'"))}
    assert mechanical_change("Release 1.1", change) == "mechanical: version bump"


def test_a_feature_is_not_mechanical_even_reformatted_or_with_a_mechanical_message():
    feature = CACHE.replace(
        "        self.data[key] = value\n",
        (
            "        while self.data and len(self.data) + size > self.maxsize:\n"
            "            self.popitem()\n"
            "        self.data[key] = value\n"
            "\n"
            "    def popitem(self):\n"
            "        key = next(iter(self.data))\n"
            "        return key, self.data.pop(key)\n"
        ),
    )
    assert feature != CACHE
    for message in ("Evict when full", "Run black; drop python 2; bump version"):
        assert mechanical_change(message, {"cache.py": (CACHE, reformatted(feature))}) is None
    new_module = {"cache.py": (CACHE, reformatted(CACHE)), "lru.py": (None, "class LRU:\n    pass\n" * 10)}
    assert mechanical_change("black", new_module) is None


def test_screening_reads_the_modules_only_for_a_candidate_and_says_why():
    after, lib = reformatted(CACHE), ("x=1\n" * 40, "x = 1\n" * 40)
    patch = diff("cache.py", CACHE, after) + diff("lib.py", *lib)
    test_patch = diff("tests/test_cache.py", "", "def test_cache():\n    pass\n")
    commit = Commit("c" * 40, "p" * 40, "2024-01-01", "Format code with black")
    read = {"cache.py": (CACHE, after), "lib.py": lib}
    assert screen(commit, patch, test_patch, SizeLimits(), read=lambda paths: read) == "mechanical: formatting only"
    asked = []
    small = screen(commit, diff("cache.py", CACHE, after), test_patch, SizeLimits(), read=asked.append)
    assert small.startswith("too small") and not asked


def test_a_one_line_fix_among_comments_and_docstrings_is_not_mechanical():
    """Seen on click: 24 lines of comments and docs around one changed condition (a real fix)."""
    comments = "".join(f"        # why the size counts, reason {i}\n" for i in range(12))
    fixed = CACHE.replace("        if size > self.maxsize:\n", comments + "        if size >= self.maxsize:\n")
    assert mechanical_change("Reconcile sizes", {"cache.py": (CACHE, fixed)}) is None
    documented = CACHE.replace("A cache with a maximum size.", "A cache that holds at most `maxsize` units.")
    reason = mechanical_change("Document it", {"cache.py": (CACHE, documented)})
    assert reason == "mechanical: docstrings and comments only"


def test_dropping_old_pythons_by_hand_is_told_by_what_it_removes_and_what_the_message_says():
    """pyflakes' "burn the bridges with python 2.x" inlined and refactored as it went: no canonical
    form matches, but most of what it removes served Python 2."""
    before = CACHE + _d(
        """
        if PY2:
            def native(value):
                if isinstance(value, unicode):
                    return value.encode("utf-8")
                return value
        else:
            def native(value):
                return value


        def names(cache):
            return sorted(cache.data)
        """
    )
    after = CACHE + _d(
        """
        def native(value):
            return value


        def names(cache):
            keys = [str(key) for key in cache.data]
            keys.sort()
            return keys
        """
    )
    change = {"cache.py": (before, after)}
    assert mechanical_change("burn the bridges with python 2.x", change) == "mechanical: drops old Python versions"
    assert mechanical_change("Simplify native()", change) is None


def test_lines_of_a_string_that_look_like_comments_are_code():
    """click's shell completion embeds a bash script whose lines start with "#": changing it is a
    change of code, not of comments."""
    script = 'SOURCE = """\n# bash completion\ncomplete -F _f prog\n"""\n'
    change = {"completion.py": (script, script.replace("complete -F", "# for bash 4.4\ncomplete -o nosort -F"))}
    assert mechanical_change("Sort completions in bash", change) is None


def test_a_shim_for_old_pythons_that_the_change_adds_is_new_code():
    """click's "typing improvements" added `if sys.version_info < (3, 13):` around a new method."""
    shim = _d(
        """
        if sys.version_info < (3, 13):
            def __class_getitem__(cls, params):
                if not isinstance(params, tuple):
                    params = (params,)
                return super().__class_getitem__(params)
        """
    )
    change = {"cache.py": (CACHE, CACHE + shim)}
    assert mechanical_change("Typing improvements", change) is None


def test_a_feature_hidden_in_a_reformat_brings_a_new_name_and_is_not_mechanical():
    """marshmallow's "Add require_tld argument to the Url field" rewrapped 35 lines around 4 new
    ones: little enough for the tolerance, but `require_tld` is a new name."""
    body = "".join(f"    value_{i} = compute('a', 'b', {i})\n" for i in range(40))
    before = f"def build(relative=False):\n{body}    return URL(relative)\n"
    reformatted = before.replace("'", '"').replace(
        "    return URL(relative)", "    return URL(\n        relative\n    )"
    )
    feature = reformatted.replace("relative=False", "relative=False, require_tld=True").replace(
        "        relative\n", "        relative, require_tld=require_tld\n"
    )
    assert mechanical_change("Reformat", {"url.py": (before, reformatted)}) == "mechanical: formatting only"
    assert mechanical_change("Add require_tld to URL", {"url.py": (before, feature)}) is None
