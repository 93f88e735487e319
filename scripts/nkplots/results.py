"""Reads nkbench result files (CSV or JSON) into rows that carry their run's metadata."""

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

STATUSES = ("passed", "failed", "mistrusted", "skipped", "error")
# nkbench's ISA levels, lowest first (harness/core/isa.h).
ISA_LEVELS = ("avx2", "avx512", "avx512-bf16", "amx-emulated", "amx")
REQUIRED_FIELDS = ("case", "dtype", "isa", "backend", "status",
                   "median_gflops", "ratio_to_libxsmm", "compile_ms")
FLAG_TEXTS = {"1": True, "0": False, "true": True, "false": False}  # CSV spellings of a boolean


class InputError(Exception):
    """A result file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class RunInfo:
    """What a JSON report's metadata says about its run; None where unknown (CSV input)."""
    source: str
    cpu_model: Optional[str] = None
    date: Optional[str] = None
    threads: Optional[int] = None
    peak_gflops: Optional[float] = None
    bf16_peak_gflops: Optional[float] = None
    bf16_peak_instruction: Optional[str] = None  # vdpbf16ps, or tdpbf16ps under --isa amx
    # Peaks of the cores that N threads ran on, for each count above one: {N: (fp32, bf16)}.
    peaks_by_threads: tuple[tuple[int, Optional[float], Optional[float]], ...] = ()

    def peaks_for(self, threads: int) -> tuple[Optional[float], Optional[float]]:
        """(fp32, bf16) peak of the cores that `threads` threads ran on; one core's for one thread."""
        if threads <= 1:
            return self.peak_gflops, self.bf16_peak_gflops
        for count, fp32, bf16 in self.peaks_by_threads:
            if count == threads:
                return fp32, bf16
        return None, None


@dataclass(frozen=True)
class ResultRow:
    """One (case, backend) result. Speeds are None unless the row passed verification."""
    case: str
    dtype: str
    c_dtype: str
    isa: str
    backend: str
    threads: Optional[int]
    status: str
    median_gflops: Optional[float]
    ratio_to_libxsmm: Optional[float]
    compile_ms: Optional[float]
    run: RunInfo
    isa_used: Optional[str] = None  # the level the backend ran at (<= isa); None in older reports
    # Timed, but less sure: repetitions spread above --noisy-iqr, or faster than the measured peak.
    # False in reports older than the column.
    noisy: bool = False

    @property
    def below_cap(self) -> bool:
        """The backend ran a lower level than the run's cap (e.g. libxsmm's cpx code under amx)."""
        return (self.isa_used in ISA_LEVELS and self.isa in ISA_LEVELS
                and ISA_LEVELS.index(self.isa_used) < ISA_LEVELS.index(self.isa))

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def load_results(paths: list[str]) -> list[ResultRow]:
    rows: list[ResultRow] = []
    for path in paths:
        rows.extend(load_file(Path(path)))
    return rows


def load_file(path: Path) -> list[ResultRow]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise InputError(f"{path}: expected a .csv or .json nkbench report")
    text = read_text(path)
    records, run = parse_json(path, text) if suffix == ".json" else parse_csv(path, text)
    if not records:
        raise InputError(f"{path}: no rows")
    return [make_row(path, where, record, run) for where, record in records]


def read_text(path: Path) -> str:
    # newline="": line ends inside a quoted CSV field (a note's \r) stay as written.
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            return file.read()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror or error}") from None


def parse_csv(path: Path, text: str) -> tuple[list[tuple[str, dict]], RunInfo]:
    # Not text.splitlines(): it also breaks at form feeds and U+2028 inside a quoted note.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [field for field in REQUIRED_FIELDS if field not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{path}: not an nkbench CSV report: missing column(s) {', '.join(missing)}")
    records = []
    for record in reader:
        if None in record or None in record.values():
            raise InputError(f"{path}: line {reader.line_num}: wrong number of fields")
        # An empty CSV field means "not measured", as null does in JSON.
        records.append((f"line {reader.line_num}", {k: (v if v != "" else None) for k, v in record.items()}))
    return records, RunInfo(source=str(path))


