"""Added non-test code that runs code built at run time is flagged `obfuscated_code` (a warning),
with its line: what a diff scan cannot read, a reader should."""

from __future__ import annotations

import pytest
from encoded_cheats import PAYLOADS, encoded_line
from toy import BASE_FILES

from evalkit.integrity import FlagKind, IntegrityReport
from evalkit.verify.obfuscation import scan_obfuscation
from evalkit.verify.source_rules import scan_source_diff


def _diff(path: str, added: str) -> str:
    lines = added.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,0 +1,{len(lines)} @@\n{body}"


@pytest.mark.parametrize("cheat", list(PAYLOADS))
def test_every_encoded_cheat_is_flagged_with_its_line_though_the_runner_rules_see_nothing(cheat):
    diff = _diff("calc/__init__.py", BASE_FILES["calc/__init__.py"] + encoded_line(PAYLOADS[cheat]))
    assert scan_source_diff(diff) == []  # no runner name on the diff's surface
    flags = scan_obfuscation(diff)
    assert [f.kind for f in flags] == [FlagKind.OBFUSCATED_CODE]
    assert flags[0].evidence.startswith("calc/__init__.py:8: exec(") and flags[0].source == "diff"
    assert IntegrityReport.of(flags).verdict == "warn"


@pytest.mark.parametrize(
    "line",
    [
        "exec(code)",
        "eval(compile(text, '<x>', 'eval'))",
        "builtins.exec(payload)",
        "run = compile(source, name, 'exec')",
        "code = marshal.loads(blob)",
        "fn = types.FunctionType(types.CodeType(*parts), {})",
        "mod = __import__(''.join(['o', 's']))",
        "mod = importlib.import_module(prefix + name)",
        "data = zlib.decompress(blob)",
        "text = codecs.decode(secret, 'rot13')",
        "payload = base64.b64decode(chunk)",
        "getattr(__builtins__, 'ex' + 'ec')(s)",
        "BLOB = '" + "QUJD" * 60 + "'",
    ],
)
def test_code_built_at_run_time_is_flagged(line):
    flags = scan_obfuscation(_diff("pkg/mod.py", f"import x\n{line}\n"))
    assert [(f.kind, f.evidence) for f in flags] == [(FlagKind.OBFUSCATED_CODE, f"pkg/mod.py:2: {line}")]


@pytest.mark.parametrize(
    "line",
    [
        "value = eval_expression(tree)",
        "import importlib",
        "module = importlib.import_module('json')",
        "mod = __import__('os')",
        "pattern = re.compile(r'[a-z]+')",
        "self.executor = executor",
        "DIGEST = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        "# exec(code) in a comment",
        "return literal_eval(text)",
    ],
)
def test_ordinary_code_is_not_flagged(line):
    assert scan_obfuscation(_diff("pkg/mod.py", line)) == []


def test_tests_and_non_python_files_are_not_read():
    assert scan_obfuscation(_diff("tests/test_mod.py", "exec(code)")) == []
    assert scan_obfuscation(_diff("docs/how.md", "exec(code)")) == []
    assert scan_obfuscation("not a diff") == []
