"""
The package's own transform buffer: a frame tree over /tf and /tf_static (no rclpy, no tf2).

Each child frame has one parent and either one static transform or a bounded, time-sorted
history of dynamic ones. Lookups chain the edges through the nearest common ancestor and
interpolate each edge in time (linear translation, slerp rotation), vectorised over many times.
A dynamic frame not heard from within the history is forgotten (bounded memory however many
frame ids come and go). Quaternions are (x, y, z, w) as in geometry_msgs; times are float
seconds.
"""

import math

import numpy as np

from ubot_lidar_sim.core.errors import SimError
from ubot_lidar_sim.core.poses import invert, slerp, to_matrix


class TransformError(SimError):
    """Base class of the buffer's errors."""


class InvalidTransformError(TransformError):
    """A transform was refused: NaN, bad quaternion, bad frame names, too old, or a cycle."""


class CycleError(InvalidTransformError):
    """A transform would close a loop in the frame tree."""


class FrameNotFoundError(TransformError):
    """A frame is unknown, or the two frames are not connected."""


class ExtrapolationError(TransformError):
    """A time lies outside the history of an edge by more than the tolerance."""


def _validate(parent, child, translation, quaternion):
    """Return (translation (3,), unit quaternion (4,)) float64 or raise InvalidTransformError."""
    for role, name in (('parent', parent), ('child', child)):
        if not isinstance(name, str) or not name:
            raise InvalidTransformError(
                f'{role} frame id must be a non-empty string, got {name!r}')
        if name.startswith('/'):
            raise InvalidTransformError(f'{role} frame id {name!r} must not start with "/"')
    if parent == child:
        raise CycleError(f'transform {parent!r} -> {child!r} has the same parent and child')
    if type(translation) is tuple and type(quaternion) is tuple and len(translation) == 3 \
            and len(quaternion) == 4:
        # The /tf path (thousands of transforms per second): plain floats, no numpy call. A
        # value it does not accept takes the checks below for their error message.
        t, q = tuple(map(float, translation)), tuple(map(float, quaternion))
        norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
        if all(map(math.isfinite, t)) and math.isfinite(norm) and abs(norm - 1.0) <= 1e-3:
            return t, (q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm)
    t = np.asarray(translation, dtype=np.float64).reshape(3)
    if not np.all(np.isfinite(t)):
        raise InvalidTransformError(
            f'{parent!r} -> {child!r}: translation {t.tolist()} is not finite')
    q = np.asarray(quaternion, dtype=np.float64).reshape(4)
    if not np.all(np.isfinite(q)):
        raise InvalidTransformError(
            f'{parent!r} -> {child!r}: quaternion {q.tolist()} is not finite')
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        raise InvalidTransformError(f'{parent!r} -> {child!r}: quaternion is zero')
    if abs(norm - 1.0) > 1e-3:
        raise InvalidTransformError(
            f'{parent!r} -> {child!r}: quaternion {q.tolist()} has norm {norm:.6g}, '
            'allowed 1 +- 1e-3')
    return t, q / norm


