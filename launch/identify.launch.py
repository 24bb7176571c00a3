"""Identify the dynamics from a recorded bag: ``ros2 launch robot_dynamics_id identify.launch.py bag:=BAG out:=DIR``.

Runs the identifier node once (same job as ``rdi identify``) and ends. Arguments:
``bag`` (rosbag2 directory or ur_rtde CSV), ``out`` (report folder), ``robot``,
``validation`` (optional second recording to score the model on), ``payload_model``
(an arm model.yaml: identify the payload mounted during ``bag`` instead, writing
``out/payload.yaml``, the job of ``rdi payload``), ``drive_gains`` (the JSON
``rdi drive-gains --out`` wrote; empty: config/identifier.yaml's gains).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("robot_dynamics_id")
    return LaunchDescription([
        DeclareLaunchArgument("bag", description="bag directory (or ur_rtde CSV) to identify from"),
        DeclareLaunchArgument("out", default_value="identification", description="report folder"),
        DeclareLaunchArgument("robot", default_value="ur3",
                              description="ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or a URDF path"),
        DeclareLaunchArgument("validation", default_value="", description="optional recording to validate on"),
        DeclareLaunchArgument("payload_model", default_value="",
                              description="arm model.yaml: identify the payload in the bag instead of the arm"),
        DeclareLaunchArgument("drive_gains", default_value="",
                              description="drive gains: the JSON of rdi drive-gains --out (empty: identifier.yaml's)"),
        Node(
            package="robot_dynamics_id",
            executable="identifier",
            name="identifier",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "identifier.yaml"]),
                        {"data_path": LaunchConfiguration("bag"), "out_dir": LaunchConfiguration("out"),
                         "robot": LaunchConfiguration("robot"),
                         "validation_data_path": LaunchConfiguration("validation"),
                         "payload_model_file": LaunchConfiguration("payload_model"),
                         "drive_gains_file": LaunchConfiguration("drive_gains")}],
        ),
    ])
