"""
The services of a sensor node: ``~/sample`` (std_srvs/Trigger) and ``~/get_latest``.

``~/sample`` works in every trigger mode and is answered by the scan thread, never on the
executor, so a waiting call holds up neither /tf nor /tf_static nor the other services
(rclpy_compat.deferred_service). A continuous trigger (``timer``, ``stream``): the first sweep
of the sweep clock that ends after the call serves it (the sweep in progress when the call
arrives, unless a parameter set changed the config during it: then the next one), and runs even
when nobody subscribes; the sweeps keep their grid and none is published twice or overlaps
another. trigger ``service``: a request wakes the scan thread for a scan of its own. Either way
a request waits over 'no_new_transform' skips (the transform the last sweep used is the newest,
or no /tf has arrived yet)
and is answered by the first sweep that publishes (true) or is skipped for any other reason
(false, with the reason). A call no sweep has taken within its wait bound is answered false
then, with what the node is doing (e.g. while no /clock arrives, or a sweep still runs):
SAMPLE_TIMEOUT_S, plus one period for a continuous trigger (the sweep serving it ends up to a
period after the call), checked on the executor every EXPIRE_POLL_S, so a long sweep does not
hold the answer. A call a sweep has taken gets its outcome when it ends (that sweep waits at
most max(2 s, 4 periods) for its poses; a compute child that fails is replaced). ``~/get_latest``
returns the last published message from memory, without scanning; success false before the
first.
"""

import threading
import time

from std_srvs.srv import Trigger

from ubot_lidar_sim.ros.rclpy_compat import deferred_service

SAMPLE_TIMEOUT_S = 3.0     # answered by then at the latest (continuous: + one period)
EXPIRE_POLL_S = 0.1        # how often the calls past their bound are answered
RETRY_REASONS = ('no_new_transform',)   # skips a waiting ~/sample call outlasts


class SampleRequests:
    """
    The ~/sample calls of one node that wait for a sweep.

    ``on_request()`` is called (on the executor) after each new call, e.g. to wake the scan
    thread. The scan thread calls ``take()`` before a sweep and ``finish(taken, ok, why,
    reason)`` after it. ``expire(why_since)`` answers false the calls that waited ``wait_s``
    (SAMPLE_TIMEOUT_S + the period for a continuous trigger) without a sweep taking them, with
    the text ``why_since(arrival)`` (monotonic s) gives: what the node did since that call
    arrived. A call a sweep has taken gets that sweep's outcome. ``poll_with(timer)``: the timer
    that calls ``expire`` runs only while a call waits or a sweep holds one (an idle node's
    executor is not woken every EXPIRE_POLL_S; a fleet has nine such timers).
    """

    def __init__(self, node, on_request, callback_group=None, wait_s=SAMPLE_TIMEOUT_S):
        self._lock = threading.Lock()
        self._waiting = []          # (arrival, monotonic s; DeferredReply), oldest first
        self._held = 0              # calls taken by a sweep that has not finished them
        self._timer = None
        self._on_request = on_request
        self.wait_s = wait_s
        self.service = deferred_service(node, Trigger, '~/sample', self._add, callback_group)

    def poll_with(self, timer):
        """Run timer (it calls ``expire``) only while calls wait or are held; see the class."""
        with self._lock:
            self._timer = timer
            self._arm()

    def _arm(self):
        """Reset or cancel the poll timer for the calls waiting or held (under the lock)."""
        busy = bool(self._waiting) or self._held > 0
        if self._timer is not None and busy == self._timer.is_canceled():
            if busy:
                self._timer.reset()
            else:
                self._timer.cancel()

    def _add(self, _request, reply):
        with self._lock:
            self._waiting.append((time.monotonic(), reply))
            self._arm()     # on the executor, which then waits on the timer again
        self._on_request()

    def __bool__(self):
        """Return True while a call waits (taken by no sweep yet)."""
        return bool(self._waiting)

    def take(self, before=None):
        """Return and clear the waiting calls (that arrived before ``before``, monotonic s)."""
        with self._lock:
            cut = len(self._waiting) if before is None else sum(
                1 for arrival, _ in self._waiting if arrival <= before)
            taken, self._waiting = self._waiting[:cut], self._waiting[cut:]
            self._held += len(taken)
        return taken

    def finish(self, taken, ok, why, reason=''):
        """Answer the calls of a sweep that published (ok) or was skipped for ``reason``."""
        with self._lock:
            self._held -= len(taken)
            if not ok and reason in RETRY_REASONS:
                self._waiting[:0] = taken
                return
        for _, reply in taken:
            _answer(reply, ok, why if ok else f'no frame: {why}')

    def expire(self, why_since):
        """Answer false every call no sweep has taken that waited ``wait_s``; see the class."""
        with self._lock:
            late_before = time.monotonic() - self.wait_s
            late = [item for item in self._waiting if item[0] <= late_before]
            self._waiting = [item for item in self._waiting if item[0] > late_before]
            self._arm()
        for arrival, reply in late:
            _answer(reply, False, f'no frame within {self.wait_s:g} s: {why_since(arrival)}')


def _answer(reply, ok, message):
    reply.reply(Trigger.Response(success=bool(ok), message=message))


class LatestMessage:
    """
    ``~/get_latest``: the last message published, kept by reference (never modified after).

    ``srv_type``'s response has ``success``, ``message`` and a field named ``field`` of the
    published message's type.
    """

    def __init__(self, node, srv_type, field, callback_group=None):
        self._field = field
        self._latest = None             # (message, text), replaced in one assignment
        self.service = node.create_service(srv_type, '~/get_latest', self._serve,
                                           callback_group=callback_group)

    def remember(self, msg, count_text):
        """Keep msg (just published) and a description such as '1234 points'."""
        stamp = msg.header.stamp
        self._latest = (msg, f'{count_text}, stamp {stamp.sec}.{stamp.nanosec:09d} s, '
                             f'frame {msg.header.frame_id}')

    def _serve(self, _request, response):
        latest = self._latest
        if latest is None:
            response.success, response.message = False, 'nothing published yet'
        else:
            setattr(response, self._field, latest[0])
            response.success, response.message = True, latest[1]
        return response
