"""osc_controller (direct connection, rtde backend) against the stand-in UR controller: a fault stops it for good.

The unmodified ur_rtde client inside the node talks to the stand-in (e-Series personality, torque
control). The controller holds the arm's pose with torque output; a protective stop raised on the
controller must stop the arm and the control law, and after the stop is cleared from the dashboard
the arm must stay at rest: the controller never resumes on its own ("any fault stops the arm").
"""

import json
import os
import time

import pytest
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from geometry_msgs.msg import PoseStamped
from std_msgs.msg import String

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until
from robot_dynamics_id.sim.ur_controller import StandInProcess

pytestmark = [pytest.mark.ros, pytest.mark.slow]

HOST = "127.0.0.4"


def test_protective_stop_stops_the_controller_and_it_stays_stopped(tmp_path):
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    states: list[dict] = []
    probe = probe_session(name="osc_controller_rtde_probe")
    probe.create_subscription(String, "/osc_controller/state", lambda m: states.append(json.loads(m.data)),
                              QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    (node,) = plan_launch("control.launch.py", {"sim": "false", "robot_ip": HOST, "task": "external",
                                                "output_mode": "torque"})
    with StandInProcess(personality="e-series", host=HOST, unlock_delay_s=0.3, log_dir=tmp_path) as standin:
        controller = start_node(node, log_dir=tmp_path, env=loopback_environment(),
                                extra_ros_args=["-p", "robot_parameters:=[supports_torque=true, "
                                                      "controller_watchdog_hz=5.0, realtime_priority=0]"])
        try:
            # holding the start pose under torque control through ur_rtde
            assert wait_until(lambda: any(s.get("robot", {}).get("state") == "moving" for s in states), 90.0), \
                f"{controller.log()}\n{standin.log()[-2000:]}"
            time.sleep(1.0)
            assert states[-1]["stopped"] is None and states[-1]["position_error_m"] < 0.01, states[-1]
            standin.command("protective_stop")
            assert wait_until(lambda: any((s.get("stopped") or "").startswith("robot fault") for s in states), 10.0), \
                f"{states[-3:]}\n{controller.log()[-2000:]}"
            assert standin.wait_until(lambda: max(abs(v) for v in standin.state()["qd_rad_s"]) < 1e-3, 3.0)
            time.sleep(0.35)  # PolyScope refuses to unlock right after the stop (stand-in: 0.3 s)
            assert "releasing" in standin.command("unlock")
            # the robot is ready again, the controller stays stopped and the arm at rest
            assert wait_until(lambda: states[-1].get("robot", {}).get("state") == "ready", 20.0), states[-1]
            t_ready = time.time()
            time.sleep(1.5)
            assert not [t for t, what in standin.motion() if t > t_ready and what == "moving"], \
                "the arm moved after the fault was cleared without a new command"
            assert (states[-1]["stopped"] or "").startswith("robot fault")
            assert "protective" in states[-1]["stopped"].lower() or "safety" in states[-1]["stopped"].lower()
            # a goal sent now would move nothing: it is refused with the reason (it was once taken in silence)
            goal = probe.create_publisher(PoseStamped, "/osc_controller/target_frame", 10)
            assert wait_until(lambda: goal.get_subscription_count() > 0, 10.0)
            goal.publish(PoseStamped())
            assert wait_until(lambda: "target_frame refused: the controller has stopped (robot fault" in
                              controller.log(), 10.0), controller.log()[-2000:]
        finally:
            code = controller.stop()
            probe.close()
            rclpy.shutdown()
        # Ctrl-C ended a controller that had stopped on a robot fault: not a success (exit 1, docs/faults.md)
        assert code == 1, controller.log()
        assert "Traceback" not in controller.log()  # the control process ignores the group's Ctrl-C


def test_a_cb3_at_the_e_series_rate_ends_the_controller_with_exit_2(tmp_path):
    # the README's CB3 line with the default config (rate_hz 500): ur_interface exits 2 on it, and the
    # controller, which opens the robot itself in direct, must too (it once stayed up, stopped, for ever)
    (node,) = plan_launch("control.launch.py", {"sim": "false", "robot_ip": HOST, "task": "external",
                                                "output_mode": "velocity", "force_source": "estimated"})
    with StandInProcess(personality="cb3", host=HOST, log_dir=tmp_path):
        controller = start_node(node, log_dir=tmp_path, env=loopback_environment())
        try:
            controller.popen.wait(90)
        finally:
            controller.stop()
    assert controller.popen.returncode == 2, controller.log()
    assert "whose RTDE runs at 125 Hz, but rate_hz is 500: set rate_hz: 125" in controller.log()
