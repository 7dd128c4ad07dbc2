"""base_sim as Nav2 meets it (real rclpy + DDS): REP 105 frames, cmd_vel of either type."""

from base_sim_rig import BaseRig, boxes_world, twist
from geometry_msgs.msg import Twist, TwistStamped
import pytest
import rclpy
from ros_helpers import closing_factory

TYPES = ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped')


@pytest.fixture
def rig():
    yield from closing_factory(BaseRig)


def _children(r):
    """Return {child frame: parent frame} of every /tf transform the probe received."""
    return {t.child_frame_id: t.header.frame_id for m in r.tf for t in m.transforms}


def test_the_tree_is_map_odom_base_footprint_base_link_with_the_body_height_above_it(rig):
    r = rig(boxes_world([]), {'base_height_m': 0.25, 'cmd_vel_stamped': False})
    assert r.spin_until(lambda: 'base_link' in _children(r))
    # REP 105 (map -> odom -> base) and REP 120 (base_footprint: the ground projection).
    assert _children(r) == {'odom': 'map', 'base_footprint': 'odom',
                            'base_link': 'base_footprint'}
    last = {t.child_frame_id: t for m in r.tf for t in m.transforms}
    # The ground (z 0) is found by a float32 ray cast from 50 m up: 50 x 2^-23 = 6e-6 m.
    assert abs(last['base_footprint'].transform.translation.z) <= 1e-5   # bound: see above
    assert last['base_link'].transform.translation.z == 0.25
    assert r.odom[-1].child_frame_id == 'base_link'
    assert abs(r.odom[-1].pose.pose.position.z - 0.25) <= 1e-5          # bound: the same


@pytest.fixture
def publisher(rig):
    """Yield make(rig, kind): a cmd_vel publisher of kind in a context of its own (as Nav2's)."""
    made = []

    def make(r, kind):
        ctx = rclpy.Context()
        rclpy.init(context=ctx, domain_id=r.ctx.get_domain_id())
        node = rclpy.create_node('controller', context=ctx)
        made.append((ctx, node))
        r.probe.destroy_publisher(r.cmd)    # the graph's only publisher is the controller's
        return node.create_publisher(kind, 'cmd_vel', 10)
    yield make
    for ctx, node in made:
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def _drive_2_m(r, pub, msg):
    """Publish msg (0.5 m/s) until /odom has gone 2 m; return True when it did."""
    def moved():
        pub.publish(msg)
        return r.odom[-1].pose.pose.position.x >= 2.0
    return r.spin_until(moved, 40.0)


@pytest.mark.parametrize('stamped', [False, True], ids=['Twist', 'TwistStamped'])
def test_a_publisher_of_either_type_drives_the_base_2_m_a_mismatch_warned_once(rig, publisher,
                                                                               stamped):
    # base_sim starts subscribing TwistStamped (the Kilted default); a Twist publisher is
    # followed after one warning that names both types.
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 4.0,
                              'cmd_vel_stamped': True})
    kind = TwistStamped if stamped else Twist
    pub = publisher(r, kind)
    msg = TwistStamped(twist=twist(0.5)) if stamped else twist(0.5)
    assert _drive_2_m(r, pub, msg), f'{kind.__name__} did not drive the base 2 m'
    assert r.node.cmd_vel.type_name == TYPES[stamped]
    if stamped:
        assert r.node.cmd_vel.mismatch == ''
    else:
        assert all(t in r.node.cmd_vel.mismatch for t in TYPES)
        assert 'cmd_vel type mismatch' in r.node.diagnostics().status[0].message


def test_without_follow_a_mismatch_is_warned_and_nothing_drives(rig, publisher):
    r = rig(boxes_world([]), {'cmd_vel_stamped': True, 'cmd_vel_follow_type': False})
    pub = publisher(r, Twist)

    def warned():
        pub.publish(twist(0.5))
        return r.node.cmd_vel.mismatch
    assert r.spin_until(warned, 10.0)
    assert 'cmd_vel_stamped to false' in r.node.cmd_vel.mismatch
    r.spin_for(0.5)
    assert r.odom[-1].pose.pose.position.x == 0.0 and r.node.base.counts['accepted'] == 0
