"""CPU and memory of the processes a bench measures, read from /proc (Linux only).

``cpu_seconds`` counts user + system time of a process and its children that are still running (uvicorn workers
under ``--workers``); ``postgres_cpu_seconds`` counts every backend of the bench's Postgres, found by its data
directory in the postmaster's command line.
"""

import os
from pathlib import Path
from urllib.parse import unquote

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def _own_cpu(pid: int) -> float:
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICKS if fields else 0.0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        queue.extend(_children(current))
    return pids


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of `pid` and its live descendants."""
    return sum(_own_cpu(p) for p in tree(pid))


def postmaster_pid(pg_uri: str) -> int | None:
    """The postmaster serving the bench's database (the one whose data directory appears in `pg_uri`)."""
    pg_uri = unquote(pg_uri)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"postgres") and b"-D" in cmdline:
            data_dir = cmdline[cmdline.index(b"-D") + 1].decode()
            if data_dir.rstrip("/") in pg_uri:
                return int(entry.name)
    return None


def rss_mb(pid: int) -> float:
    """Resident set size of `pid` and its live descendants, in MB."""
    total = 0
    for p in tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024
