"""Natural-oscillation identification (seeds.md P1) on a torque-controlled arm: ur_interface + natural_oscillation.

``ros2 launch robot_dynamics_id natural_oscillation.launch.py sim:=true model:=model/model.yaml
compensate_friction:=true output:=natural_oscillation.json``

Arguments: ``sim`` (true: simulated UR3; false: the robot at ``robot_ip``, which must take torque
commands: an e-Series with PolyScope >= 5.23 and ``supports_torque: true`` in ``config``),
``robot_ip``, ``config`` (the robot's ur_interface parameter file), ``sim_truth_seed`` (sim: the
simulated arm's truth, -1 nominal), ``robot`` (the arm), ``model`` (the prior model: an identified
model.yaml; empty: nominal), ``compensate_friction`` (feed the model's friction forward: needed on a
UR), ``output`` (the result JSON; empty: the progress topic only). The natural_oscillation node ends
when the search is done (exit code 0, 3 doubtful), and the launch with it (ur_interface stops the arm).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("robot_dynamics_id")
    backend = PythonExpression(["'sim' if '", LaunchConfiguration("sim"), "'.lower() == 'true' else 'rtde'"])
    search = Node(
        package="robot_dynamics_id",
        executable="natural_oscillation",
        name="natural_oscillation",
        output="screen",
        parameters=[PathJoinSubstitution([share, "config", "natural_oscillation.yaml"]),
                    {"robot": LaunchConfiguration("robot"), "model_file": LaunchConfiguration("model"),
                     "compensate_friction": LaunchConfiguration("compensate_friction"),
                     "output_file": LaunchConfiguration("output")}],
    )
    return LaunchDescription([
        DeclareLaunchArgument("sim", default_value="true", description="true: simulated UR3; false: real robot"),
        DeclareLaunchArgument("robot_ip", default_value="127.0.0.1", description="UR controller address"),
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution([share, "config", "ur3.yaml"]),
                              description="ur_interface parameter file (supports_torque: true on a real arm)"),
        DeclareLaunchArgument("sim_truth_seed", default_value="-1",
                              description="sim: truth seed of the simulated arm (-1: nominal)"),
        DeclareLaunchArgument("robot", default_value="ur3", description="the arm: ur3, ur3e, ur5e, ..."),
        DeclareLaunchArgument("model", default_value="", description="prior model.yaml (empty: nominal)"),
        DeclareLaunchArgument("compensate_friction", default_value="false",
                              description="true: feed the model's friction forward (needs model)"),
        DeclareLaunchArgument("output", default_value="", description="result JSON file (empty: progress topic only)"),
        Node(
            package="robot_dynamics_id",
            executable="ur_interface",
            name="ur_interface",
            output="screen",
            parameters=[LaunchConfiguration("config"),
                        {"backend": backend, "robot_ip": LaunchConfiguration("robot_ip"),
                         "sim_truth_seed": LaunchConfiguration("sim_truth_seed")}],
        ),
        search,
        # the launch ends with the search (done, doubtful, refused or stopped): ur_interface gets SIGINT
        RegisterEventHandler(OnProcessExit(target_action=search, on_exit=[
            EmitEvent(event=Shutdown(reason="the natural-oscillation search ended"))])),
    ])
