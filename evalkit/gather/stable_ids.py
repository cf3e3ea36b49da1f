"""Test ids that name a position in the source: never a kept task's FAIL_TO_PASS or PASS_TO_PASS.

A style checker collects its own doctests as parametrised tests whose ids carry the line they sit
on (`testsuite/test_self_doctests.py::test[pycodestyle.py:1182:whitespace_around_operator@0]`): a
correct change that moves those lines renames the test, which then counts as missing. Numbers are a
position only where attached to one: a file name (`name.py:NN`, `file.txt:12`, `#L45`), a `line`,
`lineno`, `offset` or `column` word, or a doctest's `:line:name@N`. Parameter ids with numbers
(`test_x[1-2]`, `test_parse[2019-01-01]`, `test_y[case3]`, `[localhost:8080]`) are stable, and so
is a doctest id named by its object (`module.py::module.func`).
"""

from __future__ import annotations

import re

# file extensions of sources and test data a position could point into (not hosts: `.com:8080`)
_EXTENSIONS = r"(?:py|pyx|pxd|pyi|txt|rst|md|html?|j2|jinja2?|json|ya?ml|toml|cfg|ini|c|h|js|ts|css|xml|csv)"
_POSITION = re.compile(
    rf"[\w\-]\.{_EXTENSIONS}:\d+\b"  # pycodestyle.py:1182, data.txt:12
    r"|#L\d+\b"  # file.py#L45
    r"|\b(?:line|col|column)[ _=:\-]\d+\b"  # line 45, line=3, col_7 (`line1` may be a case's name)
    r"|\b(?:lineno|line_no|linenum|offset)[ _=:\-]?\d+\b"  # lineno=3, offset120
    r"|:\d+:\w+@\d+\b",  # a doctest's file:line:name@example
    re.I,
)


def position_dependent(test_id: str) -> bool:
    """The test id names a source position (a line number, an offset), so moving code renames it."""
    _, _, name = test_id.partition("::")
    return bool(_POSITION.search(name or test_id))
