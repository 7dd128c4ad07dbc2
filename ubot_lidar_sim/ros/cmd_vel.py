"""
The cmd_vel input of base_sim: geometry_msgs/Twist or TwistStamped, whichever is published.

Nav2 publishes one or the other by ``enable_stamped_cmd_vel`` (nav2_util/twist_publisher.hpp,
default false on Jazzy, true from Kilted on: navigation2 jazzy and kilted branches, lines
62-65). A subscription of the other type never matches, so nothing arrives and nothing is said.
``CmdVelInput.check`` (a steady timer of the node) reads the types of the topic's publishers
from the graph; when none of them publishes the subscribed type it warns once, naming both
types, and with ``follow`` subscribes again with the published type.
"""

from geometry_msgs.msg import Twist, TwistStamped

TYPES = {False: (Twist, 'geometry_msgs/msg/Twist'),
         True: (TwistStamped, 'geometry_msgs/msg/TwistStamped')}
CHECK_PERIOD_S = 0.2


def twist_of(msg):
    """Return (vx, vy, wz) of a Twist or a TwistStamped."""
    twist = msg.twist if isinstance(msg, TwistStamped) else msg
    return twist.linear.x, twist.linear.y, twist.angular.z


class CmdVelInput:
    """One cmd_vel subscription whose type follows the publishers' (see the module)."""

    def __init__(self, node, topic, stamped, follow, callback, qos_depth=10):
        self._node, self._topic, self._follow = node, topic, follow
        self._callback, self._depth = callback, qos_depth
        self.stamped = stamped
        self.mismatch = ''          # the warning, once one was given
        self._sub = node.create_subscription(TYPES[stamped][0], topic, callback, qos_depth)

    @property
    def type_name(self):
        """Return the type subscribed now ('geometry_msgs/msg/Twist' or ...TwistStamped)."""
        return TYPES[self.stamped][1]

    def check(self):
        """Compare the publishers' types with the subscribed one; warn once, follow (module)."""
        name = self._node.resolve_topic_name(self._topic)
        published = {i.topic_type for i in self._node.get_publishers_info_by_topic(name)}
        if not published or self.type_name in published:
            return
        other = not self.stamped
        if TYPES[other][1] not in published:
            return              # some third type: the graph itself refuses it
        action = (f'subscribing {TYPES[other][1]} instead (cmd_vel_follow_type)' if self._follow
                  else 'no command arrives (cmd_vel_follow_type false: set cmd_vel_stamped '
                  f'to {str(other).lower()})')
        text = (f'{name}: publishers send {TYPES[other][1]}, base_sim subscribed '
                f'{self.type_name}: {action}')
        if not self.mismatch:
            self._node.get_logger().warning(text)
            self.mismatch = text
        if self._follow:
            self._node.destroy_subscription(self._sub)
            self.stamped = other
            self._sub = self._node.create_subscription(TYPES[other][0], self._topic,
                                                       self._callback, self._depth)
