"""Robot descriptions written for the tests: a URDF, a xacro, an SDF model, classic plugins."""

import itertools

LASER_BLOCK = """
  <sensor name="front_laser" type="gpu_lidar">
   <topic>scan</topic><gz_frame_id>laser_frame</gz_frame_id><update_rate>{rate}</update_rate>
   <always_on>1</always_on>
   <lidar><scan><horizontal><samples>{samples}</samples><resolution>1</resolution>
   <min_angle>{lo}</min_angle><max_angle>{hi}</max_angle></horizontal></scan>
   <range><min>0.12</min><max>12.0</max></range>
   <noise><type>gaussian</type><mean>0.0</mean><stddev>0.01</stddev></noise></lidar>
  </sensor>"""


def urdf(samples=640, lo=-2.0, hi=2.0, rate=10, mast_joint='fixed', extra=''):
    """Return a URDF: base box, a laser link 0.3 m up, a mast 0.5 m ahead of the laser."""
    return f"""<robot name="bot">
 <link name="base_link"><collision><geometry><box size="0.4 0.4 0.2"/></geometry></collision>
 </link>
 <link name="laser_link"><collision><geometry><cylinder radius="0.04" length="0.05"/></geometry>
 </collision></link>
 <link name="mast"><collision><origin xyz="0.5 0 0"/><geometry><box size="0.1 0.1 1.0"/>
 </geometry></collision></link>
 <joint name="laser_joint" type="fixed"><parent link="base_link"/><child link="laser_link"/>
  <origin xyz="0 0 0.3"/></joint>
 <joint name="mast_joint" type="{mast_joint}"><parent link="base_link"/><child link="mast"/>
  <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>
 </joint>
 <gazebo reference="laser_link">{LASER_BLOCK.format(samples=samples, lo=lo, hi=hi, rate=rate)}
 </gazebo>
 <gazebo><plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
  <wheel_separation>0.4</wheel_separation><wheel_radius>0.1</wheel_radius>
  <max_linear_velocity>0.8</max_linear_velocity><max_angular_velocity>1.2</max_angular_velocity>
  <max_linear_acceleration>0.5</max_linear_acceleration><topic>cmd_vel</topic></plugin></gazebo>
 {extra}
</robot>"""


XACRO = """<robot name="xbot" xmlns:xacro="http://www.ros.org/wiki/xacro">
 <xacro:arg name="samples" default="100"/>
 <xacro:arg name="laser_name" default="laser"/>
 <xacro:property name="fov" value="${pi / 2}"/>
 <link name="base_link"/>
 <link name="$(arg laser_name)_link"/>
 <joint name="j" type="fixed"><parent link="base_link"/><child link="$(arg laser_name)_link"/>
  <origin xyz="0.1 0 0.2"/></joint>
 <gazebo reference="$(arg laser_name)_link">
  <sensor name="$(arg laser_name)" type="lidar"><update_rate>15</update_rate>
   <topic>$(arg laser_name)/scan</topic>
   <lidar><scan><horizontal><samples>$(arg samples)</samples><resolution>1</resolution>
   <min_angle>${-fov}</min_angle><max_angle>${fov}</max_angle></horizontal></scan>
   <range><min>0.2</min><max>30</max></range></lidar></sensor>
 </gazebo>
</robot>"""

CLASSIC_RAY = """<robot name="classic">
 <link name="base_footprint"/><link name="base_scan"/>
 <joint name="j" type="fixed"><parent link="base_footprint"/><child link="base_scan"/>
  <origin xyz="-0.03 0 0.17"/></joint>
 <gazebo reference="base_scan">
  <sensor name="hls_lfcd_lds" type="ray"><always_on>true</always_on><update_rate>5</update_rate>
   <ray><scan><horizontal><samples>360</samples><resolution>1.000000</resolution>
   <min_angle>0.000000</min_angle><max_angle>6.280000</max_angle></horizontal></scan>
   <range><min>0.120000</min><max>3.5</max><resolution>0.015000</resolution></range>
   <noise><type>gaussian</type><mean>0.0</mean><stddev>0.01</stddev></noise></ray>
   <plugin name="turtlebot3_laserscan" filename="libgazebo_ros_ray_sensor.so">
    <ros><namespace>/tb3</namespace><remapping>~/out:=scan</remapping></ros>
    <output_type>sensor_msgs/LaserScan</output_type><frame_name>base_scan</frame_name>
   </plugin></sensor>
 </gazebo>
 <gazebo><plugin name="diff" filename="libgazebo_ros_diff_drive.so">
  <wheel_separation>0.160</wheel_separation><wheel_diameter>0.066</wheel_diameter>
  <max_wheel_acceleration>1.0</max_wheel_acceleration></plugin></gazebo>
 <gazebo><plugin name="x" filename="libsomething_unknown.so"/></gazebo>
</robot>"""

