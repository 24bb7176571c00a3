"""Record an identification experiment: ur_interface + excitation + torque_logger.

``ros2 launch robot_dynamics_id experiment.launch.py sim:=true excitation:=/path/excitation.yaml bag:=/path/bag``

Arguments: ``sim`` (true: simulated UR3; false: the robot at ``robot_ip``),
``robot_ip``, ``excitation`` (trajectory file from ``rdi excite plan``),
``bag`` (bag directory to create), ``move_to_start`` (move slowly to the
excitation's start pose first), ``config`` (ur_interface parameter file: the
arm, its rate and drive gains; default config/ur3.yaml). The launch ends when the
excitation or the recorder exits: the recorder finishes the bag, ur_interface stops.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, IncludeLaunchDescription, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("robot_dynamics_id")
    recorder = Node(
        package="robot_dynamics_id",
        executable="torque_logger",
        name="torque_logger",
        output="screen",
        parameters=[PathJoinSubstitution([share, "config", "torque_logger.yaml"]),
                    {"bag_path": LaunchConfiguration("bag")}],
    )
    excitation = Node(
        package="robot_dynamics_id",
        executable="excitation",
        name="excitation",
        output="screen",
        parameters=[PathJoinSubstitution([share, "config", "excitation.yaml"]),
                    {"trajectory_file": LaunchConfiguration("excitation"),
                     "move_to_start": LaunchConfiguration("move_to_start"),
                     # the first command goes out only once the recorder has subscribed: none is lost
                     "wait_for_subscribers": ["torque_logger"]}],
    )
    return LaunchDescription([
        DeclareLaunchArgument("sim", default_value="true", description="true: simulated UR3; false: real robot"),
        DeclareLaunchArgument("robot_ip", default_value="127.0.0.1", description="UR controller address"),
        DeclareLaunchArgument("excitation", description="excitation trajectory file (rdi excite plan --out ...)"),
        DeclareLaunchArgument("bag", default_value="", description="bag directory to create (empty: bags/rdi_<date>)"),
        DeclareLaunchArgument("move_to_start", default_value="false",
                              description="move slowly to the excitation's start pose first"),
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution([share, "config", "ur3.yaml"]),
                              description="ur_interface parameter file (the arm, its rate and drive gains)"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "ur_interface.launch.py"])),
            launch_arguments={"sim": LaunchConfiguration("sim"), "robot_ip": LaunchConfiguration("robot_ip"),
                              "config": LaunchConfiguration("config")}.items(),
        ),
        recorder,
        excitation,
        # the run is over when the excitation exits (done, refused, cancelled or failed: its exit code says which):
        # the others get SIGINT, so the recorder finishes the bag and ur_interface stops the arm
        RegisterEventHandler(OnProcessExit(target_action=excitation, on_exit=[
            EmitEvent(event=Shutdown(reason="the excitation ended"))])),
        # and when the recorder exits (it refused bag_path, the disk filled, it was killed): nothing to run for
        RegisterEventHandler(OnProcessExit(target_action=recorder, on_exit=[
            EmitEvent(event=Shutdown(reason="the recorder ended"))])),
    ])
