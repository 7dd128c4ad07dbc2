"""
Every use of rclpy internals in one module: private names and undocumented behaviour.

rclpy has no public API for what these do. ``INTERNALS`` lists each one, and
test/ros/test_rclpy_compat.py checks that they still exist and behave, naming the attribute
and the installed rclpy version when an upgrade removes one. Each is checked on both releases
the suite runs on: rclpy 9.1.2 (Kilted, ``make test``) and 7.1.5 (Jazzy, ``make test
ROS_DISTRO=jazzy``), where all nine exist and behave alike, so no function branches by
release. ``ABSENT`` lists those an older release lacks (read from the humble branch of
github.com/ros2/rclpy, 3.3.15); at run time ``internal`` raises ``RclpyInternalMissing``
naming the attribute and the installed rclpy version where one is gone.
"""

import contextlib
from importlib import metadata
import re
import threading

import rclpy

from rclpy._rclpy_pybind11 import RCLError  # noqa: F401 (re-exported: rcl's own failures)
from rclpy.callback_groups import CallbackGroup
from rclpy.exceptions import InvalidHandle, ParameterAlreadyDeclaredException
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import get_default_context

# (owner, attribute, what this package does with it)
INTERNALS = (
    ('rclpy._rclpy_pybind11', 'RCLError', 'run_node catches rcl failures (e.g. rclpy.init)'),
    ('rclpy._rclpy_pybind11.Subscription', 'take_message',
     'queued_messages takes what a subscription holds without an executor'),
    ('rclpy.executors.Executor', 'can_execute',
     'PolledGroup: entities whose group refuses are left out of every wait set'),
    ('rclpy.node.Node', '_parameter_overrides',
     'parameter_overrides: ROS params coerced (int -> float) before they are declared'),
    ('rclpy.executors.MultiThreadedExecutor', '_spin_once_impl',
     'patient_executor overrides one spin step'),
    ('rclpy.executors.MultiThreadedExecutor', '_executor', 'patient_executor: the thread pool'),
    ('rclpy.executors.MultiThreadedExecutor', '_futures',
     'patient_executor: the futures of submitted callbacks'),
    ('rclpy.node.Node', '_declare_parameter_common',
     'declare_typed: a parameter of an explicit type with an empty-list default'),
    ('rclpy.executors.Executor', '_take_service',
     "deferred_service: a service callback's return value goes to Service.send_response"),
)

#: (owner, attribute) -> releases whose rclpy lacks it (README "Supported ROS releases").
ABSENT = {
    # Humble's declare_parameters ends in Node._set_parameters instead (rclpy/rclpy/node.py,
    # branch humble), which Jazzy and Kilted no longer have.
    ('rclpy.node.Node', '_declare_parameter_common'): ('humble',),
}


class RclpyInternalMissing(AttributeError):
    """An rclpy internal this package relies on is gone in the installed rclpy."""


def internal(holder, owner, name):
    """
    Return ``holder``'s attribute ``name`` (an rclpy internal listed in INTERNALS).

    Raises RclpyInternalMissing naming ``owner.name`` and the installed rclpy version where the
    attribute is gone.
    """
    try:
        return getattr(holder, name)
    except AttributeError:
        raise RclpyInternalMissing(
            f'{owner}.{name} is missing in rclpy {rclpy_version()}: ubot_lidar_sim/ros/'
            f'rclpy_compat.py relies on it (supported releases: README "Supported ROS '
            f'releases")') from None


def rclpy_version():
    """Return the installed rclpy version, e.g. '9.1.2' ('unknown' when it cannot be found)."""
    try:
        return metadata.version('rclpy')
    except metadata.PackageNotFoundError:
        pass
    try:  # an apt or colcon install: the version in rclpy's package.xml
        from ament_index_python.packages import get_package_share_directory

        with open(get_package_share_directory('rclpy') + '/package.xml',
                  encoding='utf-8') as fh:
            found = re.search(r'<version>\s*([^<\s]+)\s*</version>', fh.read())
        return found.group(1) if found else 'unknown'
    except Exception:  # no ament index either: the version is only for a message
        return 'unknown'


@contextlib.contextmanager
def initialized(args=None):
    """
    Initialise rclpy's default context without its signal handlers; yield it; shut it down after.

    A public API that differs by release: rclpy 9 (Kilted) returns from ``rclpy.init`` a context
    manager that shuts the context down on exit (rclpy/__init__.py InitContextManager); rclpy 7
    (Jazzy) returns None. Both get ``rclpy.init`` then ``rclpy.try_shutdown`` here. ``args``:
    the command line (``--ros-args ...``); rcl's failures raise RCLError.
    """
    init = rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    if init is not None:            # rclpy >= 9: its own manager (uninstalls what it installed)
        with init:
            yield init.context
        return
    try:
        yield get_default_context()
    finally:
        rclpy.try_shutdown()


class PolledGroup(CallbackGroup):
    """
    A callback group no executor ever waits on: its subscriptions are taken by a poll thread.

    Relies on rclpy's executors building their wait sets only from entities whose group's
    ``can_execute`` is true. rclpy spends ~350 us of CPU per message in an executor's
    wait-and-dispatch cycle (measured with one subscription and an empty callback); at 1 kHz of
    /tf that is a third of a core per node. Taking the queued messages in one batch every few
    ms costs their deserialisation and ~5 % of a core for DDS (1 kHz, measured the same way).
    """

    def can_execute(self, entity):
        """Never: the entity is left out of every wait set."""
        return False

    def beginning_execution(self, entity):
        """Never: nothing of this group runs on an executor."""
        return False

    def ending_execution(self, entity):
        """Nothing to release."""


