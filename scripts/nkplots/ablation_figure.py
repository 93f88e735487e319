"""Figure 4: the nanokernel ablation, `mlir` against `mlir-default` (same payload and tiling,
vector.contract left to upstream's generic lowering): GFLOPS per case and the speedup factor."""

from typing import Optional

from .bars import GROUP_WIDTH, noisy_legend_entry, noisy_rows
from .gflops_figure import draw_speeds
from .groups import ResultGroup
from .ratios import geometric_mean
from .style import (NOISY_HATCH, Palette, label_cases_with_geomean, legend_outside, new_figure, ratio_axis,
                    set_title, times, width_for)

STEM = "ablation"
NANOKERNEL, GENERIC = "mlir", "mlir-default"


def speedups(group: ResultGroup) -> dict[str, float]:
    """mlir / mlir-default GFLOPS for each case where both were timed."""
    result = {}
    for case in group.cases:
        fast, generic = group.row(case, NANOKERNEL), group.row(case, GENERIC)
        if fast and generic and fast.median_gflops and generic.median_gflops:
            result[case] = fast.median_gflops / generic.median_gflops
    return result


def reason_to_skip(group: ResultGroup) -> Optional[str]:
    if not speedups(group):
        return f"no case where both {NANOKERNEL} and {GENERIC} were timed"
    return None


def build(group: ResultGroup, palette: Palette):
    fig, (speed_axes, factor_axes) = new_figure(width_for(len(group.cases) + 1, per_group=0.5), 6.4, rows=2,
                                                sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    speed_axis, factor_axis = speed_axes[0], factor_axes[0]
    draw_speeds(speed_axis, group, [NANOKERNEL, GENERIC], palette, STEM)
    geomean_x = label_cases_with_geomean(factor_axis, group.cases)
    draw_factors(factor_axis, group, geomean_x, palette)
    set_title(fig, speed_axis, f"Nanokernel ablation: {NANOKERNEL} vs {GENERIC}", group)
    return fig


def draw_factors(axis, group: ResultGroup, geomean_x: float, palette: Palette) -> None:
    factors = speedups(group)
    positions = [group.cases.index(case) for case in factors]
    bars = axis.bar(positions, list(factors.values()), GROUP_WIDTH / 2, color=palette.colour(NANOKERNEL),
                    edgecolor="#333333", linewidth=0.3, label=f"{NANOKERNEL} / {GENERIC}")
    noisy = noisy_rows(group)
    hatched = [case for case in factors if noisy(case, NANOKERNEL) or noisy(case, GENERIC)]
    for bar, case in zip(bars.patches, factors):
        bar.set_gid(f"{STEM}-speedup:{case}")
        if case in hatched:
            bar.set_hatch(NOISY_HATCH)
    geomean = geometric_mean(list(factors.values()))
    geomean_bar, = axis.bar(geomean_x, geomean, GROUP_WIDTH / 2, color=palette.colour(NANOKERNEL),
                            edgecolor="#333333", linewidth=0.8)
    geomean_bar.set_gid(f"{STEM}-speedup-geomean")
    for x, factor in [*zip(positions, factors.values()), (geomean_x, geomean)]:
        axis.annotate(times(factor), (x, factor), ha="center", va="bottom", fontsize=7,
                      xytext=(0, 2), textcoords="offset points")
    ratio_axis(axis, list(factors.values()), f"speedup of {NANOKERNEL}\nover {GENERIC}")
    legend_outside(axis, trailing=[noisy_legend_entry(len(hatched), "either row")])
