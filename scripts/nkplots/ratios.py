"""Speed relative to libxsmm: per-case ratios and their geometric mean per backend."""

import math
from dataclasses import dataclass
from typing import Optional

from .groups import ResultGroup

BASELINE = "libxsmm"


@dataclass(frozen=True)
class BackendRatios:
    backend: str
    per_case: dict[str, float]  # only cases where both this backend and libxsmm were timed
    case_count: int             # cases of the group, for "n of N" notes

    @property
    def geomean(self) -> Optional[float]:
        return geometric_mean(list(self.per_case.values()))


def geometric_mean(values: list[float]) -> Optional[float]:
    if not values:
        return None
    return math.exp(sum(math.log(value) for value in values) / len(values))


def compared_backends(group: ResultGroup) -> list[str]:
    """Backends shown against libxsmm: all but libxsmm itself, whose ratio is 1 by definition."""
    return [backend for backend in group.backends if backend != BASELINE]


def has_baseline(group: ResultGroup) -> bool:
    return BASELINE in group.backends


def ratio_is_noisy(group: ResultGroup, case: str, backend: str) -> bool:
    """A ratio is as unsure as either speed it divides: the backend's or the baseline's."""
    return group.noisy(case, backend) or group.noisy(case, BASELINE)


def backend_ratios(group: ResultGroup, backend: str) -> BackendRatios:
    per_case = {}
    for case in group.cases:
        row = group.row(case, backend)
        # A ratio of 0 or less can only come from a broken report; it has no logarithm.
        if row is not None and row.ratio_to_libxsmm is not None and row.ratio_to_libxsmm > 0:
            per_case[case] = row.ratio_to_libxsmm
    return BackendRatios(backend, per_case, len(group.cases))
