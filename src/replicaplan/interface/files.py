"""Files written whole or not at all: the package's one way of writing what a person keeps.

``Staging`` stages every output of one command (files and directories) beside its target and
renames them all into place at the end, once everything is computed and written; an error or
an interrupt at any point before leaves every target as it was. ``check_writable`` says, before
any work, whether a target's folder takes a new file; ``FolderLocks`` holds each output's folder
for one run at a time, so two runs on one output never leave half of each. Files and folders
get the modes a plain
``open``/``mkdir`` would give under the process's umask (the temporary files ``tempfile`` makes
are 600 and 700 whatever the umask).

Layer: interface.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

from replicaplan.core import stops


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_writable(path, option: str) -> Path:
    """``path`` as a Path if a file can be created beside it; else ValueError naming ``option``
    and the folder (missing, read-only, or full)."""
    path = Path(path)
    parent = path.resolve().parent
    if not parent.is_dir():
        raise ValueError(f"{option}: no such directory: {path.parent}")
    if path.is_dir() and option != "--report":
        raise ValueError(f"{option}: {path} is a directory; give a file name")
    if path.exists() and not path.is_dir() and not path.is_file():
        # a device, a FIFO or a socket: renaming a staged file onto it would replace it
        raise ValueError(f"{option}: {path} exists and is not a regular file; give a file name")
    if option == "--report" and path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} exists and is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".replicaplan-probe-")
    except OSError as err:
        raise ValueError(f"{option}: cannot write in {parent} ({err.strerror})") from None
    os.close(fd)
    os.unlink(probe)
    return path


class Staging:
    """The outputs of one command, staged beside their targets and renamed in together.

    Use as a context manager: ``file`` and ``directory`` stage, leaving the targets alone; on a
    clean exit every staged output is renamed onto its target (a directory target must be
    absent or empty), on any exception (Ctrl-C included) every staged output is removed.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    def file(self, path, text: str) -> None:
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.resolve().parent, prefix=f".{path.name}-")
        self._staged.append((Path(tmp), path))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())

    def directory(self, path) -> Path:
        """A fresh, empty folder to fill; it becomes ``path`` on commit."""
        path = Path(path)
        tmp = Path(tempfile.mkdtemp(dir=path.resolve().parent, prefix=f".{path.name}-"))
        self._staged.append((tmp, path))
        os.chmod(tmp, 0o777 & ~_umask())
        return tmp

    def commit(self) -> None:
        while self._staged:
            tmp, target = self._staged[0]
            if tmp.is_dir() and target.is_dir():
                target.rmdir()  # empty, checked by the caller before any work
            os.replace(tmp, target)
            self._staged.pop(0)

    def discard(self) -> None:
        for tmp, _ in self._staged:
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
        self._staged = []

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, kind, value, tb) -> None:
        # no stop between the first rename and the last, or in the middle of the clean-up:
        # every target ends as the new output or as it was (a stop waits, then acts). Once the
        # outputs are in place, a stop has nothing left to stop: it is dropped, not raised over
        # outputs written (core.stops.finished)
        with stops.held():
            try:
                if kind is None:
                    self.commit()
                    stops.finished()
            finally:
                self.discard()  # what is left: everything after an error, nothing after a commit


class FolderLocks:
    """An exclusive lock on the folder of each output (``{option: path}``) for as long as the
    ``with`` block runs: a second run writing into one of them is refused at once, by the
    option's name, before it computes or writes anything, and the first run's outputs are
    all its own. The lock is ``flock`` on the folder itself, so nothing is left in it; it is
    released when the block ends or the process dies."""

    def __init__(self, outputs: dict) -> None:
        self._outputs = outputs
        self._held: list[int] = []

    def __enter__(self) -> FolderLocks:
        seen = set()
        try:
            for option, path in self._outputs.items():
                folder = Path(path).resolve().parent
                if folder in seen:
                    continue
                seen.add(folder)
                fd = os.open(folder, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    raise ValueError(
                        f"{option}: another replicaplan run is writing in {folder}; wait for "
                        "it to end, or give another folder"
                    ) from None
                self._held.append(fd)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, value, tb) -> None:
        while self._held:
            os.close(self._held.pop())  # closing the descriptor releases its lock
