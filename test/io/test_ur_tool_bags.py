"""Bags from UR's own ROS 2 tools: the driver with currents as effort (read), the driver with the gravity-
compensated torque of new firmware (refused, naming the fix), and RTDE_ROS2_Publisher's topics (read)."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from rdi_test_support.ur_tool_bags import CONTROLLER_UPTIME_S, write_driver_bag, write_rtde_publisher_bag
from robot_dynamics_id.cli import main
from robot_dynamics_id.identification.job import ReadOptions, load_recording, run_identify
from robot_dynamics_id.io.bag_reader import BagReadError
from robot_dynamics_id.io.recording import Recording
from robot_dynamics_id.io.ur_driver_bags import check_driver_effort, read_rtde_publisher_bag
from robot_dynamics_id.robots import load_robot
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
from robot_dynamics_id.sim.experiment import run_experiment


@pytest.fixture(scope="module")
def sim():
    """20 s of an optimised excitation on the simulated UR3 (truth seed 7): the robot's data."""
    robot = load_robot("ur3")
    trajectory = planned_fourier_excitation(robot, duration_s=20.0, seed=0, max_iterations=15)
    result = run_experiment(trajectory, robot="ur3", truth_seed=7, noise_seed=3)
    return robot, result


def _gravity_compensated(result, robot) -> np.ndarray:
    """RTDE actual_current_as_torque as UR documents it: joint torque minus the controller's gravity model
    (the controller knows its arm: the simulated truth's gravity)."""
    rec = result.recording
    model = result.truth.robot_model().model
    data = model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model, data, q) for q in rec.q_rad])
    return rec.current_a * result.truth.drive_gains_nm_per_a - gravity


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_driver_bag_with_currents_is_read_checked_and_identified(sim, tmp_path, storage):
    robot, result = sim
    rec = result.recording
    bag = write_driver_bag(tmp_path / "driver", rec, rec.current_a, storage=storage, tf_prefix="ur_")
    read = load_recording(bag, robot=robot, ur_driver_topics=True)
    n = read.n_samples  # the last joint states after the 100 Hz wrench's last message are not extrapolated
    assert rec.n_samples - 5 < n <= rec.n_samples
    np.testing.assert_allclose(read.current_a, rec.current_a[:n], atol=1e-12)  # reordered from the driver's order
    np.testing.assert_allclose(read.q_rad, rec.q_rad[:n], atol=1e-12)
    assert any("checked as motor current" in w for w in read.warnings)
    check = check_driver_effort(read, robot)
    assert check.kind == "current" and 0.6 < check.ratio < 1.6, check
    if storage == "mcap":
        summary = run_identify(bag, robot="ur3", out_dir=tmp_path / "model", torque_source="current",
                               drive_gains_nm_per_a=result.truth.drive_gains_nm_per_a, ur_driver_topics=True,
                               plots=False)
        assert min(summary["fit_percent"]) > 95.0, summary["fit_percent"]


def test_driver_bag_with_gravity_compensated_effort_is_refused(sim, tmp_path, capsys):
    robot, result = sim
    bag = write_driver_bag(tmp_path / "driver_new_firmware", result.recording, _gravity_compensated(result, robot))
    with pytest.raises(BagReadError) as error:
        load_recording(bag, robot=robot, ur_driver_topics=True)
    text = str(error.value)
    assert "gravity-compensated" in text and "use_currents_as_efforts: true" in text
    assert "RTDE_ROS2_Publisher" in text and "ratio" in text  # says which check decided
    code = main(["identify", "--data", str(bag), "--out", str(tmp_path / "m"), "--ur-driver-topics",
                 "--torque-source", "current", "--drive-gains", "10,10,8,6,6,6", "--no-plots", "--quiet"])
    assert code == 1 and "use_currents_as_efforts" in capsys.readouterr().err
    # The user's word overrides the data check (and is recorded in the warnings).
    stated = ReadOptions(ur_driver_topics=True, joint_states_effort="current")
    read = load_recording(bag, robot=robot, read=stated)
    assert any("without the data check" in w for w in read.warnings)
    # Stated as what it is, it is read but never used as a joint torque.
    said = ReadOptions(ur_driver_topics=True, joint_states_effort="current_as_torque")
    read = load_recording(bag, robot=robot, read=said)
    assert read.current_a is None and read.effort_nm is None and read.current_as_torque_nm is not None
    code = main(["identify", "--data", str(bag), "--out", str(tmp_path / "m"), "--ur-driver-topics",
                 "--joint-states-effort", "current_as_torque", "--no-plots", "--quiet"])
    assert code == 1 and "gravity-compensated" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_payload_not_declared_still_reads_as_gravity_compensated(sim, tmp_path):
    """New firmware, a 1 kg payload mounted but not declared on the pendant: the effort then holds the payload's
    gravity, and the ratio is about 0.3, still below the current range."""
    robot, _ = sim
    trajectory = planned_fourier_excitation(robot, duration_s=10.0, seed=1, max_iterations=5)
    loaded = run_experiment(trajectory, robot="ur3", truth_seed=7, noise_seed=4, payload_kg=1.0,
                            payload_com_m=(0.0, 0.0, 0.05))
    bag = write_driver_bag(tmp_path / "driver", loaded.recording, _gravity_compensated(loaded, robot))
    with pytest.raises(BagReadError, match="gravity-compensated"):
        load_recording(bag, robot=robot, ur_driver_topics=True)


