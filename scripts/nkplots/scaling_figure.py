"""Thread scaling, for a (type, ISA) measured at two or more thread counts (nkbench run
--threads 1,2): GFLOPS against threads per backend (the geometric mean over the cases it timed
at every count) under the peak of the cores used, then each backend's speed-up on N threads
over its own speed on the fewest threads, per case, against the ideal (one panel per N). A case
that did not run on the fewest threads (one with its own thread count in the suite) has no speed-up:
it is left out of the panels, and their legend names it and the counts it ran at."""

from typing import Optional

from matplotlib.lines import Line2D

from .bars import (backend_legend_entries, draw_grouped_bars, noisy_legend_entry, noisy_rows,
                   unmeasured_legend_entry)
from .captions import describe_runs
from .groups import GroupKey, ResultGroup
from .ratios import geometric_mean
from .style import (PEAK_COLOUR, label_cases, legend_outside, new_figure, ratio_axis, title_and_caption,
                    width_for)

STEM = "scaling"
LISTED_ALONE = 6  # cases named one by one in a panel's note on cases left out; the rest are counted


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


def threads_label(threads: int) -> str:
    """"1 thread", "2 threads": how the notes name a count."""
    return f"{threads} thread{'s' if threads > 1 else ''}"


def compared_cases(base: ResultGroup, group: ResultGroup) -> list[str]:
    """The group's cases that also ran on the base's threads: only they have a speed-up to draw."""
    return [case for case in group.cases if case in base.cases]


def untimed_slots(base: ResultGroup, group: ResultGroup):
    """Why a slot of a compared case has no bar: the row was not timed on the group's threads,
    or not on the base's (skipped there, or the backend did not run the case there)."""
    fewest = threads_label(base.key.threads)

    def status(case: str, backend: str) -> Optional[str]:
        fewer, more = base.row(case, backend), group.row(case, backend)
        if more is None:
            return None  # no row, no slot: as in the GFLOPS figure
        if not more.passed:
            return more.status
        if fewer is None:
            return f"not run at {fewest}"
        return None if fewer.passed else f"{fewer.status} at {fewest}"
    return status


def reason_to_skip(members: list[ResultGroup]) -> Optional[str]:
    base = members[0]
    for group in members[1:]:
        if any(speedup(base, group, case, backend) for case in group.cases for backend in group.backends):
            return None
    return f"no case timed on the same backend at {base.key.threads} thread(s) and at more"


def build(members: list[ResultGroup], palette):
    base, higher = members[0], members[1:]
    cases = max(len(compared_cases(base, group)) for group in higher)
    fig, axes = new_figure(width_for(cases), 3.8 * len(members), rows=len(members))
    draw_gflops_by_threads(axes[0][0], members, palette)
    for axis_row, group in zip(axes[1:], higher):
        draw_panel(axis_row[0], members, group, palette)
    counts = " / ".join(str(group.key.threads) for group in members)
    title_and_caption(fig, axes[0][0], f"Thread scaling — {base.key.of_one_thread.label}",
                      describe_runs(base).replace(f"threads: {base.key.threads}", f"threads: {counts}"))
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


def draw_panel(axis, members: list[ResultGroup], group: ResultGroup, palette) -> None:
    """Speed-ups on the group's threads over the base's (members[0]), for the cases that ran on both."""
    base = members[0]
    backends = palette.ordered(group.backends)
    cases = compared_cases(base, group)
    untimed = untimed_slots(base, group)
    hatched = draw_grouped_bars(axis, group, backends, palette, f"{STEM}-{group.key.threads}t",
                                lambda case, backend: speedup(base, group, case, backend),
                                cases=cases, untimed=untimed, noisy=noisy_rows(base, group))
    if cases:
        label_cases(axis, range(len(cases)), cases)
    else:
        axis.set_xticks([])
    ideal = group.key.threads / base.key.threads
    axis.axhline(ideal, color="#333333", linewidth=1.0, linestyle="--", gid=f"ideal-{group.key.threads}t",
                 label=f"ideal: {ideal:g}×")
    values = [value for case in cases for backend in backends
              for value in [speedup(base, group, case, backend)] if value is not None]
    ratio_axis(axis, values + [ideal], f"{group.key.threads} threads / {base.key.threads} thread(s)")

    def legend_label(backend: str) -> str:
        mean = geometric_mean([value for case in cases
                               for value in [speedup(base, group, case, backend)] if value is not None])
        return f"{backend}: geomean {mean:.2f}×" if mean else f"{backend}: n/a"

    legend_outside(axis, backend_legend_entries(backends, palette, legend_label),
                   [unmeasured_legend_entry(group, backends, cases, untimed),
                    noisy_legend_entry(hatched, "either count's row"),
                    left_out_legend_entry(members, group)])


def left_out_legend_entry(members: list[ResultGroup], group: ResultGroup) -> Optional[Line2D]:
    """A note naming the group's cases that did not run on the fewest threads, with the counts they
    ran at (a case with its own thread count in the suite): without it their absence from the panel
    would look like a case that was lost."""
    base = members[0]
    left_out = [case for case in group.cases if case not in base.cases]
    if not left_out:
        return None
    lines = []
    for case in left_out[:LISTED_ALONE]:
        counts = " / ".join(str(other.key.threads) for other in members if case in other.cases)
        lines.append(f"  {case}: ran at {counts} threads only")
    if len(left_out) > LISTED_ALONE:
        lines.append(f"  and {len(left_out) - LISTED_ALONE} more")
    fewest = threads_label(base.key.threads)
    return Line2D([], [], linestyle="none",
                  label=f"not in this panel (no run at {fewest}):\n" + "\n".join(lines))
