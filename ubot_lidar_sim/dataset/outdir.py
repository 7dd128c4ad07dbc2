"""
The output directory of a dataset run: one run at a time, no links in it.

``DIR/.ubot_lidar_sim.lock`` is locked (fcntl ``flock``, exclusive, not waiting) for the whole
run, so a second run into the same DIR is refused with one line. The lock goes with the process,
even a killed one; the empty file stays and is never written. A DIR holding a symbolic link
anywhere below it is refused with one line naming the links: the runner writes only through
files it creates itself (output/atomic.py), and a link planted in a shared DIR must not lead a
run to write elsewhere.
"""

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from ubot_lidar_sim.core.errors import ConfigError

LOCK = '.ubot_lidar_sim.lock'
SHOWN_LINKS = 5       # links named in the error line; the rest are counted


@contextlib.contextmanager
def locked(out_dir, name='--out'):
    """Hold DIR's lock within the context; ConfigError(name) when another process holds it."""
    path = Path(out_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        why = 'a symbolic link' if exc.errno == errno.ELOOP else exc.strerror
        raise ConfigError(name, str(out_dir), f'a directory whose lock file {LOCK} can be '
                          f'created ({why})') from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise ConfigError(name, str(out_dir), 'a directory no other dataset run is '
                              f'writing (another run holds {path})') from None
        yield path
    finally:
        os.close(fd)        # releases the lock


def links_below(out_dir):
    """Return the symbolic links below out_dir (relative paths, sorted); links are not entered."""
    root = Path(out_dir)
    found = []
    for folder, dirs, names in os.walk(root):       # os.walk does not follow links
        for name in dirs + names:
            path = Path(folder) / name
            if path.is_symlink():
                found.append(str(path.relative_to(root)))
    return sorted(found)


def refuse_links(out_dir, name='--out'):
    """Raise ConfigError(name) naming the symbolic links below out_dir, if any."""
    links = links_below(out_dir)
    if links:
        shown = ', '.join(links[:SHOWN_LINKS])
        more = f' and {len(links) - SHOWN_LINKS} more' if len(links) > SHOWN_LINKS else ''
        raise ConfigError(name, str(out_dir), 'a directory without symbolic links (the runner '
                          f'never writes through one): remove {shown}{more}')
