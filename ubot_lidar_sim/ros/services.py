"""
The services of a sensor node: ``~/sample`` (std_srvs/Trigger) and ``~/get_latest``.

``~/sample`` works in every trigger mode and is answered by the scan thread, never on the
executor, so a waiting call holds up neither /tf nor /tf_static nor the other services
(rclpy_compat.deferred_service). A continuous trigger (``timer``, ``stream``): the next sweep
of the sweep clock serves the request and runs even when nobody subscribes; the sweeps keep
their grid and none is published twice or overlaps another. trigger ``service``: a request
wakes the scan thread for a scan of its own. Either way a request waits over
'no_new_transform' skips (the transform the last sweep used is the newest) and is answered by
the first sweep that publishes (true) or is skipped for any other reason
(false, with the reason), at the latest after SAMPLE_TIMEOUT_S (false, e.g. while no /clock
arrives). ``~/get_latest`` returns the last published message from memory, without
scanning; success false before the first.
"""

import threading
import time

from std_srvs.srv import Trigger

from ubot_lidar_sim.ros.rclpy_compat import deferred_service

SAMPLE_TIMEOUT_S = 3.0     # a ~/sample call no sweep served by then answers false
RETRY_REASONS = ('no_new_transform',)   # skips a waiting ~/sample call outlasts


class SampleRequests:
    """
    The ~/sample calls of one node that wait for a sweep.

    ``on_request()`` is called (on the executor) after each new call, e.g. to wake the scan
    thread. The scan thread calls ``take()`` before a sweep and ``finish(taken, ok, why,
    reason)`` after it; ``expire()`` answers the calls older than SAMPLE_TIMEOUT_S.
    """

    def __init__(self, node, on_request, callback_group=None):
        self._lock = threading.Lock()
        self._waiting = []          # (deadline, monotonic s; DeferredReply), oldest first
        self._on_request = on_request
        self.service = deferred_service(node, Trigger, '~/sample', self._add, callback_group)

    def _add(self, _request, reply):
        with self._lock:
            self._waiting.append((time.monotonic() + SAMPLE_TIMEOUT_S, reply))
        self._on_request()

    def __bool__(self):
        """Return True while a call waits."""
        return bool(self._waiting)

    def take(self):
        """Return and clear the waiting calls: the sweep about to run serves them."""
        with self._lock:
            taken, self._waiting = self._waiting, []
        return taken

    def finish(self, taken, ok, why, reason=''):
        """Answer the calls of a sweep that published (ok) or was skipped for ``reason``."""
        if not ok and reason in RETRY_REASONS:
            with self._lock:
                self._waiting[:0] = taken
            return
        _answer(taken, ok, why if ok else f'no frame: {why}')

    def expire(self, why):
        """Answer false every call that waited SAMPLE_TIMEOUT_S; ``why``: the last skip."""
        now = time.monotonic()
        with self._lock:
            late = [item for item in self._waiting if item[0] <= now]
            self._waiting = [item for item in self._waiting if item[0] > now]
        _answer(late, False, f'no frame within {SAMPLE_TIMEOUT_S:g} s: {why or "no sweep ran"}')


def _answer(calls, ok, message):
    for _, reply in calls:
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
