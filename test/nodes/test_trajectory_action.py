"""The FollowJointTrajectory action of ur_interface.

The mapping from the tracker's outcome to the action's result runs everywhere. The action itself needs
control_msgs (a ROS machine); the PyPI wheels here have none, so that test is skipped here and is not
evidence of anything on this machine.
"""

import numpy as np
import pytest

from robot_dynamics_id.hardware.trajectory_tracking import TrackingStatus
from robot_dynamics_id.nodes._trajectory_action import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    goal_outcome,
)


def _status(goal, phase, reason=""):
    return TrackingStatus(goal, phase, 1.0, 2.0, 1.0, 0.0, 0.0, reason)


@pytest.mark.parametrize("phase, reason, expected", [
    ("succeeded", "", ("succeeded", SUCCESSFUL)),
    ("cancelled", "cancelled by the action client", ("canceled", SUCCESSFUL)),
    ("rejected", "trajectory rejected: its first point ...", ("aborted", INVALID_GOAL)),
    ("aborted", "joint 2 is 0.300 rad from the trajectory (path tolerance 0.25 rad)", ("aborted",
                                                                                       PATH_TOLERANCE_VIOLATED)),
    ("aborted", "the arm is 0.020 rad from the trajectory's last point 1.0 s after its end",
     ("aborted", GOAL_TOLERANCE_VIOLATED)),
])
def test_a_finished_goal_ends_with_the_drivers_result_code(phase, reason, expected):
    outcome = goal_outcome(3, _status(3, phase, reason))
    assert (outcome.state, outcome.error_code) == expected
    assert outcome.error_string == reason


@pytest.mark.parametrize("phase", ["running", "stopping", "settling"])
def test_a_running_goal_has_no_outcome_yet(phase):
    assert goal_outcome(3, _status(3, phase)) is None


def test_a_goal_not_yet_taken_by_the_loop_waits_and_a_replaced_one_is_aborted():
    assert goal_outcome(4, _status(3, "succeeded")) is None  # goal 4 submitted; the loop still reports goal 3
    replaced = goal_outcome(3, _status(4, "running"))
    assert replaced.state == "aborted" and replaced.error_code == INVALID_GOAL and "newer" in replaced.error_string


@pytest.mark.ros
def test_follow_joint_trajectory_goal_runs_to_success_on_the_simulated_arm(tmp_path):
    FollowJointTrajectory = pytest.importorskip("control_msgs.action").FollowJointTrajectory
    import rclpy
    from builtin_interfaces.msg import Duration
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robot_dynamics_id.launch_emulation import plan_launch
    from robot_dynamics_id.nodes._trajectory_action import ACTION_NAME
    from robot_dynamics_id.ros_processes import loopback_environment, start_node, use_loopback_here

    use_loopback_here()
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    proc = start_node(node, log_dir=tmp_path, env=loopback_environment())
    rclpy.init()
    client_node = rclpy.create_node("fjt_test_client")
    try:
        client = ActionClient(client_node, FollowJointTrajectory, ACTION_NAME)
        assert client.wait_for_server(timeout_sec=60.0), proc.log()
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                       "wrist_2_joint", "wrist_3_joint"]
        home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
        point = JointTrajectoryPoint(positions=list(home + [0.2, 0, 0, 0, 0, 0]),
                                     time_from_start=Duration(sec=2, nanosec=0))
        goal.trajectory.points = [point]
        sent = client.send_goal_async(goal)
        rclpy.spin_until_future_complete(client_node, sent, timeout_sec=30.0)
        handle = sent.result()
        assert handle.accepted, proc.log()
        result = handle.get_result_async()
        rclpy.spin_until_future_complete(client_node, result, timeout_sec=60.0)
        assert result.result().result.error_code == SUCCESSFUL, proc.log()
    finally:
        client_node.destroy_node()
        rclpy.shutdown()
        proc.stop()
