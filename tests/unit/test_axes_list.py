"""One list of axes (evalkit/axes.py) drives the weights, the summaries, compare, the terminal and
the leaderboard: none of them spells the list out again."""

import re
from pathlib import Path

import evalkit
from evalkit.axes import AXES, AXIS_NAMES, LABELS, MEAN_AXES, SCORE_COLUMNS
from evalkit.report.compare.pairs import CONTINUOUS_AXES
from evalkit.report.leaderboard.board import AXES as CHART_AXES
from evalkit.scoring.composite import Weights
from evalkit.scoring.run_scores import AXIS_COLUMNS

PACKAGE = Path(evalkit.__file__).parent
# two or more axis names in a row, quoted, as a list written out by hand would have them
SPELLED_OUT = re.compile(r"""["'](quality|efficiency|interaction)["'],\s*["'](quality|efficiency|interaction)["']""")


def test_the_weights_are_the_axes_with_their_default_weights():
    assert tuple(Weights.model_fields) == (*AXIS_NAMES, "reviewer")  # the reviewer's weight: 0 unless given
    assert Weights().model_dump() == {axis.name: axis.weight for axis in AXES} | {"reviewer": 0.0}
    assert set(Weights().normalised()) == set(AXIS_NAMES)
    assert abs(sum(Weights().normalised().values()) - 1) < 1e-9


def test_every_view_takes_its_axes_from_the_one_list():
    assert AXIS_COLUMNS == SCORE_COLUMNS == (*AXIS_NAMES, "composite")
    assert CONTINUOUS_AXES == MEAN_AXES and (*MEAN_AXES, "reviewer") == CHART_AXES
    assert all(name in LABELS for name in (*SCORE_COLUMNS, "reviewer"))


def test_no_module_or_page_script_spells_the_list_out_again():
    sources = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sources
        if path.name != "axes.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SPELLED_OUT.search(line)
    ]
    assert not offenders, offenders
