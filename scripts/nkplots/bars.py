"""Grouped bars: one group per case, one bar per backend, and a mark where a row was not timed."""

from collections import Counter
from typing import Callable, Optional

from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from .groups import ResultGroup
from .style import UNMEASURED_MARK, Palette

GROUP_WIDTH = 0.82  # of the unit spacing between cases; the rest separates the groups


def slot_offsets(count: int) -> list[float]:
    width = GROUP_WIDTH / count
    return [(index - (count - 1) / 2) * width for index in range(count)]


def draw_grouped_bars(axis, group: ResultGroup, backends: list[str], palette: Palette, gid: str,
                      value: Callable[[str, str], Optional[float]]) -> None:
    """Bars of height value(case, backend) where it is known. Each bar gets the SVG id
    'GID:BACKEND:CASE' so that tests (and readers of the SVG) can find it; rows that were not
    timed get a cross at the foot of their slot instead of a bar ('GID-unmeasured:...')."""
    offsets = slot_offsets(len(backends))
    width = GROUP_WIDTH / len(backends)
    foot = blended_transform_factory(axis.transData, axis.transAxes)
    for backend, offset in zip(backends, offsets):
        measured = [(index, case, value(case, backend)) for index, case in enumerate(group.cases)]
        measured = [(index, case, height) for index, case, height in measured if height is not None]
        bars = axis.bar([index + offset for index, _, _ in measured],
                        [height for _, _, height in measured], width,
                        color=palette.colour(backend), edgecolor="#333333", linewidth=0.3)
        for patch, (_, case, _) in zip(bars.patches, measured):
            patch.set_gid(f"{gid}:{backend}:{case}")
        for index, case in enumerate(group.cases):
            row = group.row(case, backend)
            if row is not None and not row.passed:
                mark, = axis.plot(index + offset, 0.03, UNMEASURED_MARK, transform=foot, clip_on=False,
                                  markerfacecolor=palette.colour(backend), markeredgecolor="#333333",
                                  markersize=7, markeredgewidth=0.6)
                mark.set_gid(f"{gid}-unmeasured:{backend}:{case}")


def backend_legend_entries(backends: list[str], palette: Palette,
                           label: Callable[[str], str] = str) -> list[Patch]:
    """Drawn from the palette, not from the bars: a backend with no timed row has no bar to copy."""
    return [Patch(facecolor=palette.colour(backend), edgecolor="#333333", linewidth=0.3, label=label(backend))
            for backend in backends]


def unmeasured_legend_entry(group: ResultGroup, backends: list[str]) -> Optional[Line2D]:
    """A legend entry explaining the crosses, with counts per backend and status."""
    counts = Counter((row.backend, row.status) for row in group.rows.values()
                     if not row.passed and row.backend in backends)
    if not counts:
        return None
    details = "\n".join(f"  {backend}: {count} {status}"
                        for (backend, status), count in sorted(counts.items()))
    return Line2D([], [], linestyle="none", marker=UNMEASURED_MARK, markerfacecolor="#bbbbbb",
                  markeredgecolor="#333333", markersize=7, markeredgewidth=0.6,
                  label=f"not timed (no bar):\n{details}")
