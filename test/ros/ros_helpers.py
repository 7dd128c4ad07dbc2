"""Helpers shared by the ROS node tests (imported by name: pytest puts test/ros on sys.path)."""

import time


def stamp_ns(msg):
    """Return the header stamp of msg in integer ns."""
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def trigger_scan(node, spin_until, attempts=10):
    """
    Run one on-demand scan of a sensor node; return its (ok, why).

    The node's own timer sweep (on its worker thread) can take the newest transform first; the
    node then refuses to sweep that transform again ('no_new_transform'), which is right, so
    the test waits 50 ms for a newer one and asks again.
    """
    ok, why = node.run_scan(on_demand=True)
    for _ in range(attempts):
        if ok or not why.startswith('no_new_transform'):
            break
        end = time.monotonic() + 0.05
        spin_until(lambda: time.monotonic() > end)
        ok, why = node.run_scan(on_demand=True)
    return ok, why
