"""
The one check before a file is read: a regular file of at most its kind's size.

Every reader calls it on the path it is about to open: worlds, SDF and YAML files, models, mesh
files, glTF buffers and images, the mesh cache's entries, MCAP recordings and label maps. A FIFO
would block the open (or the read) until a writer came; a device or a huge or sparse file would
stream gigabytes before any other check. The size comes from stat, before a byte is read.
``open_checked`` opens without blocking and checks the opened descriptor again, so a FIFO put in
a file's place between the check and the open is refused too.
"""

import errno
import os
import stat
from typing import BinaryIO, Union

#: A path as os.stat takes it.
StrPath = Union[str, 'os.PathLike[str]']

#: Text files: worlds, SDF, YAML, parameter files, label maps, glTF JSON.
TEXT_MAX_BYTES = 64 << 20
#: Meshes, glTF buffers and the mesh cache's entries: the largest binary mesh of the default
#: max_triangles (5e6 triangles x 50 B, binary STL: 250 MB) with room.
MESH_MAX_BYTES = 512 << 20
#: MCAP recordings are read message by message (never whole): the cap only stops a device or a
#: sparse file of absurd size.
RECORDING_MAX_BYTES = 64 << 30


class FileRefused(OSError):
    """A path that is not a regular file, or one too large to be read as one of ours."""


def _kind(mode: int) -> str:
    """Return what a non-regular file mode is, in words."""
    return ('a directory' if stat.S_ISDIR(mode) else 'a FIFO' if stat.S_ISFIFO(mode)
            else 'a device' if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else 'a socket')


def _check_stat(info: os.stat_result, path: StrPath, max_bytes: int | None
                ) -> os.stat_result:
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(errno.EINVAL, f'not a regular file ({_kind(info.st_mode)})', str(path))
    if max_bytes is not None and info.st_size > max_bytes:
        raise FileRefused(errno.EFBIG, f'{info.st_size} bytes, larger than the '
                          f'{max_bytes >> 20} MiB allowed', str(path))
    return info


def check_regular_file(path: StrPath, max_bytes: int | None = None) -> os.stat_result:
    """
    Return os.stat(path) of a regular file of at most max_bytes (None: any size).

    Raises FileRefused naming what the path is instead ('not a regular file (a FIFO)') or its
    size, with the path as its filename; or the OSError of os.stat (a missing file).
    """
    return _check_stat(os.stat(path), path, max_bytes)


def open_checked(path: StrPath, max_bytes: int | None, follow_links: bool = True
                 ) -> BinaryIO:
    """
    Return path opened for reading in binary, after check_regular_file on the open descriptor.

    O_NONBLOCK: a FIFO does not block the open; follow_links False: a link is refused (ELOOP).
    """
    check_regular_file(path, max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        _check_stat(os.fstat(fd), path, max_bytes)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, 'rb')


def read_checked(path: StrPath, max_bytes: int) -> bytes:
    """Return the bytes of a regular file of at most max_bytes (FileRefused / OSError)."""
    with open_checked(path, max_bytes) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:      # grew since the check
        raise FileRefused(errno.EFBIG, f'larger than the {max_bytes >> 20} MiB allowed',
                          str(path))
    return data
