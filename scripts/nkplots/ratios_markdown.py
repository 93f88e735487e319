"""ratios.md: the ratio to libxsmm per case and its geometric mean, as Markdown tables for READMEs."""

from .captions import describe_runs
from .groups import ResultGroup
from .ratios import BASELINE, BackendRatios, backend_ratios, compared_backends, has_baseline

INTRODUCTION = (
    f"Median GFLOPS of each backend divided by {BASELINE}'s for the same case in the same run "
    f"(above 1: faster than {BASELINE}). The geometric mean covers the cases where both were timed; "
    "a status in a cell means that row was not timed.")


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
    for case in group.cases:
        lines.append(table_row([f"`{case}`", *(ratio_cell(group, case, backend) for backend in backends)]))
    lines.append(table_row(["**geomean**", *map(geomean_cell, summaries)]))
    return lines


def table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def ratio_cell(group: ResultGroup, case: str, backend: str) -> str:
    row = group.row(case, backend)
    if row is None:
        return "—"
    if not row.passed:
        return row.status
    return f"{row.ratio_to_libxsmm:.3f}" if row.ratio_to_libxsmm else f"n/a (no {BASELINE})"


def geomean_cell(summary: BackendRatios) -> str:
    if summary.geomean is None:
        return "—"
    cell = f"**{summary.geomean:.3f}**"
    if len(summary.per_case) < summary.case_count:
        cell += f" ({len(summary.per_case)} of {summary.case_count} cases)"
    return cell
