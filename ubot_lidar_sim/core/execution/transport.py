"""
How the parent and its compute children exchange data without ever waiting on a child for ever.

A compute child can exit, be killed, be stopped (SIGSTOP) or hang at any moment, in the middle of
a message. So the parent sends and receives through a ``Channel``: its end of a socket pair,
where every operation has a deadline and raises ``ChannelTimeout`` or ``ChannelClosed`` instead
of blocking. The child keeps a plain, blocking multiprocessing ``Connection`` on the other end;
both use its framing (a 4-byte big-endian signed length, or -1 and an 8-byte length, then the
pickle).

Bulk data never crosses a socket or a pipe. A write into a pipe whose reader died can block for
ever (multiprocessing's spawn writes its payload while it still holds the pipe's read end); a
write into a file cannot. The world goes to a child in an anonymous file (``payload_file``) and
the results come back in a ``SharedResults`` block. The child inherits both descriptors
(``InheritedFd``). The files have no name (memfd, or a temporary file unlinked at once), so
nothing is left in /dev/shm when either side is killed.
"""

from __future__ import annotations

import mmap
from multiprocessing import connection, reduction
import os
import pickle
import socket
import struct
import tempfile
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.sensors.lidar import ScanResult
from ubot_lidar_sim.core.sensors.point_layouts import copy_records, FULL_DTYPE

#: A stored ScanResult: (points, beam rows, n_beams, stamp_s, sensor_pose, n_echoes, timing_ms).
ResultMessage = tuple[int, int, int, float, Any, Any, dict[str, float]]


class ChannelError(OSError):
    """A message could not be exchanged with a compute child."""


class ChannelClosed(ChannelError):
    """The child's end is closed: it exited or was killed."""


class ChannelTimeout(ChannelError):
    """The deadline passed; the stream may hold half a message (the child must be replaced)."""


def anonymous_file(name: str, n_bytes: int = 0) -> int:
    """
    Return the descriptor of a file without a name, with n_bytes allocated (OSError if no room).

    A memfd where the system has one, else a temporary file (in /dev/shm if there is one)
    unlinked before this returns.
    """
    if hasattr(os, 'memfd_create'):
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
    else:
        folder = '/dev/shm' if os.path.isdir('/dev/shm') else tempfile.gettempdir()
        fd, path = tempfile.mkstemp(prefix=name + '_', dir=folder)
        os.unlink(path)
    try:
        if n_bytes:
            os.posix_fallocate(fd, 0, n_bytes)
    except OSError:
        os.close(fd)
        raise
    return fd


def payload_file(obj: object) -> int:
    """Pickle obj into an anonymous file; return its descriptor (the caller closes it)."""
    fd = anonymous_file('ubot_lidar_sim_payload')
    try:
        with open(fd, 'wb', closefd=False) as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_payload(fd: int) -> Any:
    """Return the object payload_file wrote to fd (mapped, so sharers' offsets do not matter)."""
    with mmap.mmap(fd, os.fstat(fd).st_size, prot=mmap.PROT_READ) as view:
        return pickle.loads(view)


class InheritedFd:
    """A descriptor handed to a spawned child: it arrives there as a plain int."""

    def __init__(self, fd):
        self.fd = fd

    def __reduce__(self):
        return _detach, (reduction.DupFd(self.fd),)


def _detach(dup):
    return dup.detach()


class Channel:
    """The parent's end of a child's socket: messages with deadlines (monotonic seconds)."""

    def __init__(self, sock):
        self.sock = sock

    @classmethod
    def pair(cls) -> tuple[Channel, connection.Connection]:
        """Return (the parent's Channel, the child's multiprocessing Connection)."""
        parent, child = socket.socketpair()
        return cls(parent), connection.Connection(child.detach())

    def fileno(self) -> int:
        """Return the socket's descriptor (for multiprocessing.connection.wait)."""
        return self.sock.fileno()

    def send(self, obj: object, deadline: float) -> None:
        """Send one message by deadline; ChannelClosed / ChannelTimeout if not."""
        data = reduction.ForkingPickler.dumps(obj)
        n = len(data)
        header = struct.pack('!i', n) if n <= 0x7fffffff else struct.pack('!iQ', -1, n)
        self._io(self.sock.sendall, header, deadline)
        self._io(self.sock.sendall, data, deadline)

    def recv(self, deadline: float) -> Any:
        """Receive one message by deadline; ChannelClosed / ChannelTimeout if not."""
        size, = struct.unpack('!i', self._read(4, deadline))
        if size == -1:
            size, = struct.unpack('!Q', self._read(8, deadline))
        return pickle.loads(self._read(size, deadline))

    def close(self) -> None:
        """Close the parent's end (the child sees end of file)."""
        self.sock.close()

    def _read(self, n, deadline):
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self._io(self.sock.recv_into, view[got:], deadline)
            if k == 0:
                raise ChannelClosed('the compute process closed its end')
            got += k
        return buf

    def _io(self, call, arg, deadline):
        left = deadline - time.monotonic()
        if left <= 0.0:
            raise ChannelTimeout('deadline passed')
        self.sock.settimeout(left)
        try:
            return call(arg)
        except socket.timeout:
            raise ChannelTimeout('deadline passed') from None
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosed(f'the compute process closed its end ({exc.strerror})') from None


