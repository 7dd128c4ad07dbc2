"""
Base class of the three sensor nodes: parameters, world, trigger, sweep window, diagnostics.

A sensor subclasses SensorNode, creates its publishers, implements ``scan_once(now_ns)`` and
``has_subscribers()``, and calls ``start_trigger()`` last in its ``__init__``. The windows of its
sweeps come from one SweepClock (ros/sweep_clock.py): contiguous sweeps, stamps one period
apart; the pose queries it calls back are in ros/pose_queries.py. The base counts
every skipped scan by reason and reports it on /diagnostics (ros/diagnostics.py); its inputs
(/tf, environment) come through ros/intake.py; see docs/architecture.md.
"""

import math
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from ubot_lidar_sim.core.config import flat_fields
from ubot_lidar_sim.core.errors import ConfigError, SimError
from ubot_lidar_sim.core.robot.fleet_body import sensor_world
from ubot_lidar_sim.core.world.world import load_for_config, materials_for_config
from ubot_lidar_sim.ros.actor_frames import ActorFrames
from ubot_lidar_sim.ros.diagnostics import ScanStats, SkipScan, WARN_THROTTLE_S
from ubot_lidar_sim.ros.intake import Intake, TF_CACHE_S
from ubot_lidar_sim.ros.params import ConfigParameters
from ubot_lidar_sim.ros.pose_queries import PoseQueries, TF_MAX_AGE_S, TF_MAX_GAP_S
from ubot_lidar_sim.ros.qos import output_qos
from ubot_lidar_sim.ros.robot_description import node_robot
from ubot_lidar_sim.ros.run import tolerate_destroyed
from ubot_lidar_sim.ros.schedule import ClockWatch
from ubot_lidar_sim.ros.services import EXPIRE_POLL_S, SAMPLE_TIMEOUT_S, SampleRequests
from ubot_lidar_sim.ros.sweep_clock import SweepClock
from ubot_lidar_sim.ros.tf_buffer import TransformError
from ubot_lidar_sim.ros.world_wait import loading_world

RETRY_S = 0.05            # continuous triggers: a skipped sweep is tried again this much later
MIN_RATE_HZ = 0.01         # a node's sweep (and so its TF history) spans at most 100 s
NAMESPACED = ('frame_id', 'sensor_id')     # in a namespace their defaults go under it
NO_CLOCK = ('waiting for /clock: use_sim_time is true and no clock message has arrived; '
            'nothing is published until one does')


