"""Figure 2: each backend's speed relative to libxsmm per case, and its geometric mean."""

from typing import Optional

from .bars import (GROUP_WIDTH, backend_legend_entries, draw_grouped_bars, noisy_legend_entry, slot_offsets,
                   unmeasured_legend_entry)
from .groups import ResultGroup
from .ratios import BASELINE, backend_ratios, compared_backends, has_baseline, ratio_is_noisy
from .style import (Palette, label_cases_with_geomean, legend_outside, new_figure, ratio_axis, set_title,
                    times, width_for)

STEM = "ratio"


def reason_to_skip(group: ResultGroup) -> Optional[str]:
    if not has_baseline(group):
        return f"no {BASELINE} rows"
    if not any(backend_ratios(group, backend).per_case for backend in compared_backends(group)):
        return f"no case where {BASELINE} and another backend were both timed"
    return None


def build(group: ResultGroup, palette: Palette):
    backends = palette.ordered(compared_backends(group))
    ratios = {backend: backend_ratios(group, backend) for backend in backends}
    fig, axes = new_figure(width_for(len(group.cases) + 1), 4.8)
    axis = axes[0][0]

    hatched = draw_grouped_bars(axis, group, backends, palette, STEM,
                                lambda case, backend: ratios[backend].per_case.get(case),
                                noisy=lambda case, backend: ratio_is_noisy(group, case, backend))
    geomean_x = label_cases_with_geomean(axis, group.cases)
    draw_geomeans(axis, geomean_x, [ratios[backend] for backend in backends], palette)
    axis.axhline(1.0, color="#333333", linewidth=1.0, label=f"{group.backend_label(BASELINE)} = 1")
    values = [value for summary in ratios.values() for value in summary.per_case.values()]
    ratio_axis(axis, values, f"median GFLOPS / {BASELINE}'s median GFLOPS")

    entries = backend_legend_entries(backends, palette,
                                     lambda backend: legend_label(ratios[backend], group.backend_label(backend)))
    legend_outside(axis, entries, [unmeasured_legend_entry(group, backends),
                                   noisy_legend_entry(hatched, f"its or {BASELINE}'s row")])
    set_title(fig, axis, f"Speed relative to {BASELINE} (same run)", group)
    return fig


def draw_geomeans(axis, x: float, summaries, palette: Palette) -> None:
    width = GROUP_WIDTH / len(summaries)
    for summary, offset in zip(summaries, slot_offsets(len(summaries))):
        if summary.geomean is None:
            continue
        bar, = axis.bar(x + offset, summary.geomean, width, color=palette.colour(summary.backend),
                        edgecolor="#333333", linewidth=0.8)
        bar.set_gid(f"{STEM}-geomean:{summary.backend}")
        # Upright, because the bars of one group are narrower than a horizontal label.
        axis.annotate(times(summary.geomean), (x + offset, summary.geomean), ha="center", va="bottom",
                      rotation=90, fontsize=7, xytext=(0, 2), textcoords="offset points")


def legend_label(summary, name: str) -> str:
    if summary.geomean is None:
        return f"{name}: geomean n/a"
    cases = len(summary.per_case)
    count = f"{cases} cases" if cases == summary.case_count else f"{cases} of {summary.case_count} cases"
    return f"{name}: geomean {summary.geomean:.3f} ({count})"
