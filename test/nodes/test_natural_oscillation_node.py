"""natural_oscillation as a real process driving ur_interface (simulated UR3, torque mode) over DDS (loopback)."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import NodeProcess, loopback_environment, start_node

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
UPRIGHT = "[0.0,-1.5708,0.0,-1.5708,0.0,0.0]"


def _start_natural_oscillation(tmp_path, overrides):
    cmd = [sys.executable, "-m", "robot_dynamics_id.nodes.natural_oscillation", "--ros-args",
           "--params-file", str(REPO / "config" / "natural_oscillation.yaml")]
    for item in overrides:
        cmd += ["-p", item]
    log_path = tmp_path / "natural_oscillation.log"
    with open(log_path, "w") as log:
        popen = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=loopback_environment(),
                                 start_new_session=True)
    return NodeProcess(popen, "natural_oscillation", log_path)


def test_trials_run_through_ur_interface_and_a_fall_is_stopped_by_the_guard(tmp_path):
    from robot_dynamics_id.sim.truth import nominal_truth

    # The simulated arm (sim_truth_seed -1) is the nominal truth, friction included; the node's prior is
    # that model and it feeds its friction forward, so the law differs from the arm only by the factors.
    model_file = nominal_truth("ur3").save(tmp_path / "ur3_nominal_truth.yaml")
    (interface_launch,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    interface = start_node(interface_launch, log_dir=tmp_path, env=loopback_environment(),
                           extra_ros_args=["-p", f"sim_initial_q_rad:={UPRIGHT}"])
    probe = probe_session(name="natural_oscillation_test_probe")
    progress: list[dict] = []
    lock = threading.Lock()

    def on_progress(msg: String) -> None:
        with lock:
            progress.append(json.loads(msg.data))

    probe.create_subscription(String, "/natural_oscillation/progress", on_progress,
                              QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    node = None
    try:
        assert probe.wait_ready(40.0), f"ur_interface never became ready:\n{interface.log()}"
        node = _start_natural_oscillation(tmp_path, [
            f"model_file:={model_file}", "compensate_friction:=true", "window_s:=5.0",
            # over-compensated (oscillates), then the elbow 10 % under-compensated (falls)
            "trial_factors:=[1.3,1.3,1.3,0.9]", f"output_file:={tmp_path / 'trials.json'}"])
        done = probe.wait_for(lambda: not node.alive(), 45.0)
        assert done, f"natural_oscillation did not finish:\n{node.log()}"
        assert node.popen.returncode == 0, node.log()
        probe.wait_for(lambda: any(p.get("phase") == "done" for p in progress), 2.0)
        with lock:
            trials = [p for p in progress if p.get("phase") == "trial"]
            final = [p for p in progress if p.get("phase") == "done"]
        assert len(trials) == 2, (progress, node.log())
        assert trials[0]["outcome"] == "does not fall"
        assert trials[0]["duration_s"] > 2.0  # ran in torque mode until two periods or the window
        assert trials[1]["outcome"] == "falls", (trials, node.log())
        assert final and final[0]["guard_falls"] == 1
        # the given trials are written as the bisection's result is (output_file)
        written = json.loads((tmp_path / "trials.json").read_text())
        assert [t["outcome"] for t in written["trials"]] == ["does not fall", "falls"]
        assert written["trials"][1]["factors"] == [1.3, 0.9] and written["guard_falls"] == 1
        # The guard stopped the arm right after the bound: it came to rest not far beyond 0.5 rad.
        def excursion_and_rest():
            _, q, qd = probe.joint_arrays()
            forearm = q[:, 1] + q[:, 2] - (-1.5708)
            return np.abs(forearm).max(), np.abs(qd[-20:]).max()

        # the probe's record may trail the processes by a moment on a loaded machine
        probe.wait_for(lambda: excursion_and_rest()[0] > 0.5 and excursion_and_rest()[1] < 0.02, 10.0)
        t, q, qd = probe.joint_arrays()
        forearm = q[:, 1] + q[:, 2] - (-1.5708)
        assert np.abs(forearm).max() > 0.5
        assert np.abs(forearm).max() < 0.75, f"largest excursion {np.abs(forearm).max():.3f} rad"
        assert np.abs(qd[-20:]).max() < 0.02, "the arm is not at rest after the fall"
    finally:
        if node is not None:
            node.stop()
        interface.stop()
        probe.close()
        rclpy.shutdown()


def test_an_output_file_that_cannot_be_written_is_refused_before_any_trial(tmp_path):
    node = _start_natural_oscillation(tmp_path, [f"output_file:={tmp_path / 'no_such_folder' / 'out.json'}"])
    node.popen.wait(timeout=60)
    assert node.popen.returncode == 2, node.log()
    assert "parameter 'output_file'" in node.log() and "existing, writable folder" in node.log()


def test_no_torque_or_refused_commands_stop_the_trials_and_the_output_is_kept(tmp_path):
    """A robot node that takes no torque commands gets no trial (exit 2), one that refuses our commands mid-trial
    stops the procedure (exit 3; they once read as "does not fall"), and Ctrl-C ends it (exit 6); each run writes
    output_file with its status and trials. The fake robot node's status is published here, beside ur_interface."""
    from robot_dynamics_id.sim.truth import nominal_truth

    model_file = nominal_truth("ur3").save(tmp_path / "ur3_nominal_truth.yaml")
    (interface_launch,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    interface = start_node(interface_launch, log_dir=tmp_path, env=loopback_environment(),
                           extra_ros_args=["-p", f"sim_initial_q_rad:={UPRIGHT}"])
    probe = probe_session(name="natural_oscillation_refusal_probe")
    try:
        assert probe.wait_ready(40.0), f"ur_interface never became ready:\n{interface.log()}"
        status = {"robot": "ur3", "supports_torque": False, "rejected_commands": 0}
        publisher = probe.create_publisher(String, "/fake_robot/status", 10)
        stop = threading.Event()

        def publish_status():
            while not stop.wait(0.05):
                publisher.publish(String(data=json.dumps(status)))

        thread = threading.Thread(target=publish_status, daemon=True)
        thread.start()
        node = None
        common = [f"model_file:={model_file}", "compensate_friction:=true", "window_s:=5.0",
                  "trial_factors:=[1.3,1.3,1.3,1.3]"]
        try:
            out = tmp_path / "refused.json"
            node = _start_natural_oscillation(tmp_path, [*common, "interface_status_topic:=/fake_robot/status",
                                                         f"output_file:={out}"])
            node.popen.wait(timeout=60)
            assert node.popen.returncode == 2, node.log()
            assert "does not take torque commands (/fake_robot/status: supports_torque false)" in node.log()
            assert json.loads(out.read_text())["status"] == "refused"

            status["supports_torque"] = True
            out = tmp_path / "stopped.json"
            node = _start_natural_oscillation(tmp_path, [*common, "interface_status_topic:=/fake_robot/status",
                                                         f"output_file:={out}"])
            assert probe.wait_for(lambda: "robot node checked (/fake_robot/status)" in node.log(), 60.0), node.log()
            status.update(rejected_commands=3, event="torque command refused: test")
            node.popen.wait(timeout=30)
            assert node.popen.returncode == 3, node.log()
            assert ("the robot node refused our commands (/fake_robot/status: torque command refused: test)"
                    in node.log())
            assert json.loads(out.read_text())["status"] == "stopped"
            assert "does not fall" not in node.log()

            out = tmp_path / "cancelled.json"
            node = _start_natural_oscillation(tmp_path, [*common, f"output_file:={out}"])
            assert probe.wait_for(lambda: "robot node checked (/ur_interface/status)" in node.log(), 60.0), node.log()
            assert node.stop() == 6, node.log()
            written = json.loads(out.read_text())
            assert written["status"] == "cancelled" and isinstance(written["trials"], list), written
        finally:
            stop.set()
            thread.join(2.0)
            if node is not None:
                node.stop()
    finally:
        interface.stop()
        probe.close()
        rclpy.shutdown()


def test_the_robot_node_and_the_friction_prior_are_checked():
    from robot_dynamics_id.io.model_file import DynamicModel
    from robot_dynamics_id.nodes.natural_oscillation import _check_friction_prior, interface_problem
    from robot_dynamics_id.parameters import ParameterError

    topic = "/ur_interface/status"
    assert interface_problem({"robot": "ur3", "supports_torque": True}, "ur3", topic) is None
    assert interface_problem({"robot": "ur3"}, "ur3", topic) is None  # an older status: not named, not refused
    assert "runs a ur5e (/ur_interface/status), but parameter 'robot' is ur3" in \
        interface_problem({"robot": "ur5e", "supports_torque": True}, "ur3", topic)
    assert "supports_torque false" in interface_problem({"robot": "ur3", "supports_torque": False}, "ur3", topic)
    # compensate_friction needs friction to feed forward: the nominal model has none
    with pytest.raises(ParameterError, match="'model_file' is empty"):
        _check_friction_prior("", DynamicModel.nominal("ur3"))
    with pytest.raises(ParameterError, match="has no friction"):
        _check_friction_prior("m.yaml", DynamicModel.nominal("ur3"))
