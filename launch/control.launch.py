"""Model-based force/motion control: ur_interface + osc_controller.

``ros2 launch robot_dynamics_id control.launch.py sim:=true model:=DIR/model.yaml task:=polishing``

Arguments: ``sim`` (true: simulated UR3 with the polishing scene; false: the
robot at ``robot_ip``), ``robot_ip``, ``model`` (identified model file; empty:
nominal), ``task`` (external targets on topics, or the built-in polishing task),
``output_mode`` (torque for e-Series, velocity for CB3), ``force_source``
(sensor or estimated).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("robot_dynamics_id")
    sim = LaunchConfiguration("sim")
    return LaunchDescription([
        DeclareLaunchArgument("sim", default_value="true", description="true: simulated UR3; false: real robot"),
        DeclareLaunchArgument("robot_ip", default_value="127.0.0.1", description="UR controller address"),
        DeclareLaunchArgument("model", default_value="", description="identified model.yaml (empty: nominal)"),
        DeclareLaunchArgument("task", default_value="external", description="external | polishing"),
        DeclareLaunchArgument("output_mode", default_value="torque", description="torque | velocity"),
        DeclareLaunchArgument("force_source", default_value="sensor", description="sensor | estimated"),
        Node(
            package="robot_dynamics_id",
            executable="ur_interface",
            name="ur_interface",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "ur3.yaml"]),
                        PathJoinSubstitution([share, "config", "ur3_control.yaml"]),
                        {"backend": PythonExpression(["'sim' if '", sim, "'.lower() == 'true' else 'rtde'"]),
                         "robot_ip": LaunchConfiguration("robot_ip"),
                         "supports_torque": PythonExpression(["'", LaunchConfiguration("output_mode"),
                                                              "' == 'torque'"])}],
        ),
        Node(
            package="robot_dynamics_id",
            executable="osc_controller",
            name="osc_controller",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "osc_controller.yaml"]),
                        {"model_file": LaunchConfiguration("model"), "task": LaunchConfiguration("task"),
                         "output_mode": LaunchConfiguration("output_mode"),
                         "force_source": LaunchConfiguration("force_source")}],
        ),
    ])
