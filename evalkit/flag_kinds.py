"""The closed set of integrity flag kinds (described in `integrity.py`), apart from the
pydantic records so that the CLI can offer them as choices without loading those."""

from enum import StrEnum


class FlagKind(StrEnum):
    GIT_HISTORY = "git_history"
    NETWORK_PROBE = "network_probe"
    HIDDEN_TEST_PROBE = "hidden_test_probe"
    TEST_TAMPERING = "test_tampering"
    OUTSIDE_WORKSPACE = "outside_workspace"
    HARNESS_TAMPERING = "harness_tampering"
    OBFUSCATED_CODE = "obfuscated_code"
