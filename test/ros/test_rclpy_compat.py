"""The rclpy internals of ros/rclpy_compat.py still exist and behave as the package relies on."""

import importlib
import re
import threading
import time

import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from std_msgs.msg import String

from ubot_lidar_sim.ros import rclpy_compat
from ubot_lidar_sim.ros.rclpy_compat import (ABSENT, internal, INTERNALS, parameter_overrides,
                                             patient_executor, PolledGroup, queued_messages,
                                             RCLError, rclpy_version, RclpyInternalMissing)
from ubot_lidar_sim.ros.ros_release import ros_release


def _resolve(path):
    """Import the longest module prefix of a dotted path, then walk the attributes left."""
    parts = path.split('.')
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module('.'.join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


def require(owner, name, holder):
    """Fail naming owner.name and the rclpy version when holder lacks the attribute."""
    if not hasattr(holder, name):
        pytest.fail(f'{owner}.{name} is gone in rclpy {rclpy_version()}: '
                    f'ubot_lidar_sim/ros/rclpy_compat.py relies on it', pytrace=False)


def _holder(owner, context, keep):
    """Return what owner names; instance attributes need an instance (kept for cleanup)."""
    if owner == 'rclpy.node.Node':
        keep.append(rclpy.create_node('compat_probe', context=context))
        return keep[-1]
    if owner == 'rclpy.executors.MultiThreadedExecutor':
        keep.append(MultiThreadedExecutor(num_threads=2, context=context))
        return keep[-1]
    try:
        return _resolve(owner)
    except (ImportError, AttributeError):
        pytest.fail(f'{owner} is gone in rclpy {rclpy_version()}: '
                    'ubot_lidar_sim/ros/rclpy_compat.py relies on it', pytrace=False)


@pytest.mark.parametrize('owner, name, why', INTERNALS, ids=[f'{o}.{n}' for o, n, _ in INTERNALS])
def test_every_rclpy_internal_the_package_uses_still_exists(context, owner, name, why):
    keep = []
    try:
        holder = _holder(owner, context, keep)
        if ros_release() in ABSENT.get((owner, name), ()):
            assert not hasattr(holder, name), f'ABSENT says {ros_release()} lacks {owner}.{name}'
        else:
            require(owner, name, holder)
    finally:
        for obj in keep:
            (obj.destroy_node if hasattr(obj, 'destroy_node') else obj.shutdown)()


def test_a_missing_internal_fails_naming_the_attribute_and_the_rclpy_version():
    with pytest.raises(pytest.fail.Exception) as err:
        require('rclpy.node.Node', '_no_such_attribute', object())
    assert 'rclpy.node.Node._no_such_attribute' in str(err.value)
    assert f'rclpy {rclpy_version()}' in str(err.value)
    assert rclpy_version()[0].isdigit()


def test_every_absent_internal_is_one_of_internals():
    assert set(ABSENT) <= {(owner, name) for owner, name, _ in INTERNALS}


def test_a_missing_internal_at_run_time_raises_naming_the_attribute_and_the_rclpy_version():
    with pytest.raises(RclpyInternalMissing) as err:
        internal(object(), 'rclpy.node.Node', '_declare_parameter_common')
    assert f'rclpy.node.Node._declare_parameter_common is missing in rclpy {rclpy_version()}' \
        in str(err.value)
    assert isinstance(err.value, AttributeError)


def test_rclpy_private_names_appear_only_in_the_compat_module():
    from pathlib import Path

    ros = Path(rclpy_compat.__file__).parent
    # Public names (RCLError re-exported, can_execute overridden) may appear elsewhere.
    private = [name for _, name, _ in INTERNALS if name.startswith('_')] + [
        '_rclpy_pybind11', 'take_message']
    pattern = re.compile(r'(?<!\w)(' + '|'.join(map(re.escape, private)) + r')(?!\w)')
    found = [f'{p.relative_to(ros)}: {m.group(1)}' for p in ros.rglob('*.py')
             if p.name != 'rclpy_compat.py' for m in pattern.finditer(p.read_text())]
    assert not found


def _spin(executor, seconds, until=lambda: False):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        executor.spin_once(timeout_sec=0.02)


def test_polled_group_is_never_dispatched_and_queued_messages_takes_in_order(context):
    node = rclpy.create_node('compat_polled', context=context)
    got = []
    sub = node.create_subscription(String, 'compat_polled', got.append, QoSProfile(depth=10),
                                   callback_group=PolledGroup())
    pub = node.create_publisher(String, 'compat_polled', QoSProfile(depth=10))
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        _spin(executor, 3.0, lambda: pub.get_subscription_count() > 0)
        for text in ('a', 'b', 'c'):
            pub.publish(String(data=text))
        _spin(executor, 0.5)
        assert got == []            # left out of the wait set: the executor never ran it
        taken = []
        end = time.monotonic() + 3.0
        while len(taken) < 3 and time.monotonic() < end:
            taken += [m.data for m in queued_messages(sub, 10)]
            time.sleep(0.01)
        assert taken == ['a', 'b', 'c']
        assert list(queued_messages(sub, 10)) == []
    finally:
        executor.shutdown()
        node.destroy_node()


def test_parameter_overrides_are_rclpys_own_dict_and_writes_take_effect(context):
    node = rclpy.create_node('compat_params', context=context,
                             parameter_overrides=[Parameter('gain', value=2)])
    try:
        overrides = parameter_overrides(node)
        assert overrides['gain'].value == 2
        overrides['gain'] = Parameter('gain', value=2.0)
        assert node.declare_parameter('gain', 1.0).value == 2.0
    finally:
        node.destroy_node()


def test_patient_executor_runs_callbacks_on_its_worker_threads(context):
    node = rclpy.create_node('compat_patient', context=context)
    threads = []
    node.create_timer(0.01, lambda: threads.append(threading.current_thread()))
    executor = patient_executor(MultiThreadedExecutor)(num_threads=2, context=context)
    executor.add_node(node)
    try:
        _spin(executor, 3.0, lambda: len(threads) >= 3)
    finally:
        executor.shutdown()
        node.destroy_node()
    assert len(threads) >= 3
    assert threading.main_thread() not in threads


def test_rcl_errors_raise_the_rclerror_run_node_catches(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('lidar_3d:\n  ros__parameters:\n    channels: [1, \n')
    ctx = rclpy.Context()
    with pytest.raises(RCLError):
        rclpy.init(args=['--ros-args', '--params-file', str(bad)], context=ctx)


def test_deferred_service_answers_from_another_thread_after_the_callback_returned(context):
    from std_srvs.srv import Trigger

    node = rclpy.create_node('compat_deferred', context=context)
    calls = []
    rclpy_compat.deferred_service(node, Trigger, '~/later', lambda _req, reply: calls.append(
        reply))
    client = node.create_client(Trigger, '/compat_deferred/later')
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        _spin(executor, 3.0, client.service_is_ready)
        future = client.call_async(Trigger.Request())
        _spin(executor, 3.0, lambda: calls)
        _spin(executor, 0.3)
        assert calls and not future.done()      # the executor did not answer for us
        threading.Thread(target=calls[0].reply, args=(
            Trigger.Response(success=True, message='later'),)).start()
        _spin(executor, 3.0, future.done)
        assert future.result().message == 'later'
    finally:
        executor.shutdown()
        node.destroy_node()


def test_declare_typed_gives_an_empty_array_its_type_and_takes_an_override(context):
    from rcl_interfaces.msg import ParameterDescriptor

    node = rclpy.create_node('compat_typed', context=context, parameter_overrides=[
        Parameter('given', value=['wall'])])
    try:
        empty = rclpy_compat.declare_typed(node, 'empty', Parameter.Type.STRING_ARRAY, [],
                                           ParameterDescriptor(read_only=True))
        given = rclpy_compat.declare_typed(node, 'given', Parameter.Type.STRING_ARRAY, [],
                                           ParameterDescriptor())
        assert (empty.type_, list(empty.value)) == (Parameter.Type.STRING_ARRAY, [])
        assert (given.type_, list(given.value)) == (Parameter.Type.STRING_ARRAY, ['wall'])
        assert node.describe_parameter('empty').read_only
    finally:
        node.destroy_node()


def test_initialized_yields_an_ok_default_context_and_shuts_it_down_after():
    from rclpy.utilities import get_default_context

    with rclpy_compat.initialized(['--ros-args', '-r', '__node:=compat_init']) as context:
        assert context is get_default_context()
        assert context.ok()
    assert not context.ok()
