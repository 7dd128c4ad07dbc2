"""
All-in-one runner: ``python -m ubot_lidar_sim run``.

Starts lidar_3d, laser_scan, terrain_sensor and demo_driver in one process on one
MultiThreadedExecutor over real DDS (the sensors of the process share one /tf intake,
ros/intake.py; a fleet runs a process per robot, pipeline/robot_processes.py), plus a
monitor node that subscribes to ``points``,
``scan`` and ``terrain`` like any other client, prints one live status line per sensor and a
final summary, and optionally writes the PNG snapshots of the demo.
"""

import argparse
import os
import signal
import sys
import time

from ubot_lidar_sim.core import yaml_io
from ubot_lidar_sim.core.config.params_file import load_blocks, node_params
from ubot_lidar_sim.core.errors import SimError
from ubot_lidar_sim.core.world.world import load_for_config, WORLD_PARAMETERS
from ubot_lidar_sim.output.view import View
from ubot_lidar_sim.output.view_server import check_ports
from ubot_lidar_sim.pipeline import robot_processes
from ubot_lidar_sim.pipeline.fleet import check_robots, robot_namespace, robot_parameters
from ubot_lidar_sim.pipeline.run_args import add_arguments, DESCRIPTION, EXAMPLE
from ubot_lidar_sim.ros.demo.demo_driver_node import DemoDriverNode
from ubot_lidar_sim.ros.demo.monitor import Monitor
from ubot_lidar_sim.ros.demo.status import print_summary, StatusDisplay
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.live_view import LiveView
from ubot_lidar_sim.ros.rclpy_compat import patient_executor
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
import yaml

_SWITCH_INTERVAL_S = 0.0005
_NODE_NAMES = ('lidar_3d', 'laser_scan', 'terrain_sensor', 'demo_driver')
# What the runner sets unless the parameter file or the command line says otherwise: the demo
# world; the 3D LiDAR's sweeps in a compute process (the four nodes share one GIL here: in
# process the sweeps and the other nodes' callbacks stall each other); tire radii equal to the
# driver's base height so tire_hit_dist reads ~0 on the ground, and a 25 m body ray so that
# veh_hit_dist sees the yard's objects from the loop.
_DEFAULTS = {
    'lidar_3d': {'world_file': 'demo', 'compute_process': True},
    'laser_scan': {'world_file': 'demo'},
    'terrain_sensor': {'world_file': 'demo', 'tire_radii_m': [0.4] * 4,
                       'vehicle_center_to_front_m': 1.8,
                       'trace_lengths_m': [25.0, 5.0, 5.0, 5.0, 5.0]},
    'demo_driver': {},
}


def node_parameters(params_file=None, preset=None, sets=()):
    """
    Return {node name: {parameter: value}} for the four nodes.

    Runner defaults, then the blocks of the parameter file that apply to the node in file order
    (core/config/params_file.py, the rule of ``scan --params`` too), then --preset, then each
    ``NODE:NAME=VALUE`` of sets (ValueError naming a malformed one).
    """
    blocks = load_blocks(params_file) if params_file else []
    out = {name: {**_DEFAULTS[name], **(node_params(blocks, name) or {})}
           for name in _NODE_NAMES}
    if preset:
        out['lidar_3d']['preset'] = preset
    for item in sets:
        node, sep, rest = item.partition(':')
        name, eq, value = rest.partition('=')
        if not (sep and eq and node in out and name):
            raise ValueError(f'--set: got {item!r}, allowed NODE:NAME=VALUE with NODE one of '
                             + ', '.join(_NODE_NAMES))
        out[node][name] = yaml_io.parse(value)
    return out


def _checked_parameters(args):
    """Return the nodes' parameters of args, or None after one line on stderr (exit 2)."""
    try:
        params = node_parameters(args.params, args.preset, args.set)
        check_robots(args.robots)
        if args.robot is not None and not 1 <= args.robot <= args.robots:
            raise ValueError(f'--robot: got {args.robot}, allowed 1-{args.robots}')
        if args.view:   # before any node starts
            check_ports(args.web_port, args.grpc_port, args.bind)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        # YAML errors span several lines (position, context): one line (exit 2).
        print('run: ' + ' '.join(str(exc).split()), file=sys.stderr)
        return None
    return params


