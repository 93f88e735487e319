"""Grouped bars: one group per case, one bar per backend, a mark where a row was not timed, and a
hatch where it was timed but flagged noisy."""

from collections import Counter
from typing import Callable, Optional

from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from .groups import ResultGroup
from .style import NOISY_HATCH, UNMEASURED_MARK, Palette

GROUP_WIDTH = 0.82  # of the unit spacing between cases; the rest separates the groups

# (case, backend) -> the status of a slot that has no bar because a row was not timed, else None.
Untimed = Callable[[str, str], Optional[str]]
# (case, backend) -> whether the bar's value rests on a row flagged noisy.
Noisy = Callable[[str, str], bool]


def slot_offsets(count: int) -> list[float]:
    width = GROUP_WIDTH / count
    return [(index - (count - 1) / 2) * width for index in range(count)]


def untimed_rows(group: ResultGroup) -> Untimed:
    """The group's own rows that did not pass: the usual reason for a slot without a bar."""
    def status(case: str, backend: str) -> Optional[str]:
        row = group.row(case, backend)
        return row.status if row is not None and not row.passed else None
    return status


def noisy_rows(*groups: ResultGroup) -> Noisy:
    """A value from rows of several groups (a speed-up over the base's threads) is as unsure as
    the noisiest of them."""
    def noisy(case: str, backend: str) -> bool:
        return any(group.noisy(case, backend) for group in groups)
    return noisy


def draw_grouped_bars(axis, group: ResultGroup, backends: list[str], palette: Palette, gid: str,
                      value: Callable[[str, str], Optional[float]], cases: Optional[list[str]] = None,
                      untimed: Optional[Untimed] = None, noisy: Optional[Noisy] = None) -> int:
    """Bars of height value(case, backend) where it is known, over `cases` (the group's by default).
    Each bar gets the SVG id 'GID:BACKEND:CASE' so that tests (and readers of the SVG) can find it;
    slots that were not timed get a cross at their foot instead of a bar ('GID-unmeasured:...');
    bars whose rows were flagged noisy are hatched, so that a reader sees which are less sure.
    Returns the number of hatched bars, for the legend."""
    cases = group.cases if cases is None else cases
    untimed = untimed or untimed_rows(group)
    noisy = noisy or noisy_rows(group)
    offsets = slot_offsets(len(backends))
    width = GROUP_WIDTH / len(backends)
    foot = blended_transform_factory(axis.transData, axis.transAxes)
    hatched = 0
    for backend, offset in zip(backends, offsets):
        measured = [(index, case, value(case, backend)) for index, case in enumerate(cases)]
        measured = [(index, case, height) for index, case, height in measured if height is not None]
        bars = axis.bar([index + offset for index, _, _ in measured],
                        [height for _, _, height in measured], width,
                        color=palette.colour(backend), edgecolor="#333333", linewidth=0.3)
        for patch, (_, case, _) in zip(bars.patches, measured):
            patch.set_gid(f"{gid}:{backend}:{case}")
            if noisy(case, backend):
                patch.set_hatch(NOISY_HATCH)
                hatched += 1
        for index, case in enumerate(cases):
            if untimed(case, backend) is not None:
                mark, = axis.plot(index + offset, 0.03, UNMEASURED_MARK, transform=foot, clip_on=False,
                                  markerfacecolor=palette.colour(backend), markeredgecolor="#333333",
                                  markersize=7, markeredgewidth=0.6)
                mark.set_gid(f"{gid}-unmeasured:{backend}:{case}")
    return hatched


def backend_legend_entries(backends: list[str], palette: Palette,
                           label: Callable[[str], str] = str) -> list[Patch]:
    """Drawn from the palette, not from the bars: a backend with no timed row has no bar to copy."""
    return [Patch(facecolor=palette.colour(backend), edgecolor="#333333", linewidth=0.3, label=label(backend))
            for backend in backends]


def unmeasured_legend_entry(group: ResultGroup, backends: list[str], cases: Optional[list[str]] = None,
                            untimed: Optional[Untimed] = None) -> Optional[Line2D]:
    """A legend entry explaining the crosses, with counts per backend and status."""
    cases = group.cases if cases is None else cases
    untimed = untimed or untimed_rows(group)
    counts = Counter((backend, status) for case in cases for backend in backends
                     for status in [untimed(case, backend)] if status is not None)
    if not counts:
        return None
    details = "\n".join(f"  {backend}: {count} {status}"
                        for (backend, status), count in sorted(counts.items()))
    return Line2D([], [], linestyle="none", marker=UNMEASURED_MARK, markerfacecolor="#bbbbbb",
                  markeredgecolor="#333333", markersize=7, markeredgewidth=0.6,
                  label=f"not timed (no bar):\n{details}")


def noisy_legend_entry(hatched: int, rows: str = "row") -> Optional[Patch]:
    """A legend entry explaining the hatch; `rows` names the rows a bar's value rests on where it
    is not the bar's own alone (a ratio also rests on libxsmm's)."""
    if not hatched:
        return None
    bars = "1 bar" if hatched == 1 else f"{hatched} bars"
    return Patch(facecolor="white", edgecolor="#333333", linewidth=0.3, hatch=NOISY_HATCH,
                 label=f"hatched ({bars}): {rows} flagged noisy\n(spread above --noisy-iqr,\n"
                       "or faster than the measured peak)")
