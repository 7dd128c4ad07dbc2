"""
Link-safe steps below an output directory: no component of a written path may be a link.

``output_root(DIR)`` names the output directory of a run (thread-local; the scan command's
``--out`` folder, a dataset's DIR). Within it, every file or tree the writers of output/files.py
create, and every rename into place, is checked first by ``check_below``: each component of the
path below DIR is opened with O_NOFOLLOW relative to its parent's descriptor, so a link planted
at DIR/poses or DIR/sequences (before the run or while it runs) is refused (LinkRefused naming
it), and a plain file where a folder must be is a WriteError naming that file. ``makedirs``
creates the missing folders the same way (mkdir relative to the parent's descriptor).
"""

from collections.abc import Iterator
import contextlib
import errno
import os
from pathlib import Path
import stat
import threading
from typing import TextIO


class WriteError(OSError):
    """A file could not be written whole (nothing is left under its name)."""

    def __str__(self):
        """Return 'could not write <file>: <reason>' on one line."""
        return f'could not write {self.filename!r}: {self.strerror}'


class LinkRefused(WriteError):
    """An output name is a symbolic link: nothing is written through it."""

    def __init__(self, path, *unpickled):
        """Name the link (unpickled: OSError's own arguments, as pickle passes them)."""
        if unpickled:
            super().__init__(path, *unpickled)
            return
        super().__init__(errno.ELOOP, 'it is a symbolic link (output files are never written '
                         'through a link: remove it or name another file)', str(path))


_state = threading.local()
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def output_root(path: str | Path) -> Iterator[Path]:
    """Within it, the writers check every path below path (see the module docstring)."""
    outer = getattr(_state, 'root', None)
    _state.root = Path(os.path.abspath(path))
    try:
        yield _state.root
    finally:
        _state.root = outer


def current_root() -> Path | None:
    """Return the output directory of this thread's run, or None."""
    return getattr(_state, 'root', None)


def _below(path):
    """Return (root, parts of path below root), or (None, ()) when path is not below it."""
    root = current_root()
    if root is None:
        return None, ()
    try:
        rel = Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        return None, ()
    return root, rel.parts


def _refuse(root, parts, exc):
    """Raise the error of a component that could not be opened as a folder."""
    path = root.joinpath(*parts)
    if os.path.islink(path):
        raise LinkRefused(path) from None
    if exc.errno == errno.ENOTDIR:
        raise WriteError(errno.ENOTDIR, 'a file is in the way of a folder the output needs '
                         '(remove it or write elsewhere)', str(path)) from None
    raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from None


def _walk(path, create):
    """Open each folder of path below the root with O_NOFOLLOW (creating it when create)."""
    root, parts = _below(path)
    if root is None:
        return
    if create:
        root.mkdir(parents=True, exist_ok=True)     # the user's folder: a link to it is fine
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        for i, part in enumerate(parts[:-1] if not create else parts):
            try:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                return              # nothing below exists yet: nothing to follow
            except OSError as exc:
                _refuse(root, parts[:i + 1], exc)
            os.close(fd)
            fd = nfd
        if parts and not create:
            _check_last(root, parts, fd)
    finally:
        os.close(fd)


def _check_last(root, parts, fd):
    try:
        st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise LinkRefused(root.joinpath(*parts))


def check_below(path: str | Path) -> None:
    """Raise LinkRefused / WriteError when a component of path below the root is a link."""
    _walk(path, create=False)


def makedirs(path: str | Path) -> None:
    """Create path's missing folders below the root, never through a link; else mkdir -p."""
    if _below(path)[0] is None:
        Path(path).mkdir(parents=True, exist_ok=True)
    else:
        _walk(path, create=True)


def require_regular(path: str | Path) -> None:
    """Raise WriteError when path exists and is not a regular file (a FIFO, a device, ...)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        raise WriteError(errno.EINVAL, 'it is not a regular file (remove it or write '
                         'elsewhere)', str(path))


def open_append(path: str | Path) -> TextIO:
    """Open a text file for appending, created if missing, never through a link (O_NOFOLLOW)."""
    try:
        check_below(path)
        require_regular(path)
        # O_NONBLOCK: a FIFO put there since would block the open until a reader came.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            require_regular(path)
        if info.st_nlink > 1:       # a row appended here would appear under its other names
            os.close(fd)
            raise WriteError(errno.EMLINK, f'it has {info.st_nlink - 1} other name(s) (a hard '
                             'link): nothing is appended through it (remove it or write '
                             'elsewhere)', str(path))
        os.set_blocking(fd, True)
    except WriteError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(path) from None
        raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    return os.fdopen(fd, 'a', encoding='utf-8')
