"""Child processes: started (tried again on a transient failure), and the processes a
command started found and stopped as one.

The agent runs in a session (and process group) of its own, so a launcher's children
(an npm wrapper's real binary) are stopped with it, and a Ctrl-C at the terminal reaches
the kit alone, which then stops them itself. Where ``/proc`` is there (Linux), processes
that left the group but descend from one of its members when the kit stops it are
stopped too; elsewhere (and for a daemon whose parent had already exited) the group is
what the kit can reach.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

PROC = Path("/proc")
# A process: (pid, start time in clock ticks since boot), so that a pid the system has
# since given to another process is never signalled.
Ident = tuple[int, int]


def _stat(pid: int) -> tuple[int, int, str, int] | None:
    """(parent pid, process group, state, start time) of a live process, from /proc."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return int(fields[1]), int(fields[2]), fields[0], int(fields[19])


def _table() -> dict[int, tuple[int, int, str, int]]:
    table = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None and stat[2] != "Z":
            table[int(entry.name)] = stat
    return table


def descendants(group: int) -> set[Ident]:
    """The live processes below the group's leader or any of its members (by parent), in the
    group or not: a launcher that exited has left its children to init, still in the group."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[Ident] = set()
    todo = [group, *(pid for pid, stat in table.items() if stat[1] == group)]
    todo = [child for pid in todo for child in children.get(pid, ())]
    while todo:
        pid = todo.pop()
        found.add((pid, table[pid][3]))
        todo += children.get(pid, ())
    return found


def alive(group: int, others: set[Ident]) -> bool:
    """Whether a process of the group, or one of ``others``, still runs (zombies do not)."""
    if not hasattr(os, "killpg"):
        return False  # no process groups (Windows): the caller stops the process it started
    if not PROC.is_dir():
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    table = _table()
    return any(stat[1] == group for stat in table.values()) or any(
        pid in table and table[pid][3] == start for pid, start in others
    )


def signal_all(group: int, others: set[Ident], signum: int) -> None:
    # Only while a member lives: the group id cannot be reused by then.
    if alive(group, set()):
        try:
            os.killpg(group, signum)
        except (ProcessLookupError, PermissionError):
            pass
    for pid, start in others:
        stat = _stat(pid)
        if stat is not None and stat[3] == start and stat[1] != group:
            try:
                os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                pass


def stop(group: int, others: set[Ident], wait: float) -> None:
    """Terminate, then after ``wait`` seconds kill, whatever of them still runs."""
    for signum in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        if not alive(group, others):
            return
        signal_all(group, others, signum)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and alive(group, others):
            time.sleep(0.02)


# Errors of a spawn that say nothing about the command: the kernel could not take the new
# process's arguments or resources just then (EFAULT from execve was seen once on a loaded
# machine, EAGAIN is fork's). Such a spawn is tried again; any other error is the command's.
TRANSIENT_SPAWN_ERRORS = (errno.EAGAIN, errno.EFAULT)


def spawn(command: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(command, **options)``, tried up to three times where it fails for a
    transient reason."""
    delays = [0.1, 0.3]
    while True:
        try:
            return subprocess.Popen(command, **options)
        except OSError as exc:
            if exc.errno not in TRANSIENT_SPAWN_ERRORS or not delays:
                raise
            time.sleep(delays.pop(0))
