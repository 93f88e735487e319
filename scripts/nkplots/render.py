"""Renders every figure of every group, and ratios.md, into one folder."""

from pathlib import Path

from . import ablation_figure, compile_figure, gflops_figure, ratio_figure, scaling_figure
from .groups import ResultGroup
from .ratios_markdown import ratios_markdown
from .style import Palette, apply_style, save_figure

FIGURES = (gflops_figure, ratio_figure, compile_figure, ablation_figure)
RATIOS_FILE = "ratios.md"


def render_all(groups: list[ResultGroup], out_dir: Path, formats: list[str]) -> tuple[list[Path], list[str]]:
    """Returns the files written and a note for each figure that had no data to show."""
    apply_style()
    palette = Palette([backend for group in groups for backend in group.backends])
    written, notes = [], []
    for group in groups:
        for figure in FIGURES:
            stem = f"{figure.STEM}-{group.key.slug}"
            reason = figure.reason_to_skip(group)
            if reason:
                notes.append(f"{stem}: not drawn: {reason}")
            else:
                written += save_figure(figure.build(group, palette), out_dir, stem, formats)
    for key, members in scaling_figure.scaling_sets(groups).items():
        stem = f"{scaling_figure.STEM}-{key.slug}"
        reason = scaling_figure.reason_to_skip(members)
        if reason:
            notes.append(f"{stem}: not drawn: {reason}")
        else:
            written += save_figure(scaling_figure.build(members, palette), out_dir, stem, formats)
    ratios_path = out_dir / RATIOS_FILE
    ratios_path.write_text(ratios_markdown(groups, palette.ordered), encoding="utf-8")
    return written + [ratios_path], notes
