"""The identifier node as a real process (identify.launch.py): exit codes, refusals, and a stop mid-job."""

import signal
import time

import pytest

from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.io.bag_writer import write_recording_bag
from robot_dynamics_id.io.ur_csv import write_ur_csv
from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = pytest.mark.ros

GAINS = [10.0, 10.0, 8.0, 6.0, 6.0, 6.0]


def _identifier(tmp_path, data, out, *overrides):
    (node,) = plan_launch("identify.launch.py", {"bag": str(data), "out": str(out)})
    extra = []
    for item in overrides:
        extra += ["-p", item]
    return start_node(node, log_dir=tmp_path / f"logs_{out.name}", env=loopback_environment(), extra_ros_args=extra)


def _finish(process, timeout_s=120.0) -> int:
    process.popen.wait(timeout_s)
    return process.popen.returncode


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    root = tmp_path_factory.mktemp("identifier_data")
    truth = perturbed_truth("ur3", seed=31, relative=0.1)
    short = synthetic_ur_recording(truth, GAINS, duration_s=15.0, seed=1, torque_noise_nm=0.02)
    long = synthetic_ur_recording(truth, GAINS, duration_s=240.0, rate_hz=500.0, seed=2, torque_noise_nm=0.02)
    return {"bag": write_recording_bag(root / "bag", short), "csv": write_ur_csv(root / "short.csv", short),
            "long_csv": write_ur_csv(root / "long.csv", long)}


def test_identifier_writes_a_model_and_exits_0(tmp_path, recordings):
    out = tmp_path / "model"
    process = _identifier(tmp_path, recordings["bag"], out)
    assert _finish(process) == 0, process.log()
    assert (out / "model.yaml").is_file() and (out / "predictions.csv").is_file()


def test_identifier_refuses_currents_without_gains_and_bad_parameters(tmp_path, recordings):
    out = tmp_path / "model"
    process = _identifier(tmp_path, recordings["csv"], out)
    assert _finish(process) == 1
    # the job's message names the fix in the node's words (the CLI's option --drive-gains is not the node's)
    assert "drive_gains_nm_per_a" in process.log() and "--drive-gains" not in process.log(), process.log()
    assert not out.exists()
    process = _identifier(tmp_path, recordings["csv"], tmp_path / "other", "torque_source:=torque")
    assert _finish(process) == 2
    assert "parameter 'torque_source'" in process.log()


def test_identifier_stopped_mid_job_exits_6_and_leaves_no_result(tmp_path, recordings):
    out = tmp_path / "model"
    process = _identifier(tmp_path, recordings["long_csv"], out, "drive_gains_nm_per_a:=" + str(GAINS))
    assert wait_until(lambda: "identifying" in process.log() or not process.alive(), 60.0), process.log()
    assert process.alive(), process.log()
    time.sleep(0.5)
    started = time.monotonic()
    process._signal_group(signal.SIGTERM)
    code = _finish(process, 30.0)
    assert code == 6, process.log()
    assert time.monotonic() - started < 10.0
    assert "cancel" in process.log()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "logs_model") == []


