"""Launch the UR interface: ``ros2 launch robot_dynamics_id ur_interface.launch.py sim:=true``.

Arguments: ``sim`` (true: MuJoCo UR3 in-process; false: a UR controller over
RTDE at ``robot_ip``), ``robot_ip``, ``config`` (parameter file), ``collision_model``
(model.yaml with collision thresholds: the collision observer runs in the robot loop; empty: off),
``sim_truth_seed`` (sim: the simulated arm's perturbed truth, as ``rdi simulate-experiment --truth-seed``;
-1: nominal parameters).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    config = LaunchConfiguration("config")
    backend = PythonExpression(["'sim' if '", LaunchConfiguration("sim"), "'.lower() == 'true' else 'rtde'"])
    return LaunchDescription([
        DeclareLaunchArgument("sim", default_value="true", description="true: simulated UR3; false: real robot"),
        DeclareLaunchArgument("robot_ip", default_value="127.0.0.1", description="UR controller address"),
        DeclareLaunchArgument("collision_model", default_value="",
                              description="model with collision thresholds (rdi validate --collision-thresholds); "
                                          "empty: no collision observer"),
        DeclareLaunchArgument("sim_truth_seed", default_value="-1",
                              description="sim: truth seed of the simulated arm (-1: nominal); a model identified "
                                          "on rdi simulate-experiment --truth-seed N data fits the arm of seed N"),
        DeclareLaunchArgument(
            "config",
            default_value=PathJoinSubstitution([FindPackageShare("robot_dynamics_id"), "config", "ur3.yaml"]),
            description="ur_interface parameter file",
        ),
        Node(
            package="robot_dynamics_id",
            executable="ur_interface",
            name="ur_interface",
            output="screen",
            parameters=[config, {"backend": backend, "robot_ip": LaunchConfiguration("robot_ip"),
                                 "collision_model_file": LaunchConfiguration("collision_model"),
                                 "sim_truth_seed": LaunchConfiguration("sim_truth_seed")}],
        ),
    ])
