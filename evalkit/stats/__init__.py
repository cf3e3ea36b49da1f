"""Suite statistics: task sizes (prompt, reference change, tests) beside SWE-bench's and CursorBench's.

`suite_stats` computes (pure), `reference` holds the SWE-bench and published figures, `commands`
holds the command bodies the CLI wires.
"""

from evalkit.stats.suite_stats import MEASURES, TaskFigures, describe, row_figures, summarize, task_figures

__all__ = ["MEASURES", "TaskFigures", "describe", "row_figures", "summarize", "task_figures"]
