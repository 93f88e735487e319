"""Thread scaling: each backend's speed-up on N threads over its own speed on the fewest threads
of the run, per case, against the ideal (one panel per N). Drawn for a (type, ISA) measured at
two or more thread counts (nkbench run --threads 1,2)."""

from typing import Optional

from .bars import backend_legend_entries, draw_grouped_bars, unmeasured_legend_entry
from .captions import describe_runs
from .groups import GroupKey, ResultGroup
from .ratios import geometric_mean
from .style import label_cases, legend_outside, new_figure, ratio_axis, width_for

STEM = "scaling"


def scaling_sets(groups: list[ResultGroup]) -> dict[GroupKey, list[ResultGroup]]:
    """The groups of each (type, ISA) that ran at more than one thread count, fewest threads first."""
    sets: dict[GroupKey, list[ResultGroup]] = {}
    for group in groups:
        sets.setdefault(group.key.of_one_thread, []).append(group)
    return {key: sorted(members, key=lambda group: group.key.threads)
            for key, members in sets.items() if len(members) > 1}


def speedup(base: ResultGroup, group: ResultGroup, case: str, backend: str) -> Optional[float]:
    """Speed on the group's threads over the same backend's on the base's, where both were timed."""
    fewer, more = base.row(case, backend), group.row(case, backend)
    if fewer is None or more is None or not fewer.median_gflops or not more.median_gflops:
        return None
    return more.median_gflops / fewer.median_gflops


def reason_to_skip(members: list[ResultGroup]) -> Optional[str]:
    base = members[0]
    for group in members[1:]:
        if any(speedup(base, group, case, backend) for case in group.cases for backend in group.backends):
            return None
    return f"no case timed on the same backend at {base.key.threads} thread(s) and at more"


def build(members: list[ResultGroup], palette):
    base, higher = members[0], members[1:]
    cases = max(len(group.cases) for group in higher)
    fig, axes = new_figure(width_for(cases), 4.2 * len(higher), rows=len(higher))
    for axis_row, group in zip(axes, higher):
        draw_panel(axis_row[0], base, group, palette)
    key = base.key.of_one_thread
    fig.suptitle(f"Thread scaling — {key.label}", fontweight="bold", fontsize=11)
    axes[0][0].set_title(describe_runs(base) + f" vs {', '.join(str(g.key.threads) for g in higher)} threads",
                         loc="left", color="#555555")
    return fig


def draw_panel(axis, base: ResultGroup, group: ResultGroup, palette) -> None:
    backends = palette.ordered(group.backends)
    draw_grouped_bars(axis, group, backends, palette, f"{STEM}-{group.key.threads}t",
                      lambda case, backend: speedup(base, group, case, backend))
    label_cases(axis, range(len(group.cases)), group.cases)
    ideal = group.key.threads / base.key.threads
    axis.axhline(ideal, color="#333333", linewidth=1.0, linestyle="--", gid=f"ideal-{group.key.threads}t",
                 label=f"ideal: {ideal:g}×")
    values = [value for case in group.cases for backend in backends
              for value in [speedup(base, group, case, backend)] if value is not None]
    ratio_axis(axis, values + [ideal], f"{group.key.threads} threads / {base.key.threads} thread(s)")

    def legend_label(backend: str) -> str:
        mean = geometric_mean([value for case in group.cases
                               for value in [speedup(base, group, case, backend)] if value is not None])
        return f"{backend}: geomean {mean:.2f}×" if mean else f"{backend}: n/a"

    legend_outside(axis, backend_legend_entries(backends, palette, legend_label),
                   [unmeasured_legend_entry(group, backends)])
