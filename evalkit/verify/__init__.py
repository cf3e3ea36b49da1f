"""Judging one attempt in its sandbox: the hidden tests run, guarded and graded, task health, and
the integrity scan whose flags an attempt's verdict already counts."""