def test_driver_bag_of_an_arm_at_rest_cannot_be_told_and_says_how_to_proceed(tmp_path):
    robot = load_robot("ur3")
    t = np.arange(0, 4.0, 0.002)
    q = np.tile([0.0, -1.2, 1.0, -1.4, -1.57, 0.0], (t.size, 1))
    qd = np.random.default_rng(0).normal(0, 1e-4, q.shape)
    still = Recording(joint_names=robot.joint_names, time_s=t, q_rad=q, qd_rad_s=qd,
                      current_a=np.tile([0.0, 1.5, 0.6, 0.1, 0.0, 0.0], (t.size, 1)))
    bag = write_driver_bag(tmp_path / "still", still, still.current_a)
    with pytest.raises(BagReadError, match=r"cannot tell.*--joint-states-effort current"):
        load_recording(bag, robot=robot, ur_driver_topics=True)
    stated = ReadOptions(ur_driver_topics=True, joint_states_effort="current")
    assert load_recording(bag, robot=robot, read=stated).current_a is not None


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_rtde_publisher_bag_is_read_packet_by_packet(sim, tmp_path, storage):
    robot, result = sim
    rec = result.recording
    bag = write_rtde_publisher_bag(tmp_path / "rtde", rec, storage=storage)
    read = load_recording(bag, robot=robot)  # recognised by its topics
    assert read.n_samples == rec.n_samples
    for name in ("q_rad", "qd_rad_s", "current_a", "target_current_a", "target_moment_nm"):
        np.testing.assert_array_equal(getattr(read, name), getattr(rec, name), err_msg=name)
    np.testing.assert_allclose(read.time_s, rec.time_s + CONTROLLER_UPTIME_S, atol=1e-9)  # the controller clock
    assert read.effort_nm is None  # no joint torque is invented
    assert "RTDE_ROS2_Publisher" in read.source.storage
    assert not any("matched by receive time" in w or "receive times" in w for w in read.warnings)


def test_rtde_publisher_bag_with_drops_no_timestamp_and_a_namespace(sim, tmp_path):
    robot, result = sim
    rec = result.recording
    bag = write_rtde_publisher_bag(tmp_path / "rtde", rec, namespace="/left_arm", timestamp=False,
                                   drop={"actual_current": 0.01, "target_current": 0.2})
    read = read_rtde_publisher_bag(bag)
    text = " | ".join(read.warnings)
    assert "receive times" in text and "matched by receive time" in text
    assert "/left_arm/rtde/target_current" in text and read.target_current_a is None  # too many drops: not used
    assert 0.97 * rec.n_samples < read.n_samples < rec.n_samples  # the packets that lost actual_current
    # every kept sample is one packet: q, qd and current of the same controller cycle
    # (matched through q, unique once the arm moves: at rest the quantised encoders repeat a value)
    _, first, counts = np.unique(rec.q_rad, axis=0, return_index=True, return_counts=True)
    rows = {tuple(rec.q_rad[k]): k for k, c in zip(first, counts) if c == 1}
    kept = [(i, rows[tuple(row)]) for i, row in enumerate(read.q_rad) if tuple(row) in rows]
    assert len(kept) > 0.9 * read.n_samples
    i, k = np.array(kept).T
    np.testing.assert_array_equal(read.qd_rad_s[i], rec.qd_rad_s[k])
    np.testing.assert_array_equal(read.current_a[i], rec.current_a[k])
    np.testing.assert_array_equal(read.target_moment_nm[i], rec.target_moment_nm[k])


