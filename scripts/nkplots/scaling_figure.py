"""Thread scaling, for a (type, ISA) measured at two or more thread counts (nkbench run
--threads 1,2): GFLOPS against threads per backend (the geometric mean over the cases it timed
at every count) under the peak of the cores used, then each backend's speed-up on N threads
over its own speed on the fewest threads, per case, against the ideal (one panel per N)."""

from typing import Optional

from .bars import backend_legend_entries, draw_grouped_bars, unmeasured_legend_entry
from .captions import describe_runs
from .groups import GroupKey, ResultGroup
from .ratios import geometric_mean
from .style import PEAK_COLOUR, label_cases, legend_outside, new_figure, ratio_axis, width_for

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
    fig, axes = new_figure(width_for(cases), 3.8 * len(members), rows=len(members))
    draw_gflops_by_threads(axes[0][0], members, palette)
    for axis_row, group in zip(axes[1:], higher):
        draw_panel(axis_row[0], base, group, palette)
    key = base.key.of_one_thread
    fig.suptitle(f"Thread scaling — {key.label}", fontweight="bold", fontsize=11)
    counts = " / ".join(str(group.key.threads) for group in members)
    axes[0][0].set_title(describe_runs(base).replace(f"threads: {base.key.threads}", f"threads: {counts}"),
                         loc="left", color="#555555")
    return fig


def draw_gflops_by_threads(axis, members: list[ResultGroup], palette) -> None:
    """One line per backend through its geomean GFLOPS at each count, over the cases it timed at
    every count (so that a case skipped at some count does not bend the line), and the peak."""
    counts = [group.key.threads for group in members]
    backends = palette.ordered(list(dict.fromkeys(b for group in members for b in group.backends)))
    tops = []
    for backend in backends:
        cases = [case for case in members[0].cases
                 if all(timed(group, case, backend) for group in members)]
        if not cases:
            continue
        means = [geometric_mean([group.row(case, backend).median_gflops for case in cases]) for group in members]
        line, = axis.plot(counts, means, marker="o", color=palette.colour(backend),
                          label=f"{backend} ({len(cases)} of {len(members[0].cases)} cases)")
        line.set_gid(f"{STEM}-gflops:{backend}")
        tops += means
    peaks = [group.peaks[0].gflops if group.peaks else None for group in members]
    if all(peaks):
        axis.plot(counts, peaks, linestyle="--", marker="_", color=PEAK_COLOUR, gid="peak",
                  label=f"measured {members[0].peaks[0].what.split(' (')[0]} of the cores used")
        tops += peaks
    axis.set_xticks(counts, [str(count) for count in counts])
    axis.set_xlabel("threads (one per core)")
    axis.set_ylim(0, max(tops, default=1.0) * 1.08)
    axis.set_ylabel("GFLOPS (geomean over cases)")
    axis.grid(axis="y", alpha=0.3)
    legend_outside(axis)


def timed(group: ResultGroup, case: str, backend: str) -> bool:
    row = group.row(case, backend)
    return row is not None and bool(row.median_gflops)


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