def run(args):
    """
    Run the four nodes and the monitor; return the process exit code.

    A fleet (--robots N > 1, no --one-process) runs robot 1 here and robots 2..N in a child
    process each (pipeline/robot_processes.py); a child (--robot K) runs robot K alone, quietly.
    """
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    params = _checked_parameters(args)
    if params is None:
        return 2
    fleet = robot_processes.in_processes(args)
    children = robot_processes.start(args) if fleet else []
    try:    # a fleet's runner is robot 1; a child (--robot K) runs without status and summary
        code = _run_here(argparse.Namespace(**{**vars(args), 'robot': 1}) if fleet else args,
                         params, quiet=args.robot is not None)
    finally:
        failed = robot_processes.stop(children)
    for k, rc in failed:
        print(f"run: robot{k}'s process exited with {rc}", file=sys.stderr)
    return code or (1 if failed else 0)


def _run_here(args, params, quiet):
    """Run this process's robots (args.robot, or all); the monitor unless quiet; exit code."""
    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    stop = {'signal': None}

    def on_signal(signum, _frame):
        stop['signal'] = signum

    ros_args = [] if args.verbose else ['--ros-args', '--log-level', 'warn']
    context = rclpy.Context()
    rclpy.init(args=ros_args, context=context, signal_handler_options=SignalHandlerOptions.NO)
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    nodes = []
    muted = {}
    executor = None
    # Five nodes share one GIL: a short switch interval keeps a numpy-heavy scan from
    # waiting 5 ms for the interpreter after every released call (the convoy effect).
    old_switch = sys.getswitchinterval()
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    try:
        if not _start_nodes(args, params, context, stop, nodes):
            return 0
        nodes += [] if quiet else _watchers(args, context, nodes[0])
        executor = patient_executor(MultiThreadedExecutor)(num_threads=6, context=context)
        for node in nodes:
            muted[node] = _mute_qos_events(node)
            executor.add_node(node)
        (_spin_quietly if quiet else _spin)(args, executor, nodes, stop)
        if args.view:
            _serve_view(args, nodes[-2], nodes, stop)
        return 0
    except (SimError, ParameterException, ValueError, TypeError) as exc:
        # A bad parameter, world or preset: one line naming it, no traceback (exit 2).
        print(f'run: {exc}', file=sys.stderr)
        return 2
    finally:
        _stop_sensors(nodes)
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        for node in nodes:
            for waitable in muted.get(node, ()):
                node.add_waitable(waitable)  # destroy_node() expects its event handlers back
            node.destroy_node()
        if context.ok():
            rclpy.shutdown(context=context)
        for s, handler in old.items():
            signal.signal(s, handler)
        sys.setswitchinterval(old_switch)


def _watchers(args, context, lidar):
    """Return the live view (--view) and the monitor of robot args.robot (or 1), last."""
    n = args.robots
    monitor = Monitor(context, args.snapshots, lidar.get_parameter('world_frame').value,
                      lidar.lookup_many, robot_namespace(args.robot or 1, n) or None)
    return ([_live_view(args, context, lidar)] if args.view else []) + [monitor]


def _start_nodes(args, params, context, stop, nodes):
    """Append each robot's four nodes to nodes; return False once a signal has arrived."""
    from rclpy.parameter import Parameter

    classes = (('lidar_3d', Lidar3DNode), ('laser_scan', LaserScanNode),
               ('terrain_sensor', TerrainSensorNode), ('demo_driver', DemoDriverNode))
    n = args.robots
    robots = [args.robot] if getattr(args, 'robot', None) else range(1, n + 1)
    intakes = {}        # (world_frame, use_sim_time) -> the Intake its sensors share
    for robot, (name, cls) in ((k, c) for k in robots for c in classes):
        given = {**params[name], **(robot_parameters(robot, n)[name] if n > 1 else {})}
        kwargs = {'context': context, 'namespace': robot_namespace(robot, n) or None,
                  'parameter_overrides': [Parameter(k, value=v) for k, v in given.items()]}
        if nodes and name != 'demo_driver' and _same_world(params, name):
            kwargs.update(world=nodes[0].loaded_world, materials=nodes[0].materials)
        key = (given.get('world_frame'), given.get('use_sim_time'))
        if name != 'demo_driver':
            kwargs['intake'] = intakes.get(key)
        nodes.append(cls(**{k: v for k, v in kwargs.items() if v is not None}))
        if name != 'demo_driver':
            intakes.setdefault(key, nodes[-1].intake)
        if stop['signal']:
            return False
    return True


