"""Files written whole or not at all: the package's one way of writing what a person keeps.

``write_whole`` writes a file through a temporary file beside it, renamed into place;
``staged_directory`` builds a directory beside its target and renames it into place when every
file is in it. An error or an interrupt at any point leaves the target as it was.

Layer: faces.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path


def write_whole(path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file beside it, renamed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.resolve().parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def staged_directory(target):
    """Yield a fresh directory beside ``target`` to fill; on success it becomes ``target``
    (which must be absent or empty), on any error it is removed and ``target`` is untouched."""
    target = Path(target)
    tmp = Path(tempfile.mkdtemp(dir=target.resolve().parent, prefix=f".{target.name}-"))
    try:
        yield tmp
        if target.exists():
            target.rmdir()  # empty, checked by the caller
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
