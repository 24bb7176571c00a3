"""Model-based force/motion control: osc_controller (+ ur_interface when connection:=topics).

``ros2 launch robot_dynamics_id control.launch.py sim:=true model:=DIR/model.yaml task:=polishing``

Arguments: ``sim`` (true: simulated UR3 with the polishing scene; false: the
robot at ``robot_ip``), ``robot_ip``, ``model`` (identified model file; empty:
nominal), ``task`` (external targets on topics, or the built-in polishing task),
``output_mode`` (torque for e-Series, velocity for CB3), ``force_source``
(sensor or estimated), ``connection`` (direct: osc_controller opens the robot
and runs its law inside the robot loop, configured from the same
config/ur3.yaml + config/ur3_control.yaml as ur_interface; topics: a separate
ur_interface node and commands over DDS — velocity output at 125 Hz only),
``config`` (the robot's ur_interface parameter file, default config/ur3.yaml;
config/ur3_control.yaml is read after it) and ``robot`` (the arm the model is
of; empty, the default: the model file's, else the config's).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("robot_dynamics_id")
    sim = LaunchConfiguration("sim")
    output_mode = LaunchConfiguration("output_mode")
    connection = LaunchConfiguration("connection")
    robot_files = [LaunchConfiguration("config"), PathJoinSubstitution([share, "config", "ur3_control.yaml"])]
    backend = PythonExpression(["'sim' if '", sim, "'.lower() == 'true' else 'rtde'"])
    supports_torque = PythonExpression(["'", output_mode, "' == 'torque'"])
    return LaunchDescription([
        DeclareLaunchArgument("sim", default_value="true", description="true: simulated UR3; false: real robot"),
        DeclareLaunchArgument("robot_ip", default_value="127.0.0.1", description="UR controller address"),
        DeclareLaunchArgument("model", default_value="", description="identified model.yaml (empty: nominal)"),
        DeclareLaunchArgument("payload", default_value="",
                              description="rdi payload's payload.yaml (empty: tool_mass_kg/tool_com_m of the config)"),
        DeclareLaunchArgument("sim_truth_seed", default_value="-1",
                              description="sim: truth seed of the simulated arm (-1: nominal)"),
        DeclareLaunchArgument("task", default_value="external", description="external | polishing"),
        DeclareLaunchArgument("output_mode", default_value="torque", description="torque | velocity"),
        DeclareLaunchArgument("force_source", default_value="sensor", description="sensor | estimated"),
        DeclareLaunchArgument("connection", default_value="direct",
                              description="direct (law in the robot loop) | topics (separate ur_interface)"),
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution([share, "config", "ur3.yaml"]),
                              description="the robot's ur_interface parameter file (ur3_control.yaml follows it)"),
        DeclareLaunchArgument("robot", default_value="",
                              description="the arm (empty: the model's, else the config's)"),
        Node(
            package="robot_dynamics_id",
            executable="ur_interface",
            name="ur_interface",
            output="screen",
            condition=IfCondition(PythonExpression(["'", connection, "' == 'topics'"])),
            parameters=[*robot_files,
                        {"backend": backend,
                         "robot_ip": LaunchConfiguration("robot_ip"),
                         "supports_torque": supports_torque,
                         "sim_truth_seed": LaunchConfiguration("sim_truth_seed")}],
        ),
        Node(
            package="robot_dynamics_id",
            executable="osc_controller",
            name="osc_controller",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "osc_controller.yaml"]),
                        {"robot": LaunchConfiguration("robot"),
                         "model_file": LaunchConfiguration("model"), "payload_file": LaunchConfiguration("payload"),
                         "task": LaunchConfiguration("task"),
                         "output_mode": output_mode,
                         "force_source": LaunchConfiguration("force_source"),
                         "robot_connection": connection,
                         # one YAML list in a string: launch_ros reads it as a string array
                         "robot_config_files": ["[", robot_files[0], ", ", robot_files[1], "]"],
                         "robot_backend": backend,
                         "robot_ip": LaunchConfiguration("robot_ip"),
                         "robot_parameters": PythonExpression(
                             ["'[supports_torque=' + ('true' if '", output_mode, "' == 'torque' else 'false') + "
                              "', sim_truth_seed=", LaunchConfiguration("sim_truth_seed"), "]'"]),
                         }],
        ),
    ])