def test_node_parameters_reach_every_job_option(tmp_path):
    from robot_dynamics_id.nodes.identifier import IDENTIFIER_PARAMETERS, job_arguments
    from robot_dynamics_id.parameters import ParameterError

    for name in ("run.csv", "other.csv"):
        (tmp_path / name).write_text("")
    params = {spec.name: spec.default for spec in IDENTIFIER_PARAMETERS}
    params.update(data_path=str(tmp_path / "run.csv"), joint_states_topic="/arm/joint_states",
                  motor_currents_topic="/arm/currents", joint_states_effort="current", nan_policy="drop",
                  tool_frame="flange", skip_robot_check=True, compare_ur_model=True, moving_threshold_rad_s=0.05,
                  drive_gains_nm_per_a=None, gravity_m_s2=[0.0, 9.81, 0.0], compare_baseline=True,
                  validation_data_path=str(tmp_path / "other.csv"), presliding_distance_rad=[0.002])
    job = job_arguments(params)
    assert job["presliding_distance_rad"] == [0.002]
    assert job_arguments({**params, "presliding_distance_rad": []})["presliding_distance_rad"] is None
    assert job["gravity_m_s2"] == [0.0, 9.81, 0.0]
    assert job["compare_baseline"] and job["validation_path"] == str(tmp_path / "other.csv")
    assert job["read"].topics == {"joint_states": "/arm/joint_states", "motor_currents": "/arm/currents"}
    assert job["read"].joint_states_effort == "current" and job["read"].nan_policy == "drop"
    assert job["tool_frame"] == "flange" and job["skip_robot_check"] and job["compare_ur_model"]
    assert job["moving_threshold_rad_s"] == 0.05 and job["drive_gains_nm_per_a"] is None
    for name, value, message in (("joint_states_effort", "amps", "joint_states_effort"),
                                 ("motor_currents_topic", "currents", "starts with '/'"),
                                 ("nan_policy", "ignore", "nan_policy"), ("data_path", "", "data_path"),
                                 ("gravity_m_s2", [0.0, 0.0], "gravity_m_s2.*three numbers"),
                                 ("presliding_distance_rad", [0.001, 0.0], "presliding_distance_rad.*> 0 rad"),
                                 ("validation_data_path", "", "compare_baseline.*validation_data_path"),
                                 ("data_path", "no_such_bag", "'data_path': no_such_bag does not exist"),
                                 ("payload_model_file", "none.yaml", "'payload_model_file': none.yaml does not "
                                                                     "exist .* the arm's model.yaml")):
        with pytest.raises(ParameterError, match=message):
            job_arguments({**params, name: value})


def test_drive_gains_come_from_the_calibration_file_and_a_doubtful_one_is_refused(tmp_path):
    import json

    from robot_dynamics_id.nodes.identifier import IDENTIFIER_PARAMETERS, job_arguments
    from robot_dynamics_id.parameters import ParameterError

    good, doubtful = tmp_path / "drive_gains.json", tmp_path / "drive_gains.doubtful.json"
    good.write_text(json.dumps({"status": "ok", "drive_gains_nm_per_a": GAINS, "inputs": {}}))
    doubtful.write_text(json.dumps({"status": "doubtful", "drive_gains_nm_per_a": GAINS, "inputs": {}}))
    params = {spec.name: spec.default for spec in IDENTIFIER_PARAMETERS}
    (tmp_path / "run.csv").write_text("")
    params.update(data_path=str(tmp_path / "run.csv"), drive_gains_file=str(good))
    assert job_arguments(params)["drive_gains_nm_per_a"] == GAINS
    for changes, message in (({"drive_gains_file": str(doubtful)}, "the gains there are 'doubtful'"),
                             ({"drive_gains_file": str(tmp_path / "none.json")}, "not a result of rdi drive-gains"),
                             ({"drive_gains_nm_per_a": GAINS}, "'drive_gains_file' and 'drive_gains_nm_per_a' are "
                                                               "both set")):
        with pytest.raises(ParameterError, match=message):
            job_arguments({**params, **changes})


def test_payload_mode_refuses_a_robot_that_is_not_the_arm_models(tmp_path, recordings):
    from robot_dynamics_id.io.model_file import DynamicModel

    arm = DynamicModel.nominal("ur3").save(tmp_path / "arm.yaml")
    process = _identifier(tmp_path, recordings["bag"], tmp_path / "payload", f"payload_model_file:={arm}",
                          "robot:=ur5e")
    assert _finish(process) == 1, process.log()
    assert "ur5e contradicts the arm model, which was identified for ur3" in process.log()
    assert f"identifying the payload of {recordings['bag']} with the arm model {arm}" in process.log()