class _Edge:
    """Transforms parent <- child: one static entry or a time-sorted bounded history."""

    __slots__ = ('parent', 'static', 't', 'p', 'q', 'start', 'n', 'newest')

    def __init__(self, parent, static):
        self.parent = parent
        self.static = static
        self.newest = -math.inf      # newest stamp (s), a plain float for the pruning scan
        self.t = np.empty(16)
        self.p = np.empty((16, 3))
        self.q = np.empty((16, 4))
        self.start = 0
        self.n = 0

    def times(self):
        return self.t[self.start:self.start + self.n]

    def insert(self, stamp_s, trans, quat, cache_time_s):
        if self.static:
            self.t[0], self.p[0], self.q[0], self.start, self.n = stamp_s, trans, quat, 0, 1
            return
        end = self.start + self.n
        if self.n and stamp_s < self.t[end - 1] - cache_time_s:
            raise InvalidTransformError(
                f'{self.parent!r}: stamp {stamp_s:.6f} s is older than the history '
                f'({cache_time_s} s before the newest, {self.t[end - 1]:.6f} s)')
        if end == len(self.t):
            self._make_room()
            end = self.start + self.n
        if self.n == 0 or stamp_s > self.t[end - 1]:
            self.t[end], self.p[end], self.q[end] = stamp_s, trans, quat
            self.n += 1
            self.newest = stamp_s
        else:
            # Out-of-order or repeated stamp: rare, so an O(n) insert is fine.
            times = self.times()
            i = int(np.searchsorted(times, stamp_s))
            if i < self.n and times[i] == stamp_s:
                self.p[self.start + i], self.q[self.start + i] = trans, quat
                return
            sl = slice(self.start + i, end)
            dst = slice(self.start + i + 1, end + 1)
            self.t[dst], self.p[dst], self.q[dst] = (
                self.t[sl].copy(), self.p[sl].copy(), self.q[sl].copy())
            self.t[self.start + i] = stamp_s
            self.p[self.start + i], self.q[self.start + i] = trans, quat
            self.n += 1
        # Keep everything within cache_time_s of the newest entry. Entries age out one or two
        # per insert, so stepping past them is cheaper than a search (thousands of inserts/s).
        t, oldest_kept = self.t, self.t[self.start + self.n - 1] - cache_time_s
        while t[self.start] < oldest_kept:
            self.start += 1
            self.n -= 1

    def _make_room(self):
        live = slice(self.start, self.start + self.n)
        if self.n * 2 > len(self.t):
            size = 2 * len(self.t)
        else:
            size = len(self.t)
        t, p, q = np.empty(size), np.empty((size, 3)), np.empty((size, 4))
        t[:self.n], p[:self.n], q[:self.n] = self.t[live], self.p[live], self.q[live]
        self.t, self.p, self.q, self.start = t, p, q, 0

    def gap(self, t0_s, t1_s):
        """Return the longest time (s) between two samples that bracket a time in [t0_s, t1_s]."""
        if self.static or self.n < 2:
            return 0.0
        t = self.t[self.start:self.start + self.n]
        i0 = max(int(np.searchsorted(t, t0_s, side='right')) - 1, 0)
        i1 = min(int(np.searchsorted(t, t1_s, side='left')), self.n - 1)
        return float(np.max(np.diff(t[i0:i1 + 1]))) if i1 > i0 else 0.0

    def stamps_between(self, t0_s, t1_s):
        """Return the stamps (s) of this edge's samples strictly between t0_s and t1_s."""
        if self.static:
            return self.t[:0]
        t = self.t[self.start:self.start + self.n]
        return t[np.searchsorted(t, t0_s, side='right'):np.searchsorted(t, t1_s, side='left')]

    def sample(self, child, times_s, tolerance_s):
        """Return parent-from-child transforms (C, 4, 4) at times (C,)."""
        lo, hi = self.start, self.start + self.n
        if self.static:
            return np.broadcast_to(to_matrix(self.p[lo], self.q[lo]), (len(times_s), 4, 4))
        t = self.t[lo:hi]
        early = t[0] - times_s.min() if len(times_s) else 0.0
        late = times_s.max() - t[-1] if len(times_s) else 0.0
        if early > tolerance_s or late > tolerance_s:
            bad = times_s.min() if early > tolerance_s else times_s.max()
            raise ExtrapolationError(
                f'{self.parent!r} -> {child!r}: time {bad:.6f} s is outside the history '
                f'[{t[0]:.6f}, {t[-1]:.6f}] s by more than the tolerance of {tolerance_s} s')
        # Within the tolerance the end value is held (no extrapolation of motion).
        ts = np.clip(times_s, t[0], t[-1])
        if self.n == 1:
            return np.broadcast_to(to_matrix(self.p[lo], self.q[lo]), (len(times_s), 4, 4))
        i = np.clip(np.searchsorted(t, ts, side='right'), 1, self.n - 1)
        t0, t1 = t[i - 1], t[i]
        u = (ts - t0) / (t1 - t0)
        p0, p1 = self.p[lo + i - 1], self.p[lo + i]
        trans = p0 + u[:, None] * (p1 - p0)
        quat = slerp(self.q[lo + i - 1], self.q[lo + i], u)
        return to_matrix(trans, quat)


