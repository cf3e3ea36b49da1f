"""A table that fits the terminal without cutting a figure.

rich shrinks a table that is too wide by cutting cells (`mo…`, `0.4…`). Here each cell is a list
of atoms (a number, `62.5%`, `submitted 8`) that are never split: a column narrows only by
wrapping its header at spaces and its atoms onto more lines. When the columns still do not fit,
the lowest-priority ones move to a second table (with the key column repeated), and those that
fit in neither are named in a footnote. The key column (the model) may be shortened with a
middle ellipsis, never to two names that look alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

KEY_SHORTEST = 12  # a key is not shortened below this many cells (more when names would look alike)
KEY_RESERVED = 16  # cells the key keeps while the other columns are chosen
KEY_COMFORTABLE = 24  # cells the key gets before the other columns unwrap their headers
TABLES = 2  # the main table and one more for the columns moved out of it
WIDEST_TERMINAL = 500  # beyond this, a footnote does not suggest a wider terminal
ELLIPSIS = "…"


@dataclass(frozen=True, eq=False)
class FitColumn:
    """One column: its header, per row the atoms of its cell, and how much it matters (0: always
    shown; higher numbers are moved out first)."""

    header: str
    cells: list[list[str]]
    priority: int
    separator: str = " "
    justify: str = "right"

    @property
    def narrowest(self) -> int:
        """Width with the header wrapped at spaces and one atom per line."""
        words = [cell_len(w) for w in self.header.split()]
        atoms = [cell_len(a) + cell_len(self.separator.rstrip()) for cell in self.cells for a in cell]
        return max(words + atoms)

    @property
    def widest(self) -> int:
        """Width with the header and every cell on one line."""
        lines = [cell_len(self.separator.join(cell)) for cell in self.cells]
        return max([cell_len(self.header), *lines])

    def lines(self, row: int, width: int) -> str:
        """The cell of `row` packed into lines of at most `width` cells, atoms kept whole."""
        lines: list[str] = []
        for atom in self.cells[row]:
            joined = f"{lines[-1]}{self.separator}{atom}" if lines else atom
            if lines and cell_len(joined) <= width:
                lines[-1] = joined
            else:
                if lines:
                    lines[-1] += self.separator.rstrip()
                lines.append(atom)
        return "\n".join(lines)


def shorten(name: str, width: int, head_share: float) -> str:
    """`name` in `width` cells: its start and end around an ellipsis (`head_share` of the room
    goes to the start)."""
    if cell_len(name) <= width:
        return name
    room = max(width - 1, 0)
    head = round(room * head_share)
    tail = room - head
    return name[:head] + ELLIPSIS + (name[len(name) - tail :] if tail else "")


def distinct_names(names: list[str], width: int) -> list[str] | None:
    """The names shortened to `width` cells so that no two look alike, or None when they cannot be.
    The end of a name usually tells models apart (`…claude-sonnet-4.5`), so it is kept first."""
    for head_share in (0.0, 1 / 3, 1 / 2, 2 / 3, 1.0):
        short = [shorten(name, width, head_share) for name in names]
        if len(set(short)) == len(set(names)):
            return short
    return None


def _table_width(widths: Iterable[int]) -> int:
    """What `_table` adds around its columns: one divider and one space of padding between two."""
    widths = list(widths)
    return sum(widths) + 2 * (len(widths) - 1)


@dataclass
class _Section:
    key_width: int
    columns: list[tuple[FitColumn, int]]  # in display order, with their widths


class FittedTable:
    """Rows keyed by `keys` (shown in the first column, headed `key_header`); `columns` are laid out
    for the width the table is printed at. `hint` says where the left-out columns can be seen."""

    def __init__(self, title: str, key_header: str, keys: list[str], columns: list[FitColumn], hint: str) -> None:
        self.title = title
        self.key_header = key_header
        self.keys = keys
        self.columns = columns
        self.hint = hint

    def _key_bounds(self) -> tuple[int, int]:
        """The key column's narrowest width (names still distinct) and its widest."""
        widest = max(cell_len(k) for k in [self.key_header, *self.keys])
        for candidate in range(min(widest, KEY_SHORTEST), widest + 1):
            if distinct_names(self.keys, candidate) is not None:
                return candidate, widest
        return widest, widest

    def layout(self, width: int) -> tuple[list[_Section], list[FitColumn]]:
        """The tables to print at `width` (a main one and, if needed, one more) and the columns
        left out of both."""
        key_min, key_max = self._key_bounds()
        reserved = max(key_min, min(key_max, KEY_RESERVED))
        pending = sorted(self.columns, key=lambda c: c.priority)  # stable: display order within a priority
        required = [c for c in pending if c.priority == 0]
        # the columns always shown stay on one line unless even they alone do not fit
        unwrapped = _table_width([reserved, *(c.widest for c in required)]) <= width
        start = {id(c): c.widest if unwrapped and c.priority == 0 else c.narrowest for c in self.columns}
        sections = []
        for _ in range(TABLES):
            chosen: list[FitColumn] = []
            for column in list(pending):
                trial = [reserved, *(start[id(c)] for c in chosen), start[id(column)]]
                if (column.priority == 0 and not sections) or _table_width(trial) <= width:
                    chosen.append(column)
                    pending.remove(column)
            if not chosen:
                break
            sections.append(self._widen(chosen, start, key_min, key_max, reserved, width))
        return sections, pending

    def _widen(
        self, chosen: list[FitColumn], start: dict[int, int], key_min: int, key_max: int, reserved: int, width: int
    ) -> _Section:
        """Give the room left to the key (up to a comfortable width), then to the other columns up
        to one line each (the ones needing least first, so that most rows stay one line high), then
        to the key again."""
        ordered = [c for c in self.columns if any(c is x for x in chosen)]
        widths = [start[id(c)] for c in ordered]
        key = reserved
        spare = width - _table_width([key, *widths])
        grow = max(min(KEY_COMFORTABLE - key, key_max - key, spare), 0)
        key += grow
        spare -= grow
        for i in sorted(range(len(ordered)), key=lambda i: ordered[i].widest - widths[i]):
            grow = max(min(ordered[i].widest - widths[i], spare), 0)
            widths[i] += grow
            spare -= grow
        grow = max(min(key_max - key, spare), 0)
        key += grow
        spare -= grow
        if spare < 0:  # the columns that must be shown do not fit: the key gives up what it can
            key = max(key_min, key + spare)
        return _Section(key, list(zip(ordered, widths, strict=True)))

    def _table(self, section: _Section, title: str | None) -> Table:
        names = distinct_names(self.keys, section.key_width) or self.keys
        rows = [[c.lines(row, w) for c, w in section.columns] for row in range(len(names))]
        table = Table(
            title=title,
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1, 0, 0),
            show_lines=any("\n" in cell for cells in rows for cell in cells),  # a blank line between tall rows
        )
        table.add_column(self.key_header, width=section.key_width, no_wrap=True)
        for column, width in section.columns:
            table.add_column(column.header, width=width, justify=column.justify)  # type: ignore[arg-type]
        for name, cells in zip(names, rows, strict=True):
            table.add_row(Text(name), *(Text(cell) for cell in cells))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        sections, left_out = self.layout(width)
        for index, section in enumerate(sections):
            yield self._table(section, self.title if index == 0 else None)
            if index < len(sections) - 1:
                yield Text("")
        if left_out:
            names = ", ".join(c.header for c in self.columns if any(c is x for x in left_out))
            full = self.width_for_everything(width)
            wider = f"a terminal of {full} columns shows them; " if full else ""
            yield Text(f"not shown at {width} columns: {names} ({wider}{self.hint})", style="dim")

    def width_for_everything(self, start: int) -> int | None:
        """The narrowest width from `start` at which no column is left out (None: none up to
        `WIDEST_TERMINAL`)."""
        for width in range(start, WIDEST_TERMINAL + 1):
            if not self.layout(width)[1]:
                return width
        return None
