"""Splits rows into one group per (type, ISA, thread count): each group becomes one set of figures."""

from dataclasses import dataclass, field
from typing import Optional

from .results import InputError, ResultRow, RunInfo

# ISA levels whose bf16 kernels run on their own bf16 units (vdpbf16ps, the AMX tiles).
BF16_PEAK_LEVELS = ("avx512-bf16", "amx", "amx-emulated")


@dataclass(frozen=True)
class GroupKey:
    dtype: str
    c_dtype: str
    isa: str
    threads: int = 1

    @property
    def type_label(self) -> str:
        """'bf16' for bf16 operands with an f32 C, 'bf16->bf16 C' for a bf16 C."""
        return self.dtype if self.c_dtype == "f32" else f"{self.dtype}->{self.c_dtype} C"

    @property
    def label(self) -> str:
        threads = f", {self.threads} threads" if self.threads > 1 else ""
        return f"{self.type_label}, {self.isa}{threads}"

    @property
    def slug(self) -> str:
        """File-name part, e.g. 'f32-avx512-bf16', 'bf16-cbf16-avx512-bf16' or 'f32-avx512-2t'."""
        type_part = self.dtype if self.c_dtype == "f32" else f"{self.dtype}-c{self.c_dtype}"
        threads = f"-{self.threads}t" if self.threads > 1 else ""
        return f"{type_part}-{self.isa}{threads}"

    @property
    def of_one_thread(self) -> "GroupKey":
        return GroupKey(self.dtype, self.c_dtype, self.isa)


@dataclass(frozen=True, order=True)
class Peak:
    gflops: float
    what: str


@dataclass
class ResultGroup:
    """The rows of one (type, ISA), with cases and backends in first-seen order."""
    key: GroupKey
    cases: list[str] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)
    rows: dict[tuple[str, str], ResultRow] = field(default_factory=dict)

    def row(self, case: str, backend: str) -> Optional[ResultRow]:
        return self.rows.get((case, backend))

    def noisy(self, case: str, backend: str) -> bool:
        """Whether the row is there and flagged noisy."""
        row = self.row(case, backend)
        return row is not None and row.noisy

    def add(self, row: ResultRow) -> None:
        earlier = self.rows.get((row.case, row.backend))
        if earlier is not None:
            raise InputError(f"{row.run.source}: case '{row.case}' on {row.backend} ({self.key.label}) "
                             f"was already read from {earlier.run.source}")
        self.rows[(row.case, row.backend)] = row
        if row.case not in self.cases:
            self.cases.append(row.case)
        if row.backend not in self.backends:
            self.backends.append(row.backend)

    def backend_label(self, backend: str) -> str:
        """The backend's name, with the levels it ran at where they are below the group's cap:
        "libxsmm (avx512-bf16)" under amx."""
        levels = sorted({row.isa_used for row in self.rows.values() if row.backend == backend and row.below_cap})
        return f"{backend} ({', '.join(levels)})" if levels else backend

    @property
    def runs(self) -> list[RunInfo]:
        return list(dict.fromkeys(row.run for row in self.rows.values()))

    @property
    def threads(self) -> list[int]:
        """The thread counts of the rows; a run's default where rows do not say (CSV)."""
        counts = {row.threads for row in self.rows.values() if row.threads is not None}
        if not counts:
            counts = {run.threads for run in self.runs if run.threads is not None}
        return sorted(counts)

    @property
    def peaks(self) -> list[Peak]:
        """Measured peak of each run in the group; bf16 uses the bf16 peak where measured
        (the dot product, or the AMX tiles under --isa amx), of the cores the group's threads ran on."""
        cores = f" ({self.key.threads} cores)" if self.key.threads > 1 else ""

        def peak(run: RunInfo) -> Optional[Peak]:
            fp32, bf16 = run.peaks_for(self.key.threads)
            if self.key.dtype == "bf16" and bf16:
                kind = "AMX tile" if run.bf16_peak_instruction == "tdpbf16ps" else "dot-product"
                return Peak(bf16, f"bf16 {kind} peak{cores}")
            # bf16 runs on the f32 FMAs below avx512-bf16; at or above it, its peak is the dot
            # product's or the tiles': without that measured, there is no line to draw.
            if self.key.dtype == "bf16" and self.key.isa in BF16_PEAK_LEVELS:
                return None
            if fp32:
                return Peak(fp32, f"fp32 FMA peak{cores}")
            return None
        return sorted({value for value in map(peak, self.runs) if value is not None})


def group_results(rows: list[ResultRow]) -> list[ResultGroup]:
    groups: dict[GroupKey, ResultGroup] = {}
    for row in rows:
        threads = row.threads if row.threads is not None else (row.run.threads or 1)
        key = GroupKey(row.dtype, row.c_dtype, row.isa, max(threads, 1))
        groups.setdefault(key, ResultGroup(key)).add(row)
    return list(groups.values())
