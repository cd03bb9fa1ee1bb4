"""What a process started here costs, read from ``/proc`` (Linux)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def child_pids(pid: int) -> list[int]:
    """PIDs of the live children of ``pid`` (e.g. a gunicorn master's workers)."""
    with contextlib.suppress(OSError):
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return []


def cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of its children, live or reaped (gunicorn workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in [pid, *child_pids(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        if each == pid:
            total += int(fields[13]) + int(fields[14])  # reaped children
    return total / tick


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` in KB (``VmRSS``; 0 once it is gone)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def connections_to(pids: list[int], ports: set[int]) -> int:
    """Established TCP connections of processes ``pids`` to any of ``ports`` (Linux /proc)."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue  # closed meanwhile
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
        except OSError:
            continue  # the process is gone
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if fields[3] == "01" and remote_port in ports and fields[9] in inodes:
                    count += 1
    return count
