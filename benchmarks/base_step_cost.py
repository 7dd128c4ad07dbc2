"""
CPU time of one base_sim step on the demo world: the core's step, then the publishing (IMU on/off).

base_sim owns /clock at real_time_factor max, so its per-step cost is simulated time's cost:
50 steps per simulated second (rate_hz) at every factor. One in-process node, its step and its
publishing timed with the process's CPU clock (a busy machine stretches wall time, less so
CPU time), over steps after a warm-up, the base driven as bench_closed_loop.py drives it (0.5
m/s, 0.25 rad/s from the origin: about 6 s later it stops at an object, in contact).

Usage: python benchmarks/base_step_cost.py [--steps 1000]
"""

import argparse
import sys
import time

import rclpy
from rclpy.parameter import Parameter

from ubot_lidar_sim.ros.base_sim_node import BaseSimNode

WARM_STEPS = 200


def measure(steps, imu):
    """Return {'imu', 'step_ms', 'publish_ms'}: CPU ms per step of the core and of publishing."""
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=99)
    node = BaseSimNode(context=ctx, parameter_overrides=[
        Parameter('world_file', value='demo'), Parameter('imu_enabled', value=imu),
        Parameter('cmd_vel_timeout_s', value=60.0)])
    try:
        now_ns, spent = 0, [0.0, 0.0]
        for k in range(WARM_STEPS + steps):     # the node's own loop, timed in two parts
            if k % 1000 == 0:       # a command lasts cmd_vel_timeout_s (60 s: 3000 steps)
                node.base.command((0.5, 0.0, 0.25), now_ns * 1e-9)
            now_ns += node._period_ns
            t0 = time.process_time()
            step = node._step(now_ns, node._period_ns * 1e-9)
            t1 = time.process_time()
            node._publish(step, now_ns, node._period_ns * 1e-9)
            t2 = time.process_time()
            if k >= WARM_STEPS:
                spent[0] += t1 - t0
                spent[1] += t2 - t1
        return {'imu': imu, 'step_ms': round(spent[0] / steps * 1e3, 3),
                'publish_ms': round(spent[1] / steps * 1e3, 3)}
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def main(argv=None):
    """Print one row per IMU setting; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--steps', type=int, default=1000)
    args = parser.parse_args(argv)
    for imu in (True, False):
        print(measure(args.steps, imu))
    return 0


if __name__ == '__main__':
    sys.exit(main())
