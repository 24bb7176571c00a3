"""The FollowJointTrajectory action of ur_interface, offered where ``control_msgs`` is importable (a ROS machine).

The UR driver's scaled_joint_trajectory_controller serves the same action on
``/scaled_joint_trajectory_controller/follow_joint_trajectory``; MoveIt and
most trajectory clients use it instead of the topic. Goals go to the same
:class:`~robot_dynamics_id.hardware.trajectory_tracking.TrajectoryTracker` as
the topic, so they are executed inside the robot loop on the robot's clock.

The PyPI ROS 2 wheels have no ``control_msgs``: there the action is not offered
(ur_interface says so at start-up) and the topic is the interface.

How a goal ends, as ros2_controllers' joint trajectory controller reports it
(control_msgs/FollowJointTrajectory result codes)::

    tracker phase        goal state   error_code
    succeeded            succeeded    SUCCESSFUL (0)
    cancelled            canceled     SUCCESSFUL (0)
    aborted (path)       aborted      PATH_TOLERANCE_VIOLATED (-4)
    aborted (settling)   aborted      GOAL_TOLERANCE_VIOLATED (-5)
    rejected             aborted      INVALID_GOAL (-1)
    replaced by a newer goal  aborted INVALID_GOAL (-1), error_string says so
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.trajectory_tracking import TrackingPhase, TrackingStatus, TrajectoryGoalError

__all__ = ["ACTION_NAME", "GoalOutcome", "goal_outcome", "offer_follow_joint_trajectory"]

ACTION_NAME = "/scaled_joint_trajectory_controller/follow_joint_trajectory"

# control_msgs/action/FollowJointTrajectory result codes
SUCCESSFUL, INVALID_GOAL, PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = 0, -1, -4, -5


@dataclass(frozen=True)
class GoalOutcome:
    """How an action goal ended: ``state`` is succeeded, canceled or aborted."""

    state: str
    error_code: int
    error_string: str


def goal_outcome(goal_id: int, status: TrackingStatus) -> GoalOutcome | None:
    """The outcome of the tracker goal ``goal_id`` given the tracker's ``status``; None while it runs."""
    if status.goal != goal_id:
        if status.goal > goal_id:
            return GoalOutcome("aborted", INVALID_GOAL, "replaced by a newer trajectory")
        return None  # not started yet (the loop takes it at its next cycle)
    if status.phase == TrackingPhase.SUCCEEDED:
        return GoalOutcome("succeeded", SUCCESSFUL, "")
    if status.phase == TrackingPhase.CANCELLED:
        return GoalOutcome("canceled", SUCCESSFUL, status.reason)
    if status.phase == TrackingPhase.REJECTED:
        return GoalOutcome("aborted", INVALID_GOAL, status.reason)
    if status.phase == TrackingPhase.ABORTED:
        code = GOAL_TOLERANCE_VIOLATED if "last point" in status.reason else PATH_TOLERANCE_VIOLATED
        return GoalOutcome("aborted", code, status.reason)
    return None


def offer_follow_joint_trajectory(node, tracker, joint_names, goal_from_message, robot_ready):
    """Serve the action on ``node`` if control_msgs imports; returns the server, or None (then logged).

    ``goal_from_message(trajectory_msg, joint_names)`` converts and checks a trajectory (raises
    TrajectoryGoalError); ``robot_ready()`` returns None when goals may start, else the reason they may not.
    Progress and results are driven by :meth:`_FollowJointTrajectoryServer.poll`, which the node calls from
    a timer (a single-threaded executor: the execute coroutines only await futures the poll resolves).
    """
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError:
        node.get_logger().info(f"control_msgs is not installed: no {ACTION_NAME} action (the topic is served)")
        return None
    return _FollowJointTrajectoryServer(node, FollowJointTrajectory, tracker, list(joint_names), goal_from_message,
                                        robot_ready)


class _FollowJointTrajectoryServer:
    def __init__(self, node, action_type, tracker, joint_names, goal_from_message, robot_ready) -> None:
        from rclpy.action import ActionServer, CancelResponse, GoalResponse

        self._node, self._type, self._tracker = node, action_type, tracker
        self._names, self._convert, self._ready = joint_names, goal_from_message, robot_ready
        self._responses = (GoalResponse, CancelResponse)
        self._running: list[tuple[int, object, object]] = []  # (tracker goal id, goal handle, future)
        self._server = ActionServer(node, action_type, ACTION_NAME, execute_callback=self._execute,
                                    goal_callback=self._on_goal, cancel_callback=self._on_cancel)

    def _on_goal(self, request):
        GoalResponse = self._responses[0]
        try:
            reason = self._ready()
            if reason:
                raise TrajectoryGoalError(reason)
            self._convert(request.trajectory, self._names)
        except TrajectoryGoalError as exc:
            self._node.get_logger().error(f"{ACTION_NAME}: goal rejected: {exc}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, _goal_handle):
        self._tracker.cancel("cancelled by the action client")
        return self._responses[1].ACCEPT

    async def _execute(self, goal_handle):
        from rclpy.task import Future

        goal_id = self._tracker.submit(self._convert(goal_handle.request.trajectory, self._names))
        done = Future()
        self._running.append((goal_id, goal_handle, done))
        outcome: GoalOutcome = await done
        result = self._type.Result()
        result.error_code, result.error_string = outcome.error_code, outcome.error_string
        {"succeeded": goal_handle.succeed, "canceled": goal_handle.canceled, "aborted": goal_handle.abort}[
            outcome.state]()
        return result

    def poll(self, actual_rad) -> None:
        """Publish feedback of the running goal and finish the goals that ended (executor thread)."""
        status = self._tracker.status
        still = []
        for goal_id, handle, done in self._running:
            outcome = goal_outcome(goal_id, status)
            if outcome is not None:
                done.set_result(outcome)
                continue
            still.append((goal_id, handle, done))
            reference = self._tracker.reference_rad
            if status.goal == goal_id and reference is not None and actual_rad is not None:
                feedback = self._type.Feedback()
                feedback.joint_names = self._names
                feedback.desired.positions = [float(v) for v in reference]
                feedback.actual.positions = [float(v) for v in actual_rad]
                feedback.error.positions = [float(r - a) for r, a in zip(reference, actual_rad)]
                handle.publish_feedback(feedback)
        self._running = still
