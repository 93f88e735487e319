"""One line saying where and when a group's results were measured, for titles and tables."""

from datetime import datetime, timezone
from typing import Iterable, Optional

from .groups import ResultGroup


def describe_runs(group: ResultGroup) -> str:
    runs = group.runs
    cpus = distinct(run.cpu_model for run in runs)
    dates = distinct(readable_date(run.date) for run in runs)
    threads = " / ".join(str(count) for count in group.threads) or "unknown"
    return f"CPU: {cpus} · ISA: {group.key.isa} · threads: {threads} · run: {dates}"


def distinct(values: Iterable[Optional[str]]) -> str:
    """Every different value once (several runs can make one group); 'unknown' when none is known."""
    known = list(dict.fromkeys(value for value in values if value))
    return " / ".join(known) if known else "unknown"


def readable_date(iso_date: Optional[str]) -> Optional[str]:
    if not iso_date:
        return None
    try:
        moment = datetime.fromisoformat(iso_date.replace("Z", "+00:00"))
    except ValueError:
        return iso_date
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