class SensorNode(PoseQueries, Node):
    """
    Shared rclpy layer of the sensors (see the module docstring).

    Attributes for subclasses: ``config`` (current frozen config), ``params``
    (ConfigParameters), ``world``, ``materials``, ``tf_buffer``, ``weather`` (latest good core
    Weather), ``output_qos`` (from qos_reliability / qos_depth), ``scan_index``,
    ``_input_group`` (callback group of low-rate inputs).
    """

    def __init__(self, node_name, config_cls, *, world=None, materials=None, intake=None,
                 **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        fields = {f.name for f in flat_fields(config_cls)}
        self.params = ConfigParameters(self, config_cls,
                                       validate=lambda cfg: self.validate_config(cfg),
                                       namespaced=[n for n in NAMESPACED if n in fields])
        cfg = self.params.config
        if world is None:
            with loading_world(self, cfg.world_file):
                world, materials = load_for_config(cfg)
        elif materials is None:
            materials = materials_for_config(cfg)
        if world.frame != cfg.world_frame:
            raise ConfigError('world_frame', cfg.world_frame,
                              f'the frame of world {cfg.world_file!r} ({world.frame!r})')
        self.loaded_world = world   # as loaded (shared with other nodes), without the fleet
        robot = self.params.robot or node_robot(self, getattr(cfg, 'robot_description', ''),
                                                getattr(cfg, 'robot_args', ''), cfg.model_paths)
        world = sensor_world(world, cfg, robot)     # the fleet's others, its own body
        self.world, self.materials = world, materials
        self.validate_config(cfg)       # what a set is checked against, at start-up too
        self.add_on_set_parameters_callback(self._check_sim_time)
        rate_hz = cfg.rate_hz
        if rate_hz < MIN_RATE_HZ:
            raise ConfigError('rate_hz', rate_hz, f'>= {MIN_RATE_HZ} Hz on a node (a sweep '
                              f'needs its transforms of the last 1 / rate_hz s)')
        self.scan_index = 0
        self.output_qos = output_qos(cfg.qos_reliability, cfg.qos_depth)
        self._input_group = MutuallyExclusiveCallbackGroup()
        self._work_group = MutuallyExclusiveCallbackGroup()
        self._busy = threading.Lock()
        self._period_s = 1.0 / rate_hz
        self.stats = ScanStats(self.get_logger(), self._period_s,
                               lambda: self.get_clock().now().nanoseconds * 1e-9)
        # The history holds two sweeps, so that a slow sweep's first column has its pose.
        # intake: another node's of this process, shared (same clock and world frame).
        history_s = max(TF_CACHE_S, 2.0 * self._period_s)
        self.intake = (intake.share(self.stats.counts, history_s) if intake is not None else
                       Intake(self, cfg.world_frame, self.stats.counts, self._input_group,
                              history_s=history_s))
        self.tf_buffer = self.intake.tf_buffer      # guarded by self.intake.lock
        self._posed = False     # a pose in world_frame has been found since the node started
        # The world's moving objects, posed from /tf per sweep.
        self.actor_frames = ActorFrames(self, TF_MAX_GAP_S, TF_MAX_AGE_S)
        self._diag_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._clock_watch = ClockWatch()
        self._namesakes = 1             # nodes on the graph with this node's full name
        self._last_scan_ns = None
        self.sweep_clock = SweepClock(self, self._period_s, self._period_s)
        self.continuous = True
        self.waited_s = 0.0
        # Diagnostics on wall time so that they flow while a simulated clock is paused.
        self.create_timer(1.0, self._publish_diagnostics, callback_group=self._input_group,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    @property
    def config(self):
        """Return the validated configuration in force; live changes land here."""
        return self.params.config

    @property
    def weather(self):
        """Return the latest good core Weather from the environment topic (clear before)."""
        return self.intake.weather

    # -- hooks for subclasses ---------------------------------------------------------------
    count_unit = 'points'       # what scan_once counts, in ~/sample answers

    def has_subscribers(self):
        """Return True when someone listens to the output (default: always)."""
        return True

    def scan_once(self, now_ns):
        """Do one scan and publish it; return the number of points (or rays). Raise SkipScan."""
        raise NotImplementedError

    def build_sweeper(self, cfg):
        """Return the core object that sweeps cfg in this node's world (SimError: it cannot)."""
        return None

    def validate_config(self, cfg):
        """
        Raise a SimError when a config cannot run in this node's world.

        Called at start-up and before a parameter set is accepted, with the whole config the
        set would give, so a running node never takes a value on which it cannot sweep:
        ignored_objects must name objects of the world, and the node's core sweeper is built
        from it (``build_sweeper``: every check the core makes on a config it sweeps). The one
        built for the config that is then in force is ``sweeper(config)``'s, not built twice.
        """
        self.world.ignored_indices(cfg.ignored_objects)
        self._built = (cfg, self.build_sweeper(cfg))

    def sweeper(self, cfg):
        """Return the sweeper of cfg: the one validate_config built, or a new one."""
        built = getattr(self, '_built', None)
        return built[1] if built is not None and built[0] is cfg else self.build_sweeper(cfg)

    def _check_sim_time(self, params):
        """Refuse use_sim_time true at run time while nothing publishes /clock (see docs)."""
        for p in params:
            if p.name == 'use_sim_time' and p.value is True \
                    and not self.get_parameter('use_sim_time').value \
                    and self.count_publishers('/clock') == 0:
                # Called before rclpy's time source takes the value (callbacks run newest
                # first): refused here, the node stays on its clock and keeps sweeping.
                return SetParametersResult(successful=False, reason=(
                    'use_sim_time: got true, allowed true at run time only while /clock has a '
                    'publisher (none now: nothing would be published until one starts); '
                    'start the simulation first, or set use_sim_time at start-up'))
        return SetParametersResult(successful=True)

    def on_config_changed(self, names):
        """Apply accepted parameter changes (called before the next scan with their names)."""

    def sensor_label(self):
        """Return the sensor's name on /diagnostics (default: the node's name)."""
        return self.get_name()

    def status_warnings(self):
        """Return texts that make the /diagnostics status WARN (subclasses may extend)."""
        return []

    # -- trigger ----------------------------------------------------------------------------
    def start_trigger(self, rate_hz=None, trigger='timer', duration_s=None):
        """
        Start the scan thread and ~/sample (ros/services.py).

        Scans run on a worker thread of this node, so the executor keeps taking /tf while a
        scan computes (a single-threaded executor takes one message per subscription per
        cycle). With a continuous trigger ('timer', or 'stream', its alias) the worker scans
        back to back: ``scan_once`` takes the next window of the sweep clock (duration_s long,
        None: one period) and waits for its poses; after a skip it tries again RETRY_S later.
        With 'service' a ~/sample call wakes it and it scans the newest window /tf covers.
        """
        rate_hz = rate_hz or self.config.rate_hz
        self._period_s = 1.0 / rate_hz
        self.sweep_clock = SweepClock(self, self._period_s,
                                      self._period_s if duration_s is None else duration_s)
        self._trigger = trigger
        self.continuous = trigger != 'service'
        self._wake, self._stop = threading.Event(), threading.Event()
        self._sweep_since = None        # monotonic s the running scan began, None between
        self._outcome = (-math.inf, True, '')   # (monotonic s, ok, text) of the last scan
        self._samples = SampleRequests(
            self, self._wake.set if trigger == 'service' else (lambda: None), self._work_group,
            SAMPLE_TIMEOUT_S + (self._period_s if self.continuous else 0.0))
        # Answered on the executor, so a call's bound holds while a long sweep runs.
        # It runs only while a call waits or a sweep holds one (SampleRequests.poll_with).
        self._samples.poll_with(self.create_timer(
            EXPIRE_POLL_S, self._expire_samples, callback_group=self._input_group,
            clock=Clock(clock_type=ClockType.STEADY_TIME)))
        self._worker = threading.Thread(target=self._work_loop, daemon=True,
                                        name=f'{self.get_name()}_scan')
        self._worker.start()
        if self.continuous:
            self._wake.set()
        self.get_logger().info(self.start_line(rate_hz, trigger))

    def start_line(self, rate_hz, trigger):
        """Return the start line: sensor, preset, model, world, rate, frames."""
        cfg = self.config
        what = [f'{self.get_fully_qualified_name()} started: {self.sensor_label()}']
        what += [f'{name} {getattr(cfg, name)}' for name in ('preset', 'model')
                 if hasattr(cfg, name)]
        what.append(f'world {cfg.world_file!r} ({len(self.world.objects)} objects)')
        what.append(f'{rate_hz:g} Hz ({trigger})' if trigger != 'service'
                    else 'on ~/sample calls')
        frame = getattr(cfg, 'frame_id', None)
        if frame:
            what.append(f'poses of {frame!r} in {cfg.world_frame!r} from /tf')
        return ', '.join(what)

    @tolerate_destroyed
    def _expire_samples(self):
        self._samples.expire(self._sample_status)

    def _sample_status(self, since):
        """Return what the node did since a ~/sample call arrived at ``since`` (monotonic s)."""
        if self._clock_missing():
            return NO_CLOCK
        started = self._sweep_since
        if started is not None:
            return (f'a sweep has run for {time.monotonic() - started:.1f} s (waiting for '
                    '/tf to cover its window, or computing)')
        at, ok, why = self._outcome
        return why if at >= since and not ok else 'no sweep ran since the call'

    def stopping(self, wait_s=0.0):
        """Return True once the node stops (waits up to wait_s s for it)."""
        return self._stop.wait(wait_s)

    def _work_loop(self):
        while not self._stop.is_set():
            if not self._wake.wait(timeout=0.2):
                continue
            self._wake.clear()
            if self._stop.is_set():
                break
            # The ~/sample calls waiting now are served by this scan, which then runs even
            # when nobody subscribes. A continuous sweep that publishes also serves the calls
            # that arrived while it ran (it ends after them), unless a parameter set changed
            # the config meanwhile: those wait for the next sweep, which has the new values.
            calls = self._samples.take()
            config, self._sweep_since = self.config, time.monotonic()
            try:
                ok, why = self.run_scan(on_demand=bool(calls) or self._trigger == 'service')
            except Exception as exc:  # keep the worker alive whatever a scan raised
                ok, why = self.stats.skip('error', f'{type(exc).__name__}: {exc}')
            ended = time.monotonic()
            if ok and self.continuous and self.config is config:
                calls += self._samples.take(before=ended)
            self._outcome, self._sweep_since = (ended, ok, why), None
            self._samples.finish(calls, ok, why, '' if ok else self.stats.counts['last_status'])
            if self._trigger == 'service' and self._samples and not self._stop.wait(0.01):
                self._wake.set()        # calls that wait for a newer transform: try again
            elif self.continuous:
                # The next sweep at once; after a skip (no subscriber, no pose) shortly.
                if ok or not self._stop.wait(min(RETRY_S, self._period_s)):
                    self._wake.set()

    def request_stop(self):
        """Ask the scan worker to stop after its scan (no wait): several nodes stop together."""
        if getattr(self, '_worker', None) is not None:
            self._stop.set()
            self._wake.set()

    def destroy_node(self):
        """Stop the scan worker (waits up to 1 s for a running scan), then destroy the node."""
        worker = getattr(self, '_worker', None)
        if worker is not None:
            self.request_stop()
            worker.join(timeout=1.0)
        intake = getattr(self, 'intake', None)     # None: __init__ failed before it
        if intake is not None and intake.host is self:
            intake.stop()
        return super().destroy_node()

    def run_scan(self, on_demand=False):
        """Run one scan now; return (published, message). Never raises."""
        if not self._busy.acquire(blocking=False):
            return self.stats.skip('busy', 'the previous scan is still running')
        try:
            return self._run_scan(on_demand)
        except Exception:
            stopping = getattr(self, '_stop', None)
            if not self.context.ok() or (stopping is not None and stopping.is_set()):
                return False, 'shutting down'   # Ctrl-C or destroy mid-scan: not an error
            raise
        finally:
            self._busy.release()

    def _run_scan(self, on_demand):
        now_ns = self.get_clock().now().nanoseconds
        if now_ns == 0:     # /diagnostics and the log say NO_CLOCK already
            return self.stats.skip('clock_not_started', NO_CLOCK if self._clock_missing()
                                   else 'the clock reads 0 (no /clock yet)', warn=False)
        if self._last_scan_ns is not None and now_ns < self._last_scan_ns - 1_000_000_000:
            self.intake.clear(since=self._last_scan_at)
            self.sweep_clock.reset()
            self.get_logger().warning('clock jumped backwards: transform buffer cleared')
        self._last_scan_ns, self._last_scan_at = now_ns, time.monotonic()
        if not on_demand and not self.has_subscribers():
            skipped = self.stats.skip('no_subscribers', 'nobody subscribes', warn=False)
            self.stats.idle(True)
            return skipped
        self.stats.idle(False)
        t0 = time.perf_counter()
        self.waited_s = 0.0             # s the scan waited for poses (not compute time)
        self.intake.take()
        try:
            changed = self.params.take_changes()
            if changed:
                self.on_config_changed(changed)
            n = self.scan_once(now_ns)
        except SkipScan as exc:
            return self.stats.skip(exc.reason, exc.detail, warn=exc.warn)
        except TransformError as exc:
            return self.stats.skip('no_transform', str(exc))
        except SimError as exc:
            return self.stats.skip('error', str(exc))
        # Only published scans advance the random streams: skips do not change the data.
        self.scan_index += 1
        ms = (time.perf_counter() - t0 - self.waited_s) * 1e3
        self.stats.published(n, ms)
        if self.scan_index == 1:
            self.get_logger().info(f'first sweep published: {n} {self.count_unit} in '
                                   f'{ms:.1f} ms')
        return True, f'published {n} {self.count_unit} in {ms:.1f} ms'

    # -- diagnostics --------------------------------------------------------------------------
    def diagnostics_values(self):
        """Return extra (key, value) pairs for /diagnostics (subclasses may extend)."""
        return []

    def _clock_missing(self):
        """Return True while use_sim_time waits for the first /clock message (time reads 0)."""
        return bool(self.get_parameter('use_sim_time').value) \
            and self.get_clock().now().nanoseconds == 0

    def _graph_warnings(self):
        """Return texts about the clock and the graph that make the status WARN."""
        out = []
        now_ns = self.get_clock().now().nanoseconds
        paused_s = self._clock_watch.paused_s(now_ns, time.monotonic())
        if paused_s >= 1.0 and now_ns > 0:
            out.append(f'clock paused: /clock has not advanced for {paused_s:.0f} s; nothing '
                       'is published until it does')
        me = (self.get_name(), self.get_namespace())
        namesakes = sum(1 for n in self.get_node_names_and_namespaces() if tuple(n) == me)
        if namesakes > 1:
            text = (f'{namesakes} nodes are named {self.get_fully_qualified_name()} on the '
                    'graph: their topics, services and /diagnostics mix; give each its own '
                    'name (--ros-args -r __node:=NAME) or namespace')
            if namesakes != self._namesakes:
                self.get_logger().warning(text)
            out.append(text)
        self._namesakes = namesakes
        return out

    @tolerate_destroyed
    def _publish_diagnostics(self):
        # The status name carries the namespace: two namespaced lidars are two statuses.
        with self.intake.lock:
            frames = self.tf_buffer.frame_count()
        status = self.stats.status(
            f'{self.get_fully_qualified_name().lstrip("/")}: sensor',
            self.sensor_label(),
            1.0 / self._period_s, self.diagnostics_values() + [('tf_frames', str(frames))],
            self._graph_warnings() + self.status_warnings() + self.actor_frames.warnings())
        if self._clock_missing():
            self.get_logger().warning(NO_CLOCK, throttle_duration_sec=WARN_THROTTLE_S)
            status.level, status.message = DiagnosticStatus.WARN, NO_CLOCK
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = self.get_clock().now().to_msg()
        if self.context.ok():
            self._diag_pub.publish(msg)