def _spin(args, executor, nodes, stop):
    """Spin until a signal or --seconds with the live status; then the summary and snapshots."""
    monitor = nodes[-1]
    configured = {n.get_name(): float(n.get_parameter('rate_hz').value) for n in nodes[:3]}
    t0 = time.monotonic()
    display = StatusDisplay(t0)
    while stop['signal'] is None:
        now = time.monotonic()
        if args.seconds > 0 and now - t0 >= args.seconds:
            break
        executor.spin_once(timeout_sec=0.05)
        display.update(now, monitor, configured, now - t0, args.seconds)
    # The sweeps end with the run: past it /tf is no longer taken in, and a sweep would only
    # report its transform as stale below the summary.
    _stop_sensors(nodes)
    print_summary(monitor, configured, time.monotonic() - t0, stop['signal'])
    if args.snapshots and stop['signal'] is None:
        _write_snapshots(monitor.recorder, args.snapshots, nodes)
    elif args.snapshots:
        print('snapshots skipped: interrupted (they take ~2 s to draw)')


def _spin_quietly(args, executor, nodes, stop):
    """Spin until a signal or --seconds, without status or summary (a fleet's child)."""
    t0 = time.monotonic()
    while stop['signal'] is None and not 0 < args.seconds <= time.monotonic() - t0:
        executor.spin_once(timeout_sec=0.05)


def _live_view(args, context, lidar):
    """
    Return the LiveView node of run --view: every robot, on lidar's transform buffer.

    Made after the nodes: rerun's threads start once the compute processes are forked.
    """
    view = View(web_port=args.web_port, grpc_port=args.grpc_port, color_by=args.color_by,
                bind=args.bind)
    view.announce()
    return LiveView(view, context, [robot_namespace(k, args.robots)
                                    for k in range(1, args.robots + 1)],
                    lidar.get_parameter('world_frame').value, lookup=lidar.lookup_many)


def _serve_view(args, live, nodes, stop):
    """After a run: one line of what was shown; the viewer stays served (--serve-seconds)."""
    print(f'view: {live.summary()} shown', file=sys.stderr)
    _stop_sensors(nodes)    # the viewer keeps what it was sent
    live.view.serve(args.serve_seconds, lambda: stop['signal'] is not None)


def _stop_sensors(nodes):
    """Stop every node's scan worker at once (not one after another); idempotent."""
    for node in nodes:
        getattr(node, 'request_stop', lambda: None)()


def _mute_qos_events(node):
    """
    Take the QoS event handlers (incompatible-QoS warnings) out of node's wait set.

    rclpy creates one or two per publisher and subscription and the executor polls each in
    Python on every wake-up; in one process whose topics all match they only cost time.
    Returns them so they can be put back before the node is destroyed.
    """
    from rclpy.event_handler import EventHandler

    handlers = [w for w in node.waitables if isinstance(w, EventHandler)]
    for waitable in handlers:
        node.remove_waitable(waitable)
    return handlers


def _same_world(params, name):
    """Return True when node name loads the world lidar_3d loads (the same WORLD_PARAMETERS)."""
    return all(params[name].get(k) == params['lidar_3d'].get(k) for k in WORLD_PARAMETERS)


def _write_snapshots(recorder, out_dir, nodes):

    world = getattr(nodes[1], 'world', None)
    if world is None:
        world = load_for_config(nodes[1].config)[0]
    preset = nodes[0].get_parameter('preset').value
    for path in recorder.write(out_dir, world, preset):
        print(f'snapshot: {path}')


def main(argv=None):
    """Parse the ``run`` options and run; returns the exit code."""
    parser = add_arguments(argparse.ArgumentParser(
        prog='python -m ubot_lidar_sim run', description=DESCRIPTION, epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter))
    return run(parser.parse_args(argv))


if __name__ == '__main__':
    sys.exit(main())