class TransformBuffer:
    """
    Frame tree with static and dynamic transforms, chained and time-interpolated lookups.

    ``cache_time_s``: dynamic history kept per edge, relative to its newest stamp (s).
    ``tolerance_s``: how far a lookup may reach outside an edge's history; the end value is
    held there (s). Beyond it lookups raise ExtrapolationError.

    A dynamic frame whose newest transform is more than ``cache_time_s`` older than the newest
    stamp of the buffer, and that no frame hangs from, is forgotten (checked once per
    ``cache_time_s / PRUNE_STEPS`` of stamp time): with 1000 new frame ids per second and a
    10 s history the tree holds at most ~11,000 of them. A frame that still has children is
    kept, so a lookup through it says how old it is rather than that it does not exist.
    """

    PRUNE_STEPS = 10
    LISTED_FRAMES = 12      # an error names at most this many known frames

    def __init__(self, cache_time_s=10.0, tolerance_s=0.0):
        if not cache_time_s > 0:
            raise ValueError(f'cache_time_s: got {cache_time_s!r}, allowed > 0')
        if not tolerance_s >= 0:
            raise ValueError(f'tolerance_s: got {tolerance_s!r}, allowed >= 0')
        self.cache_time_s = float(cache_time_s)
        self.tolerance_s = float(tolerance_s)
        self._edges = {}
        self._children = {}         # parent frame id -> number of edges hanging from it
        self._next_prune_s = -math.inf

    def clear(self):
        """Forget every transform (e.g. after the clock jumped backwards)."""
        self._edges.clear()
        self._children.clear()
        self._next_prune_s = -math.inf

    def frames(self):
        """Return the set of known frame ids."""
        return set(self._edges) | set(self._children)

    def frame_count(self):
        """Return the number of known frame ids (without building their set)."""
        return len(self._edges) + sum(1 for f in self._children if f not in self._edges)

    def knows(self, frame):
        """Return True when a transform to or from frame has arrived."""
        return self._known(frame)

    def _known(self, frame):
        return frame in self._edges or frame in self._children

    def _known_text(self):
        """Return the known frames for an error message, at most LISTED_FRAMES of them."""
        known = sorted(self.frames())
        if not known:
            return 'none'
        if len(known) <= self.LISTED_FRAMES:
            return str(known)
        return f'{len(known)} frames, e.g. {known[:self.LISTED_FRAMES]}'

    def _attach(self, child, edge):
        old = self._edges.get(child)
        if old is not None:
            self._detach(child)
        self._edges[child] = edge
        self._children[edge.parent] = self._children.get(edge.parent, 0) + 1

    def _detach(self, child):
        edge = self._edges.pop(child)
        left = self._children[edge.parent] - 1
        if left:
            self._children[edge.parent] = left
        else:
            del self._children[edge.parent]

    def prune(self, now_s):
        """
        Forget the dynamic leaf frames whose newest transform is older than now_s - cache_time_s.

        Repeats while removing a leaf leaves its parent a stale leaf. Returns how many went.
        """
        cutoff = now_s - self.cache_time_s
        removed, stale = 0, [c for c, e in self._edges.items()
                             if not e.static and e.newest < cutoff]
        while stale:
            gone = [c for c in stale if c not in self._children]
            for child in gone:
                self._detach(child)
            removed += len(gone)
            stale = [c for c in stale if c in self._edges] if gone else []
        return removed

    def set_transform(self, parent, child, stamp_s, translation, quaternion, static=False):
        """
        Add parent-from-child at stamp_s (s). Raises InvalidTransformError / CycleError.

        translation (3,) m and quaternion (4,) (x, y, z, w) give the pose of child in parent.
        A child that gets a new parent, or changes between static and dynamic, starts afresh.
        """
        trans, quat = _validate(parent, child, translation, quaternion)
        if not math.isfinite(stamp_s):
            raise InvalidTransformError(f'{parent!r} -> {child!r}: stamp {stamp_s!r} not finite')
        edge = self._edges.get(child)
        if edge is None or edge.parent != parent or edge.static != static:
            self._check_cycle(parent, child)
            edge = _Edge(parent, static)
            self._attach(child, edge)
        edge.insert(float(stamp_s), trans, quat, self.cache_time_s)
        if not static and stamp_s >= self._next_prune_s:
            self._next_prune_s = stamp_s + self.cache_time_s / self.PRUNE_STEPS
            self.prune(stamp_s)

    def _check_cycle(self, parent, child):
        frame, seen = parent, 0
        while frame in self._edges and seen <= len(self._edges):
            frame = self._edges[frame].parent
            seen += 1
            if frame == child:
                break
        if frame == child or parent == child:
            raise CycleError(
                f'transform {parent!r} -> {child!r} would close a loop: {child!r} is already '
                f'an ancestor of {parent!r}')

    def _chain(self, frame):
        """Return [frame, parent, grandparent, ...] up to the root."""
        chain = [frame]
        while frame in self._edges:
            frame = self._edges[frame].parent
            chain.append(frame)
        return chain

    def _path(self, target, source):
        for name in (target, source):
            if not self._known(name):
                raise FrameNotFoundError(f'frame {name!r} does not exist '
                                         f'(known: {self._known_text()})')
        up_s, up_t = self._chain(source), self._chain(target)
        common = set(up_s) & set(up_t)
        if not common:
            raise FrameNotFoundError(
                f'frames {target!r} and {source!r} are not connected (roots '
                f'{up_t[-1]!r} and {up_s[-1]!r})')
        s_len = next(i for i, f in enumerate(up_s) if f in common)
        t_len = up_t.index(up_s[s_len])
        return up_s[:s_len], up_t[:t_len]

    def latest_common_time(self, target, source):
        """
        Return the newest time at which target-from-source is known without extrapolation.

        math.inf when every edge on the path is static. Raises FrameNotFoundError.
        """
        up_s, up_t = self._path(target, source)
        latest = math.inf
        for child in up_s + up_t:
            edge = self._edges[child]
            if not edge.static:
                latest = min(latest, edge.times()[-1])
        return latest

    def earliest_common_time(self, target, source):
        """
        Return the oldest time at which target-from-source is known without extrapolation.

        -math.inf when every edge on the path is static. Raises FrameNotFoundError.
        """
        up_s, up_t = self._path(target, source)
        return max((self._edges[c].times()[0] for c in up_s + up_t
                    if not self._edges[c].static), default=-math.inf)

    def largest_gap(self, target, source, t0_s, t1_s):
        """
        Return the longest time (s) a lookup in [t0_s, t1_s] interpolates across.

        The longest spacing of two samples of one edge of the path around those times (0 for
        static paths). Raises FrameNotFoundError.
        """
        up_s, up_t = self._path(target, source)
        return max((self._edges[c].gap(t0_s, t1_s) for c in up_s + up_t), default=0.0)

    def stamps_between(self, target, source, t0_s, t1_s):
        """
        Return the sorted stamps (s) of the path's dynamic samples strictly inside (t0_s, t1_s).

        Between two neighbours of [t0_s, these, t1_s] every edge of the path interpolates one
        pair of samples. Raises FrameNotFoundError.
        """
        up_s, up_t = self._path(target, source)
        parts = [self._edges[c].stamps_between(t0_s, t1_s) for c in up_s + up_t]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0)

    def lookup(self, target, source, time_s):
        """Return target-from-source (4, 4) at time_s: maps points in source to target."""
        return self.lookup_many(target, source, np.array([float(time_s)]))[0]

    def lookup_many(self, target, source, times_s):
        """
        Return target-from-source transforms (C, 4, 4) at the times (C,) s.

        Raises FrameNotFoundError or ExtrapolationError (never returns NaN).
        """
        times_s = np.asarray(times_s, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(times_s)):
            raise ExtrapolationError(f'lookup {target!r} <- {source!r}: times must be finite')
        up_s, up_t = self._path(target, source)
        ident = np.broadcast_to(np.eye(4), (len(times_s), 4, 4))
        ancestor_from_source = ident
        for child in up_s:
            edge = self._edges[child]
            ancestor_from_source = edge.sample(child, times_s, self.tolerance_s) @ \
                ancestor_from_source
        ancestor_from_target = ident
        for child in up_t:
            edge = self._edges[child]
            ancestor_from_target = edge.sample(child, times_s, self.tolerance_s) @ \
                ancestor_from_target
        return np.ascontiguousarray(invert(ancestor_from_target) @ ancestor_from_source)
