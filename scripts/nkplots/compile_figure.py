"""Figure 3: one-time cost per backend (MLIR compile + JIT, libxsmm dispatch, oneDNN primitive
creation) as a distribution over the cases: a box and every case as a point, on a log scale."""

from statistics import median
from typing import Optional

from .groups import ResultGroup
from .style import Palette, new_figure, set_title

STEM = "compile"


def compile_times(group: ResultGroup, backend: str) -> list[float]:
    """compile_ms of the backend's timed rows; 0 (nothing to compile, or a skipped row) has no log."""
    rows = (group.row(case, backend) for case in group.cases)
    return [row.compile_ms for row in rows
            if row is not None and row.passed and row.compile_ms is not None and row.compile_ms > 0]


def reason_to_skip(group: ResultGroup) -> Optional[str]:
    if not any(compile_times(group, backend) for backend in group.backends):
        return "no timed row with a compile_ms above 0"
    return None


def build(group: ResultGroup, palette: Palette):
    backends = [b for b in palette.ordered(group.backends) if compile_times(group, b)]
    fig, axes = new_figure(max(6.5, 2.5 + 1.1 * len(backends)), 4.6)
    axis = axes[0][0]
    for position, backend in enumerate(backends):
        draw_distribution(axis, position, backend, compile_times(group, backend), palette)
    axis.set_yscale("log")
    low, high = axis.get_ylim()
    axis.set_ylim(low, high * 5)  # room for the median labels above the highest point
    axis.set_ylabel("compile_ms: one-time cost before the first call\n(ms, log scale)")
    axis.set_xticks(range(len(backends)), backends)
    axis.set_xlabel("box: quartiles; whiskers: fastest to slowest; points: one per timed case")
    axis.set_xlim(-0.6, len(backends) - 0.4)
    axis.grid(axis="y", which="major", alpha=0.3)
    set_title(fig, axis, "Compile / JIT / primitive-creation cost", group)
    return fig


def draw_distribution(axis, position: int, backend: str, times_ms: list[float], palette: Palette) -> None:
    axis.boxplot(times_ms, positions=[position], widths=0.55, whis=(0, 100), showfliers=False,
                 medianprops={"color": "#333333"}, boxprops={"color": "#777777"},
                 whiskerprops={"color": "#777777"}, capprops={"color": "#777777"})
    # Evenly spread, not random: the same input draws the same figure.
    spread = [0.3 * (index / max(1, len(times_ms) - 1) - 0.5) for index in range(len(times_ms))]
    points = axis.scatter([position + offset for offset in spread], times_ms, s=14, zorder=3,
                          color=palette.colour(backend), edgecolor="#333333", linewidth=0.4)
    points.set_gid(f"{STEM}:{backend}")
    axis.annotate(f"median {median(times_ms):.3g} ms\n{len(times_ms)} cases", (position, max(times_ms)),
                  ha="center", va="bottom", fontsize=7, xytext=(0, 4), textcoords="offset points")
