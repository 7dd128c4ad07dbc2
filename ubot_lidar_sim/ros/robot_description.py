"""
A node's robot description: a file, or the URDF text robot_state_publisher latches on a topic.

robot_state_publisher publishes ``robot_description`` (std_msgs/String) with QoS depth 1,
transient_local (ros/robot_state_publisher 3.3.3, src/robot_state_publisher.cpp:135): a
reliable transient_local subscription receives the last text however late it starts. A node
whose ``robot_description`` is ``topic`` (or ``topic:NAME``; core/robot/load.py) waits for it
in its constructor, then reads it as it would read the file. The wait spins a helper node of
the same context and namespace, so that nothing of the node itself runs before it is built.
"""

from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from ubot_lidar_sim.core.errors import ConfigError, SimError
from ubot_lidar_sim.core.robot.load import (description_topic, load_robot, load_robot_text,
                                            parse_args)
from ubot_lidar_sim.ros.qos import latched_qos

WAIT_LOG_S = 5.0        # the wait is logged again this often


def node_robot(node, value, args_text, model_paths):
    """Return the RobotDescription of a node's robot_description value (None: empty)."""
    if not value:
        return None
    topic = description_topic(value)
    if topic is None:
        return load_robot(value, parse_args(args_text), model_paths)
    if args_text:
        raise ConfigError('robot_args', args_text, "empty with robot_description 'topic' "
                          '(robot_state_publisher publishes the expanded URDF)')
    text, name = wait_for_text(node, topic)
    return load_robot_text(text, name, model_paths)


def wait_for_text(node, topic):
    """Return (text, resolved topic name) of the first String on topic (transient_local)."""
    helper = Node(f'{node.get_name()}_robot_description', namespace=node.get_namespace(),
                  context=node.context, start_parameter_services=False)
    got = []
    sub = helper.create_subscription(String, topic, got.append, latched_qos(1))
    name = sub.topic_name
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(helper)
    clock = helper.get_clock()
    next_log = None
    try:
        while not got:
            if not node.context.ok():
                raise SimError(f'shut down before a robot description arrived on {name}')
            now = clock.now().nanoseconds * 1e-9
            if next_log is None or now >= next_log:
                node.get_logger().info(f'waiting for the robot description on {name} '
                                       '(std_msgs/String, transient_local, as '
                                       'robot_state_publisher publishes it)')
                next_log = now + WAIT_LOG_S
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(helper)
        executor.shutdown()
        helper.destroy_node()
    node.get_logger().info(f'robot description received on {name} ({len(got[0].data)} chars)')
    return got[0].data, name