VELODYNE = """<robot name="vbot">
 <link name="base_link"/><link name="velodyne"/>
 <joint name="j" type="fixed"><parent link="base_link"/><child link="velodyne"/>
  <origin xyz="0 0 0.5"/></joint>
 <gazebo reference="velodyne">
  <sensor type="gpu_ray" name="velodyne-VLP16"><update_rate>10</update_rate>
   <ray><scan><horizontal><samples>1875</samples><resolution>1</resolution>
   <min_angle>-3.14159265</min_angle><max_angle>3.14159265</max_angle></horizontal>
   <vertical><samples>16</samples><resolution>1</resolution>
   <min_angle>-0.2617993877991494</min_angle><max_angle>0.2617993877991494</max_angle>
   </vertical></scan>
   <range><min>0.3</min><max>131.0</max><resolution>0.001</resolution></range>
   <noise><type>none</type></noise></ray>
   <plugin name="gazebo_ros_laser_controller" filename="libgazebo_ros_velodyne_gpu_laser.so">
    <topicName>/velodyne_points</topicName><frameName>velodyne</frameName>
    <organize_cloud>false</organize_cloud><min_range>0.9</min_range><max_range>130.0</max_range>
    <gaussianNoise>0.008</gaussianNoise></plugin>
  </sensor>
 </gazebo>
</robot>"""

SDF_MODEL = """<?xml version="1.0"?>
<sdf version="1.9">
 <model name="sdfbot">
  <link name="chassis"><pose>0 0 0.2 0 0 0</pose>
   <collision name="c"><geometry><mesh><uri>model://sdfbot/meshes/body.stl</uri></mesh></geometry>
   </collision>
   <visual name="v"><geometry><box><size>1 0.5 0.2</size></box></geometry></visual>
  </link>
  <link name="lidar_link"><pose relative_to="chassis">0.3 0 0.2 0 0 0</pose>
   <sensor name="gpu_lidar" type="gpu_lidar">
    <pose>0 0 0.05 0 0 0</pose><topic>lidar</topic><update_rate>20</update_rate>
    <frame_id>lidar_link</frame_id>
    <lidar><scan><horizontal><samples>720</samples><resolution>1</resolution>
     <min_angle>-1.5</min_angle><max_angle>1.0</max_angle></horizontal>
     <vertical><samples>1</samples><resolution>1</resolution>
     <min_angle>0</min_angle><max_angle>0</max_angle></vertical></scan>
     <range><min>0.08</min><max>10.0</max></range></lidar></sensor>
   <sensor name="imu_sensor" type="imu"><update_rate>100</update_rate><topic>imu</topic>
    <imu><angular_velocity><x><noise type="gaussian"><mean>0</mean><stddev>0.002</stddev>
    </noise></x></angular_velocity></imu></sensor>
  </link>
  <joint name="lidar_joint" type="fixed"><parent>chassis</parent><child>lidar_link</child></joint>
  <plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
   <wheel_separation>1.2</wheel_separation><wheel_radius>0.4</wheel_radius>
   <max_linear_velocity>1.5</max_linear_velocity><topic>cmd_vel</topic></plugin>
 </model>
</sdf>"""


def stl_box(sx=1.0, sy=0.5, sz=0.2):
    """Return an ASCII STL box of the given size centred on the origin (12 triangles)."""
    x, y, z = sx / 2, sy / 2, sz / 2
    v = [(a * x, b * y, c * z) for a, b, c in itertools.product((-1, 1), repeat=3)]
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7),
             (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    lines = ['solid box']
    for f in faces:
        lines += ['facet normal 0 0 0', 'outer loop']
        lines += [f'vertex {v[i][0]} {v[i][1]} {v[i][2]}' for i in f]
        lines += ['endloop', 'endfacet']
    return '\n'.join(lines + ['endsolid box']) + '\n'


def velodyne_with_mast(tmp_path):
    """Write VELODYNE with a 0.1 x 0.1 x 1 m mast 1.5 m ahead of base_link; return its path."""
    mast = ('<link name="base_link"><collision><origin xyz="1.5 0 0.5"/><geometry>'
            '<box size="0.1 0.1 1"/></geometry></collision></link>')
    path = tmp_path / 'v.urdf'
    path.write_text(VELODYNE.replace('<link name="base_link"/>', mast))
    return path