def test_rtde_publisher_bag_identifies_like_our_own(sim, tmp_path):
    robot, result = sim
    bag = write_rtde_publisher_bag(tmp_path / "rtde", result.recording)
    summary = run_identify(bag, robot="ur3", out_dir=tmp_path / "model", torque_source="current",
                           drive_gains_nm_per_a=result.truth.drive_gains_nm_per_a, plots=False)
    assert min(summary["fit_percent"]) > 95.0, summary["fit_percent"]


def test_rtde_publisher_bag_without_velocities_names_the_recipe(sim, tmp_path, capsys):
    _, result = sim
    short = result.recording.select(slice(0, 500))
    bag = write_rtde_publisher_bag(tmp_path / "rtde", short, fields=("actual_q", "actual_current"))
    with pytest.raises(BagReadError, match=r"/rtde/actual_qd is missing or empty; add actual_qd to the publisher's "
                                           r"output_recipe"):
        read_rtde_publisher_bag(bag)
    # without currents: the refusal names the topic and the recipe (it said only "no torque or current at all")
    bag = write_rtde_publisher_bag(tmp_path / "rtde_no_current", short, fields=("actual_q", "actual_qd"))
    assert main(["identify", "--data", str(bag), "--robot", "ur3", "--out", str(tmp_path / "m"), "--drive-gains",
                 "10,10,8,6,6,6", "--no-plots"]) == 1
    assert "(/rtde/actual_current is not in the data; add actual_current to the publisher's output_recipe)" in \
        capsys.readouterr().err


def test_our_own_bags_are_not_mistaken_for_ur_tool_bags(sim, tmp_path):
    from robot_dynamics_id.sim.experiment_bag import write_experiment_bag

    robot, result = sim
    short = replace(result, recording=result.recording.select(slice(0, 1000)))
    bag = write_experiment_bag(tmp_path / "ours", short)
    read = load_recording(bag, robot=robot)
    assert read.effort_nm is not None and read.current_a is not None
    assert "RTDE_ROS2_Publisher" not in read.source.storage


def test_rtde_publisher_bag_follows_the_nan_policy_and_says_which_options_do_not_apply(sim, tmp_path):
    robot, result = sim
    short = result.recording.select(slice(0, 2000))
    current = short.current_a.copy()
    current[700:703, 2] = np.nan  # three packets whose actual_current holds NaN
    bag = write_rtde_publisher_bag(tmp_path / "rtde", replace(short, current_a=current))
    with pytest.raises(BagReadError, match=r"3 of 2000 RTDE packets hold NaN/inf values .*/rtde/actual_current "
                                           r"\(3\).*--nan-policy drop"):
        load_recording(bag, robot=robot)
    read = load_recording(bag, robot=robot, read=ReadOptions(nan_policy="drop", joint_states_effort="torque"))
    assert read.n_samples == 1997 and np.all(np.isfinite(read.current_a))
    np.testing.assert_array_equal(read.q_rad, np.delete(short.q_rad, [700, 701, 702], axis=0))
    text = " | ".join(read.warnings)
    assert "3 of 2000 RTDE packets hold NaN/inf values" in text and "; dropped" in text
    assert "--topic and --joint-states-effort apply to /joint_states" in text


def test_rtde_topics_that_cannot_be_read_are_named_not_ignored(tmp_path):
    """/joint_states and only /rtde/actual_current: our topics are read, and the RTDE one is said to be unread."""
    from robot_dynamics_id.io.bag_writer import BagWriter, float64_multi_array, joint_state
    from robot_dynamics_id.io.ur_driver_bags import read_robot_bag
    from robot_dynamics_id.robots import JOINT_NAMES

    with BagWriter(tmp_path / "b") as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        bag.add_topic("/rtde/actual_current", "std_msgs/msg/Float64MultiArray")
        for k in range(50):
            stamp = 5 * 10**9 + k * 2_000_000
            bag.write("/joint_states", stamp, joint_state(stamp, JOINT_NAMES, np.full(6, 1e-3 * k), np.zeros(6),
                                                          np.ones(6)))
            bag.write("/rtde/actual_current", stamp, float64_multi_array(np.ones(6)))
    recording = read_robot_bag(tmp_path / "b", load_robot("ur3"))
    assert recording.n_samples == 50
    assert any(w.startswith("RTDE_ROS2_Publisher topic(s) ['/rtde/actual_current'] were not read") and
               "/joint_states was read instead" in w for w in recording.warnings), recording.warnings
