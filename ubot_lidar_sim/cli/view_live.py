"""
``view`` with no MCAP or directory: the running ROS graph in Rerun's web viewer.

ros/live_view.py subscribes the sensor topics (per ``--namespace`` for a fleet), /tf and
/environment; this module starts rclpy (loaded only for this mode), the View and the spin
loop, until Ctrl-C or --serve-seconds, and ends with one line of what was shown.
"""

import math
import os
import sys
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from ubot_lidar_sim.output.view import View
from ubot_lidar_sim.ros.live_view import LiveView


def live_topics(args):
    """Return the topic names of the view options (relative ones go below each namespace)."""
    return {key: getattr(args, f'{key}_topic') for key in
            ('points', 'scan', 'boxes', 'environment')}


def command(args, checked=None):
    """Show the running graph until Ctrl-C or --serve-seconds; return 0."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    view = View(web_port=args.web_port, grpc_port=args.grpc_port, color_by=args.color_by,
                bind=args.bind)
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = executor = None
    try:
        node = LiveView(view, context, args.namespaces or ('',), args.world_frame,
                        args.robot_frame, live_topics(args))
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        print(f'viewer: {view.url} (open it in a browser on this machine; Ctrl-C ends)',
              file=sys.stderr)
        end = time.monotonic() + args.serve_seconds if args.serve_seconds > 0 else math.inf
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        print(f'view: {node.summary()} from the graph', file=sys.stderr)
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.shutdown(context=context)
    return 0
