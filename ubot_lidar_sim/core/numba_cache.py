"""
Numba's on-disk kernel cache, keyed on every kernel source of the package, not on one file.

Numba stamps a cached kernel with the hash of its own source file only, so a kernel whose helper
lives in another file (layer_kernel.finish_layer inlines volumes.exit_range) would load its old
machine code after the helper changed: a stale build of the physics, silently. Importing this
module (every kernel module does, before its first ``numba.njit``) puts locators in front of
numba's own for the package's files, whose stamp is the hash of every package file that uses
numba: any kernel change recompiles every kernel. The only code that touches numba's caching
internals (numba is pinned in requirements.txt).
"""

import functools
import hashlib
from pathlib import Path

from numba.core import caching

_PACKAGE = Path(__file__).resolve().parents[1]         # .../ubot_lidar_sim


@functools.lru_cache(maxsize=1)
def kernel_sources_digest() -> bytes:
    """Return the SHA-256 over the package's numba modules (path and text, in path order)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob('*.py')):
        text = path.read_bytes()
        if b'numba' in text:
            digest.update(str(path.relative_to(_PACKAGE)).encode() + b'\0' + text + b'\0')
    return digest.digest()


class _PackageStamp:
    """Locator mixin: the package-wide stamp, for the package's own files only."""

    def get_source_stamp(self):
        """Return the hash of every kernel source of the package."""
        return kernel_sources_digest()

    @classmethod
    def from_function(cls, py_func, py_file):
        """Locate the cache of a package kernel (None elsewhere: numba's own locators)."""
        try:
            Path(py_file).resolve().relative_to(_PACKAGE)
        except (OSError, ValueError):
            return None
        return super().from_function(py_func, py_file)


class _UserProvided(_PackageStamp, caching.UserProvidedCacheLocator):
    """NUMBA_CACHE_DIR, when the user set it."""


class _InTree(_PackageStamp, caching.InTreeCacheLocator):
    """__pycache__ beside the source (the usual case)."""


class _UserWide(_PackageStamp, caching.UserWideCacheLocator):
    """The user's cache directory, where the package directory is read-only."""


def _install():
    """Put the package locators first, once per process."""
    classes = caching.CacheImpl._locator_classes
    if _InTree not in classes:
        classes[:0] = [_UserProvided, _InTree, _UserWide]


_install()
