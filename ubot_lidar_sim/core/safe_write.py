"""
The safe-open rules of every file the package writes, for the output writers and the caches.

A file is written under a temporary name beside its target and renamed over it, so a reader
sees the old file or the whole new one, never half. The temporary is created exclusively
(O_CREAT | O_EXCL, which never follows a link) under an unpredictable name (``tempfile``), so a
link planted at a guessed temporary name cannot make the writer write elsewhere; the rename
replaces a directory entry (a link there included) without following it. output/atomic.py
batches these steps for a run's outputs; ``write_beside`` is the one-file form (the mesh cache).
"""

from collections.abc import Callable
import os
from pathlib import Path
import tempfile
from typing import BinaryIO


def temp_prefix(path: str | Path) -> str:
    """Return the prefix of path's temporaries: '.<name>.' (every writer names them so)."""
    return f'.{Path(path).name}.'


def fsync(path: str | Path) -> None:
    """Flush a written file to disk (a filesystem may report a full disk only here)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_beside(target: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """
    Write target whole or not at all: write(file object) on a fresh temporary, then rename.

    OSError (a full disk, a read-only folder) leaves nothing behind and target as it was.
    """
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix='.tmp', dir=target.parent)
    try:
        with os.fdopen(fd, 'wb') as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
