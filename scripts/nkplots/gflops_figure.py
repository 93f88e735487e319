"""Figure 1: GFLOPS per case, backends as grouped bars, the measured peak as a line (BLIS style)."""

from typing import Optional

from matplotlib.lines import Line2D

from .bars import backend_legend_entries, draw_grouped_bars, noisy_legend_entry, unmeasured_legend_entry
from .groups import ResultGroup
from .style import PEAK_COLOUR, Palette, label_cases, legend_outside, new_figure, set_title, width_for

STEM = "gflops"


def reason_to_skip(group: ResultGroup) -> Optional[str]:
    return None  # any group has rows: even one with no timed row shows what was not timed


def build(group: ResultGroup, palette: Palette):
    fig, axes = new_figure(width_for(len(group.cases)), 4.8)
    axis = axes[0][0]
    draw_speeds(axis, group, palette.ordered(group.backends), palette, STEM)
    label_cases(axis, range(len(group.cases)), group.cases)
    set_title(fig, axis, "GFLOPS per case", group)
    return fig


def draw_speeds(axis, group: ResultGroup, backends: list[str], palette: Palette, gid: str) -> None:
    """Median GFLOPS bars of the given backends under the measured peak, with their legend; bars of
    rows flagged noisy are hatched."""
    def median_gflops(case, backend):
        row = group.row(case, backend)
        return row.median_gflops if row is not None else None

    hatched = draw_grouped_bars(axis, group, backends, palette, gid, median_gflops)
    for peak in group.peaks:
        axis.axhline(peak.gflops, color=PEAK_COLOUR, linestyle="--", linewidth=1.3, gid="peak",
                     label=f"measured {peak.what}\n{peak.gflops:.1f} GFLOPS")

    speeds = [row.median_gflops for row in group.rows.values()
              if row.backend in backends and row.median_gflops is not None]
    top = max(speeds + [peak.gflops for peak in group.peaks], default=1.0)
    axis.set_ylim(0, top * 1.08)
    axis.set_ylabel("GFLOPS (median of repetitions)")
    axis.grid(axis="y", alpha=0.3)

    unknown_peak = None if group.peaks else Line2D([], [], linestyle="none",
                                                   label="measured peak: unknown\n(no JSON metadata)")
    legend_outside(axis, backend_legend_entries(backends, palette, group.backend_label),
                   [unknown_peak, unmeasured_legend_entry(group, backends), noisy_legend_entry(hatched)])
