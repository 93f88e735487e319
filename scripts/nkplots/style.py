"""Look shared by every figure: backend colours, fonts, the caption, case axes, saving."""

import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from .captions import describe_runs  # noqa: E402
from .groups import ResultGroup  # noqa: E402

# Related backends share a hue (tab20 pairs): mlir / mlir-default, onednn / onednn-packed.
KNOWN_BACKEND_COLOURS = {
    "mlir": "#1f77b4",
    "mlir-default": "#aec7e8",
    "libxsmm": "#ff7f0e",
    "onednn": "#2ca02c",
    "onednn-packed": "#98df8a",
    "eigen": "#9467bd",
}
OTHER_COLOURS = ("#d62728", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
PEAK_COLOUR = "#d62728"
UNMEASURED_MARK = "X"  # filled cross, in the backend's colour
NOISY_HATCH = "////"  # over a bar whose row was timed but flagged noisy
TITLE_IDS = ("title", "caption")  # SVG ids of a figure's title and of its caption line
TITLE_MARGIN = 0.08  # inches kept clear between a title or caption and the figure's edge


class Palette:
    """One colour per backend for all figures of a run of the script, and one backend order."""

    def __init__(self, backends: list[str]):
        others = [b for b in dict.fromkeys(backends) if b not in KNOWN_BACKEND_COLOURS]
        self._colours = dict(KNOWN_BACKEND_COLOURS)
        self._colours.update(zip(others, itertools.cycle(OTHER_COLOURS)))
        self._rank = {backend: rank for rank, backend in enumerate([*KNOWN_BACKEND_COLOURS, *others])}

    def colour(self, backend: str) -> str:
        return self._colours[backend]

    def ordered(self, backends: list[str]) -> list[str]:
        return sorted(backends, key=self._rank.__getitem__)


def apply_style() -> None:
    plt.rcParams.update({
        "font.size": 9,
        "axes.titlesize": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.axisbelow": True,
        "legend.fontsize": 8,
        "legend.frameon": False,
        "svg.fonttype": "none",   # real text in SVGs: searchable and editable for papers
        "svg.hashsalt": "nkbench",  # stable SVG ids, so re-rendered plots diff cleanly
    })


def new_figure(width: float, height: float, rows: int = 1, **subplot_options):
    return plt.subplots(rows, 1, figsize=(width, height), layout="constrained", squeeze=False,
                        **subplot_options)


def width_for(groups_on_axis: int, per_group: float = 0.75, minimum: float = 6.5) -> float:
    """Figure width in inches that keeps each case's bars and label apart."""
    return max(minimum, 2.5 + per_group * groups_on_axis)


def set_title(fig, axis, title: str, group: ResultGroup) -> None:
    title_and_caption(fig, axis, f"{title} — {group.key.label}", describe_runs(group))


def title_and_caption(fig, axis, title: str, caption: str) -> None:
    """The bold title over the figure and the caption line over the (top) axis. Both get an SVG id,
    which is also how save_figure finds them to widen a figure they do not fit."""
    fig.suptitle(title, fontweight="bold", fontsize=11, gid=TITLE_IDS[0])
    axis.set_title(caption, loc="left", color="#555555", gid=TITLE_IDS[1])


def widen_for_titles(fig, attempts: int = 4) -> None:
    """Constrained layout makes room for a title's height but not for its width, so a narrow figure
    (few cases) cut its title and caption off at its edges. Widen the figure by what they overflow
    and lay it out again: the title is centred (it overflows both sides), the caption starts at the
    axis (it overflows on the right), and the axis may move as the legend and labels settle."""
    for _ in range(attempts):
        fig.canvas.draw()
        edge = fig.bbox
        margin = TITLE_MARGIN * fig.dpi
        overflow = 0.0
        for text in fig.findobj(lambda artist: isinstance(artist, Text) and artist.get_gid() in TITLE_IDS):
            if not text.get_text():
                continue
            extent = text.get_window_extent()
            left, right = edge.x0 + margin - extent.x0, extent.x1 + margin - edge.x1
            overflow = max(overflow, max(0.0, left) + max(0.0, right))
        if overflow < 0.5:  # pixels
            return
        width, height = fig.get_size_inches()
        fig.set_size_inches(width + overflow / fig.dpi, height)


def label_cases(axis, positions, cases: list[str]) -> None:
    axis.set_xticks(positions, cases, rotation=40, ha="right", rotation_mode="anchor", fontsize=8)
    axis.set_xlim(min(positions) - 0.6, max(positions) + 0.6)


GEOMEAN_GAP = 0.4  # extra space that sets the geomean column apart from the cases


def label_cases_with_geomean(axis, cases: list[str]) -> float:
    """Case labels plus a bold 'geomean' column after a dotted rule; returns the column's x."""
    geomean_x = len(cases) + GEOMEAN_GAP
    axis.axvline(geomean_x - 0.5 - GEOMEAN_GAP / 2, color="#999999", linewidth=0.8, linestyle=":")
    label_cases(axis, [*range(len(cases)), geomean_x], [*cases, "geomean"])
    axis.get_xticklabels()[-1].set_fontweight("bold")
    return geomean_x


def legend_outside(axis, leading=(), trailing=()) -> None:
    """Right of the axes, so that it never covers a bar: the leading entries (backends), what the
    axis itself labelled (peak, baseline lines), then the trailing notes; None entries are left out."""
    labelled, _ = axis.get_legend_handles_labels()
    handles = [handle for handle in (*leading, *labelled, *trailing) if handle is not None]
    axis.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def save_figure(fig, out_dir: Path, stem: str, formats: list[str]) -> list[Path]:
    widen_for_titles(fig)
    paths = []
    for extension in formats:
        path = out_dir / f"{stem}.{extension}"
        # No creation date in SVG/PDF, so an unchanged figure stays byte-identical.
        metadata = {"Date": None} if extension in ("svg", "pdf") else None
        fig.savefig(path, dpi=150, metadata=metadata)
        paths.append(path)
    plt.close(fig)
    return paths


def ratio_axis(axis, values: list[float], label: str) -> None:
    """Linear from 0, so that bar heights compare as speeds do; room above for value labels."""
    axis.set_ylim(0, max(values + [1.0]) * 1.18)
    axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}×"))
    axis.set_ylabel(label)
    axis.grid(axis="y", alpha=0.3)


def times(value: float) -> str:
    """A ratio as printed on bars, e.g. 35×, 0.99×, 0.031×."""
    if value >= 10:
        return f"{value:.0f}×"
    return f"{value:.2f}×" if value >= 0.1 else f"{value:.3f}×"
