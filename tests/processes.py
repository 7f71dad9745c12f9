"""The processes alive on this machine, read from /proc: for the tests that a stopped command
or pool leaves none behind."""

import os
from pathlib import Path


def alive(*, parent: int | None = None, group: int | None = None) -> list[int]:
    """The pids of the processes still running (zombies left out) whose parent is ``parent``
    and whose process group is ``group`` (each when given)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state, ppid, pgrp = stat.rsplit(")", 1)[-1].split()[:3]  # after the command's name
        if state == "Z":
            continue
        if (parent is None or int(ppid) == parent) and (group is None or int(pgrp) == group):
            found.append(int(entry))
    return found