def parse_json(path: Path, text: str) -> tuple[list[tuple[str, dict]], RunInfo]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
        raise InputError(f"{path}: not an nkbench JSON report: no 'rows' list")
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    records = []
    for index, record in enumerate(document["rows"]):
        where = f"row {index + 1}"
        if not isinstance(record, dict):
            raise InputError(f"{path}: {where}: not an object")
        missing = [field for field in REQUIRED_FIELDS if field not in record]
        if missing:
            raise InputError(f"{path}: {where}: missing field(s) {', '.join(missing)}")
        records.append((where, record))
    return records, run_info(path, metadata)


def run_info(path: Path, metadata: dict) -> RunInfo:
    def number(key):
        value = metadata.get(key)
        return float(value) if isinstance(value, (int, float)) and value > 0 else None

    def text(key):
        value = metadata.get(key)
        return str(value) if value not in (None, "") else None

    threads = metadata.get("threads")
    return RunInfo(source=str(path), cpu_model=text("cpu_model"), date=text("date"),
                   threads=threads if isinstance(threads, int) else None,
                   peak_gflops=number("peak_gflops"), bf16_peak_gflops=number("bf16_peak_gflops"),
                   bf16_peak_instruction=text("bf16_peak_instruction"),
                   peaks_by_threads=peaks_by_threads(metadata.get("peaks_by_threads")))


def peaks_by_threads(value) -> tuple[tuple[int, Optional[float], Optional[float]], ...]:
    """{"2": {"fp32": 460.1, "bf16": 921.7}} as ((2, 460.1, 921.7),); entries that are not
    such are left out, as an unknown peak (the figures say so) rather than a wrong one."""
    if not isinstance(value, dict):
        return ()
    def positive(entry, key):
        number = entry.get(key)
        return float(number) if isinstance(number, (int, float)) and number > 0 else None
    peaks = []
    for key, entry in value.items():
        if str(key).isdigit() and int(key) > 1 and isinstance(entry, dict):
            peaks.append((int(key), positive(entry, "fp32"), positive(entry, "bf16")))
    return tuple(sorted(peaks))


def make_row(path: Path, where: str, record: dict, run: RunInfo) -> ResultRow:
    def text(field, default=None):
        value = record.get(field)
        if value is None or value == "":
            if default is None:
                raise InputError(f"{path}: {where}: empty '{field}'")
            return default
        return str(value)

    def number(field):
        value = record.get(field)
        if value is None:
            return None
        try:
            parsed = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{path}: {where}: {field} {value!r} is not a number") from None
        return parsed if math.isfinite(parsed) else None

    def flag(field):
        """JSON true/false/null, or CSV 1/0/empty (empty or absent: not flagged)."""
        value = record.get(field)
        if value is None or isinstance(value, bool):  # not 0 and 1, which equal False and True
            return bool(value)
        if value == "":
            return False
        if isinstance(value, str) and value.strip().lower() in FLAG_TEXTS:
            return FLAG_TEXTS[value.strip().lower()]
        raise InputError(f"{path}: {where}: {field} {value!r} is not true or false")

    status = text("status")
    if status not in STATUSES:
        raise InputError(f"{path}: {where}: unknown status {status!r} "
                         f"(expected one of {', '.join(STATUSES)})")
    passed = status == "passed"
    threads = number("threads")
    if threads is not None and (threads < 1 or threads != int(threads)):
        raise InputError(f"{path}: {where}: threads {record.get('threads')!r} is not a whole number of 1 or more")
    return ResultRow(
        case=text("case"), dtype=text("dtype"),
        c_dtype=text("c_dtype", "f32"),  # reports older than the c_dtype column had an f32 C
        isa=text("isa"), backend=text("backend"),
        threads=int(threads) if threads is not None else None,
        status=status,
        # Only a verified row was timed: anything else in these fields is not a measurement.
        median_gflops=number("median_gflops") if passed else None,
        ratio_to_libxsmm=number("ratio_to_libxsmm") if passed else None,
        compile_ms=number("compile_ms"), run=run,
        isa_used=record.get("isa_used") or None,  # absent from reports older than the column
        noisy=flag("noisy") if passed else False)
