import pytest

from evalkit.diffs import changed_lines, changed_paths
from evalkit.errors import EvalkitError

DIFF = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,3 +1,4 @@
 import os
-x = 1
+x = 2
+y = 3
 z = 4
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+a = 1
+b = 2
diff --git a/old.py b/old.py
deleted file mode 100644
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-gone = True
"""


def test_changed_paths_cover_new_modified_and_deleted_files():
    assert changed_paths(DIFF) == ["pkg/core.py", "pkg/new.py", "old.py"]


def test_changed_lines_count_added_and_removed_without_headers():
    assert changed_lines(DIFF) == 3 + 2 + 1


def test_garbage_is_a_user_error():
    with pytest.raises(EvalkitError):
        changed_paths("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-only one line\n")