def queued_messages(subscription, limit, with_info=False):
    """
    Yield up to ``limit`` messages queued on ``subscription``, oldest first, without waiting.

    Raw subscriptions yield the serialised bytes. ``with_info``: yield (message, info), info
    the rmw message info as a dict ('publisher_gid' {'data'}, 'publication_sequence_number',
    'source_timestamp', ...). The subscription's handle is held while the caller handles each
    message; rclpy.exceptions.InvalidHandle means it was destroyed.
    """
    handle = subscription.handle
    take = internal(handle, 'rclpy._rclpy_pybind11.Subscription', 'take_message')
    with handle:
        for _ in range(limit):
            taken = take(subscription.msg_type, subscription.raw)
            if taken is None:
                return
            yield taken if with_info else taken[0]


def parameter_overrides(node):
    """
    Return the node's parameter overrides, {name: rclpy Parameter}, as rclpy's own dict.

    The command line and ``parameter_overrides=`` values a parameter will take when declared;
    writing an entry changes the value its declaration takes.
    """
    return internal(node, 'rclpy.node.Node', '_parameter_overrides')


def declare_typed(node, name, ptype, value, descriptor):
    """
    Declare parameter ``name`` of type ``ptype`` with default ``value``; return its Parameter.

    rclpy infers a type from the default and takes an empty list for BYTE_ARRAY, so that
    ``-p ignored_objects:=[wall]`` or a params file would then be refused as the wrong type.
    This builds the Parameter with the explicit type and declares it through the step that
    ``Node.declare_parameters`` ends with (``_declare_parameter_common``, ABSENT from Humble's
    rclpy). An override (command line, params file) wins as there; one of another type raises
    rclpy's InvalidParameterTypeException.
    """
    if node.has_parameter(name):
        raise ParameterAlreadyDeclaredException([name])
    override = parameter_overrides(node).get(name)
    if override is not None and override.type_ != Parameter.Type.NOT_SET:
        param = Parameter(name, value=override.value)
    else:
        param = Parameter(name, ptype, value)
    descriptor.type = ptype.value
    declare = internal(node, 'rclpy.node.Node', '_declare_parameter_common')
    declare([param], {name: descriptor})
    return node.get_parameter(name)


class DeferredReply:
    """
    The response of one call of a ``deferred_service``, sent by ``reply()`` from any thread.

    The executor hands over the request header only after the callback returned, so whichever
    of header and response arrives second sends; a second ``reply()`` is ignored.
    """

    def __init__(self, send):
        self._send = send
        self._lock = threading.Lock()
        self._header = self._response = None

    def attach(self, header):
        """Take the request header (from the executor)."""
        with self._lock:
            self._header = header
            ready = self._response is not None
        if ready:
            self._deliver()

    def reply(self, response):
        """Send ``response`` to the caller (once); a destroyed service drops it."""
        with self._lock:
            if self._response is not None:
                return
            self._response = response
            ready = self._header is not None
        if ready:
            self._deliver()

    def _deliver(self):
        try:
            self._send(self._response, self._header)
        except InvalidHandle:
            pass            # the node was destroyed while the call waited


def deferred_service(node, srv_type, name, on_call, callback_group=None):
    """
    Create a service whose calls are answered later, from any thread; return the Service.

    ``on_call(request, reply)`` runs on the executor and returns at once; ``reply.reply(
    response)`` (a DeferredReply) answers. rclpy's executors hand what a service callback
    returns, with the request header, to ``Service.send_response(response, header)``
    (``Executor._take_service``): the callback returns the DeferredReply and the service's
    ``send_response`` is wrapped to attach the header to it instead of sending.
    """
    send = []

    def callback(request, _response):
        reply = DeferredReply(send[0])
        on_call(request, reply)
        return reply

    service = node.create_service(srv_type, name, callback, callback_group=callback_group)
    send.append(service.send_response)

    def send_response(response, header):
        if isinstance(response, DeferredReply):
            response.attach(header)
        else:
            send[0](response, header)

    service.send_response = send_response
    return service


def patient_executor(base):
    """
    Return a MultiThreadedExecutor subclass that lets a worker start each callback.

    rclpy's executor yields a submitted callback again until a worker thread has begun it, so
    on a loaded machine the spinning thread resubmits it and rebuilds wait sets in a loop,
    holding the GIL the workers need (measured: every rate 10-25 % low). Waiting up to 10 ms for
    the worker to start (the GIL is released meanwhile) removes that. Overrides
    ``_spin_once_impl`` and uses the executor's thread pool (``_executor``) and future list
    (``_futures``); with an rclpy that lacks the last two the stock behaviour is kept.
    """
    from rclpy.executors import (ConditionReachedException, ExternalShutdownException,
                                 ShutdownException, TimeoutException)

    class PatientExecutor(base):
        def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False):
            pool, futures = getattr(self, '_executor', None), getattr(self, '_futures', None)
            if pool is None or futures is None:
                return super()._spin_once_impl(timeout_sec, wait_condition)
            try:
                handler, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
            except (ExternalShutdownException, ShutdownException, TimeoutException,
                    ConditionReachedException):
                return
            started = threading.Event()

            def run():
                started.set()
                handler()

            futures.append(pool.submit(run))
            started.wait(0.01)
            for future in futures[:]:
                if future.done():
                    futures.remove(future)
                    future.result()  # raise what a callback raised, as rclpy does

    return PatientExecutor