class SharedResults:
    """
    An anonymous shared memory block through which a child hands its ScanResult arrays over.

    Pickling a sweep's points through the socket costs a copy on each side and one context
    switch per socket buffer (tens of ms for the 5 MB of an OS1-128 sweep); here the child
    writes the arrays once and sends their lengths. The parent creates the block (space
    allocated up front: when memory is short this fails with OSError and the results take the
    socket, instead of the child dying of SIGBUS on a write); the child maps the descriptor it
    inherits. A result that does not fit goes through the socket as well.
    """

    def __init__(self, n_bytes, fd=None):
        own = fd is None
        if own:
            fd = anonymous_file('ubot_lidar_sim_results', n_bytes)
        try:
            self.map = mmap.mmap(fd, n_bytes)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd if own else None       # the parent keeps it until the child inherited it
        if not own:
            os.close(fd)
        self.n_bytes = n_bytes

    @staticmethod
    def size_for(cfg: LidarConfig) -> int:
        """Return the bytes for the largest result of cfg: 3 returns per beam, every beam."""
        n = cfg.channels * cfg.horizontal_samples
        return max(n * (3 * (FULL_DTYPE.itemsize + 8) + 8 + 1) + 64, 4096)

    def release_fd(self) -> None:
        """Close the descriptor once the child has it (the mapping stays)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def store(self, result: ScanResult) -> ResultMessage | None:
        """Write result's arrays; returns the message describing them (None: too large)."""
        arrays = (result.points, result.beam, result.hit_range_m, result.too_close)
        if sum(a.nbytes for a in arrays) > self.n_bytes:
            return None
        offset = 0
        for a in arrays:
            copy_records(np.frombuffer(self.map, a.dtype, a.size, offset), a)
            offset += -(-a.nbytes // 8) * 8
        return (len(result.points), len(result.beam), result.n_beams, result.stamp_s,
                result.sensor_pose, result.n_echoes, result.timing_ms)

    def store_poses(self, poses: ArrayLike) -> tuple[int, ...] | None:
        """
        Write a request's poses (C + 1, 4, 4) float64; returns the message (None: too large).

        Pickled, the 230 kB of a VLP-16 sweep's poses filled the socket buffer and the parent
        waited ~1.5 ms per child for the child to read them. They go at the block's end, which
        the child's results may overwrite later: it copies them first (load_poses), and the
        parent has copied the last results before it writes the next poses.
        """
        poses = np.ascontiguousarray(poses, dtype=np.float64)
        if poses.nbytes > self.n_bytes:
            return None
        offset = (self.n_bytes - poses.nbytes) // 8 * 8
        np.frombuffer(self.map, np.float64, poses.size, offset)[...] = poses.reshape(-1)
        return poses.shape

    def load_poses(self, shape: tuple[int, ...]) -> NDArray[np.float64]:
        """Return a copy of the poses store_poses wrote (shape its message)."""
        size = int(np.prod(shape))
        offset = (self.n_bytes - 8 * size) // 8 * 8
        return np.frombuffer(self.map, np.float64, size, offset).reshape(shape).copy()

    def load(self, message: ResultMessage) -> ScanResult:
        """Return the ScanResult that store wrote (views of the block: copy before reuse)."""
        n_points, n_beam, n_beams, stamp_s, pose, n_echoes, timing = message
        views, offset = [], 0
        for dtype, size in ((FULL_DTYPE, n_points), (np.int64, n_beam),
                            (np.float64, n_beams), (np.bool_, n_beams)):
            view = np.frombuffer(self.map, dtype, size, offset)
            views.append(view)
            offset += -(-view.nbytes // 8) * 8
        return ScanResult(points=views[0], beam=views[1], stamp_s=stamp_s, sensor_pose=pose,
                          n_beams=n_beams, too_close=views[3], hit_range_m=views[2],
                          n_echoes=n_echoes, timing_ms=timing)

    def close(self) -> None:
        """Unmap the block and close its descriptor."""
        self.release_fd()
        try:
            self.map.close()
        except (BufferError, ValueError):
            pass        # a view still exported: the mapping goes with the last one
