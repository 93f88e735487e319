"""ratios.md: the ratio to libxsmm per case and its geometric mean, as Markdown tables for READMEs."""

from .captions import describe_runs
from .groups import ResultGroup
from .ratios import BASELINE, BackendRatios, backend_ratios, compared_backends, has_baseline, ratio_is_noisy

INTRODUCTION = (
    f"Median GFLOPS of each backend divided by {BASELINE}'s for the same case in the same run "
    f"(above 1: faster than {BASELINE}). The geometric mean covers the cases where both were timed; "
    "a status in a cell means that row was not timed.")
NOISY_MARK = " (noisy)"
NOISY_FOOTNOTE = (
    f"{NOISY_MARK.strip()}: this row or {BASELINE}'s was flagged noisy (its repetitions spread above "
    "--noisy-iqr of the median, or it ran faster than the measured peak): the ratio is less sure. "
    "The geomean includes it.")


def ratios_markdown(groups: list[ResultGroup], backend_order) -> str:
    sections = [f"# Speed relative to {BASELINE}", "", INTRODUCTION]
    for group in groups:
        sections += ["", f"## {group.key.label}", "", describe_runs(group), ""]
        sections += group_table(group, backend_order) if has_baseline(group) else [f"No {BASELINE} rows."]
    return "\n".join(sections) + "\n"


def group_table(group: ResultGroup, backend_order) -> list[str]:
    backends = backend_order(compared_backends(group))
    summaries = [backend_ratios(group, backend) for backend in backends]
    lines = [table_row(["case", *backends]), table_row(["---", *["---:"] * len(backends)])]
    cells = {case: [ratio_cell(group, case, backend) for backend in backends] for case in group.cases}
    for case in group.cases:
        lines.append(table_row([f"`{case}`", *cells[case]]))
    lines.append(table_row(["**geomean**", *map(geomean_cell, summaries)]))
    if any(cell.endswith(NOISY_MARK) for row in cells.values() for cell in row):
        lines += ["", NOISY_FOOTNOTE]
    return lines


def table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def ratio_cell(group: ResultGroup, case: str, backend: str) -> str:
    row = group.row(case, backend)
    if row is None:
        return "—"
    if not row.passed:
        return row.status
    if not row.ratio_to_libxsmm:
        return f"n/a (no {BASELINE})"
    noisy = NOISY_MARK if ratio_is_noisy(group, case, backend) else ""
    return f"{row.ratio_to_libxsmm:.3f}{noisy}"


def geomean_cell(summary: BackendRatios) -> str:
    if summary.geomean is None:
        return "—"
    cell = f"**{summary.geomean:.3f}**"
    if len(summary.per_case) < summary.case_count:
        cell += f" ({len(summary.per_case)} of {summary.case_count} cases)"
    return cell
