"""QoS profiles of the sensor nodes: latched topics and the configurable output topic."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def latched_qos(depth=1):
    """Reliable, transient_local QoS (latched topics such as markers)."""
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def output_qos(reliability, depth):
    """Volatile keep-last QoS of an output topic; reliability 'reliable' or 'best_effort'."""
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST,
        reliability=(ReliabilityPolicy.BEST_EFFORT if reliability == 'best_effort'
                     else ReliabilityPolicy.RELIABLE),
        durability=DurabilityPolicy.VOLATILE)
