"""
Atomic, link-safe writing: a file or a directory tree appears whole under its name, or not at all.

``atomic_write(path, write)`` calls ``write(tmp)`` on a temporary file beside the target, flushes
it to disk and renames it into place, so a reader never sees half a file; a failed write
(ENOSPC, ...) raises WriteError naming the file and leaves nothing under its name. Inside
``all_or_none()`` the files of a multi-frame run are renamed into place only once all are
written, so a failed run leaves an earlier run's files as they were; ``staged_tree`` does the
same for a whole directory (a SemanticKITTI sequence, the PCD files of a sequence).

Links: nothing is written through a symbolic link at an output name. An output path (file or
staged tree) that is a link is refused (LinkRefused, naming it); temporaries are created
exclusively (``mkdtemp``, mode 0700) beside the target and renamed over its name, and a rename
replaces a directory entry without following it. So ``--out link.npz`` and ``--out link.mcap``
behave the same, and a link planted in a shared output directory cannot make a run write
elsewhere (``open_append`` appends with O_NOFOLLOW; below a run's output directory every
component of a path is checked, output/safe_open.py). Files get the mode the umask allows, as
open() would give them.
"""

from collections.abc import Iterator
import contextlib
import os
from pathlib import Path
import shutil
import tempfile
import threading
from typing import Callable, Union

# The rules (exclusive unpredictable temporaries, fsync, rename) are core/safe_write.py's.
from ubot_lidar_sim.core.safe_write import fsync, temp_prefix
from ubot_lidar_sim.output import safe_open
# WriteError, LinkRefused and open_append live in output/safe_open.py (the per-component checks).
from ubot_lidar_sim.output.safe_open import LinkRefused, open_append, WriteError  # noqa: F401


def refuse_link(path: Union[str, Path]) -> Path:
    """Return path; raise LinkRefused when it is a symbolic link (dangling or not)."""
    path = Path(path)
    if path.is_symlink():
        raise LinkRefused(path)
    return path


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Raise an OSError of the block (a full disk, ...) as WriteError naming path, the user's."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc


class _Batch:
    """Files written into temporary directories beside their targets, renamed in at the end."""

    def __init__(self):
        self.dirs, self.staged, self.trees = {}, [], []

    def stage(self, path, write):
        """Call write(tmp_path) for path (never a link) and flush it to disk."""
        target = refuse_link(path)
        safe_open.check_below(target)
        with naming(path):          # the folders of a new output name are made, link-safe
            safe_open.makedirs(target.parent)
        try:                        # errors name the user's file, never the temporary one
            if target.parent not in self.dirs:
                self.dirs[target.parent] = Path(tempfile.mkdtemp(prefix=temp_prefix(target),
                                                                 dir=target.parent))
            tmp = self.dirs[target.parent] / target.name
            write(str(tmp))
            fsync(tmp)
        except OSError as exc:
            raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        self.staged.append((tmp, target))

    def stage_tree(self, path):
        """Return an empty temporary directory beside path that replaces it on commit."""
        path = refuse_link(path)
        safe_open.check_below(path)
        with naming(path):
            safe_open.makedirs(path.parent)
            tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(path), dir=path.parent))
        self.trees.append((tmp, path))
        return tmp

    def commit(self):
        """Rename every staged file, then every staged directory tree, into place."""
        for tmp, _ in self.trees:
            for folder, _, names in os.walk(tmp):
                for name in names:
                    fsync(os.path.join(folder, name))
        for tmp, target in self.staged:
            try:
                safe_open.check_below(target)
                os.replace(tmp, target)
            except WriteError:
                raise
            except OSError as exc:
                raise WriteError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        for tmp, target in self.trees:
            safe_open.check_below(target)
            old = None
            if target.exists():         # a directory cannot be replaced by rename: move it off
                old = Path(tempfile.mkdtemp(prefix=f'{temp_prefix(target)}old.',
                                            dir=target.parent))
                os.replace(target, old / target.name)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)

    def name_links(self):
        """
        Raise LinkRefused when a link now stands on the way to a target.

        A link planted on a folder (DIR/sequences) while its files were written makes them
        fail with 'No such file or directory' (the temporaries are not where the link
        points): this names the link instead.
        """
        for _, target in [*self.staged, *self.trees]:
            safe_open.check_below(target)
        for folder in self.dirs.values():
            safe_open.check_below(folder)

    def discard(self):
        """Remove the temporary directories (and whatever is still in them)."""
        for folder in [*self.dirs.values(), *(tmp for tmp, _ in self.trees)]:
            shutil.rmtree(folder, ignore_errors=True)


_current = threading.local()


@contextlib.contextmanager
def all_or_none() -> Iterator[None]:
    """Within it, the files atomic_write writes are renamed into place only if all succeed."""
    outer = getattr(_current, 'batch', None)
    if outer is not None:           # nested: the outer batch decides
        yield
        return
    _current.batch = batch = _Batch()
    try:
        yield
        batch.commit()
    except OSError:
        batch.name_links()
        raise
    finally:
        _current.batch = None
        batch.discard()


def atomic_write(path: Union[str, Path], write: Callable[[str], None]) -> None:
    """Call write(tmp_path) on a temporary file beside path, then rename it into place."""
    with all_or_none():
        _current.batch.stage(path, write)


def staged_tree(path: Union[str, Path]) -> Path:
    """
    Return an empty temporary directory that replaces the directory path when all_or_none ends.

    Only inside all_or_none(); the caller writes the whole tree into it (files are flushed to
    disk before the rename). A failed or interrupted run removes it and leaves path as it was.
    """
    batch = getattr(_current, 'batch', None)
    if batch is None:
        raise RuntimeError('staged_tree() is only for use inside all_or_none()')
    return batch.stage_tree(path)
