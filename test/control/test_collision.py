"""The collision observer, its thresholds and detector (control/collision.py) against the simulated arm."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.collision import (CollisionDetector, CollisionModelError, CollisionMonitor,
                                                 CollisionThresholds, MomentumResidual, default_observer_gain_per_s,
                                                 estimate_thresholds, observer_residuals)
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robot_state import RobotState, SafetyMode
from robot_dynamics_id.sim.contacts import LinkPush
from robot_dynamics_id.sim.plant import SimulatedUR
from robot_dynamics_id.sim.truth import make_truth

Q0 = np.array([0.3, -1.2, 1.4, -1.5, -1.5, 0.2])


def _point_jacobian(model: DynamicModel, q, link, point):
    rm = model.robot_model()
    m, d = rm.model, rm.model.createData()
    pin.computeJointJacobians(m, d, q)
    jj = pin.getJointJacobian(m, d, link, pin.LOCAL_WORLD_ALIGNED)
    lever = d.oMi[link].rotation @ np.asarray(point)
    return jj[:3] - pin.skew(lever) @ jj[3:]


def _samples(plant, count):
    out = []
    for _ in range(count):
        s = plant.step()
        out.append((s.timestamp_s, s.q_rad, s.qd_rad_s, s.current_a))
    return [np.array(v) for v in zip(*out)]


def _thresholds(model, level=0.5, edges=(0.02, 0.1, 0.5), gain=50.0, rate=500.0):
    return CollisionThresholds(joint_names=model.joint_names, velocity_edges_rad_s=np.array(edges),
                               threshold_nm=np.full((model.n_joints, len(edges) + 1), level),
                               observer_gain_per_s=gain, rate_hz=rate)


@pytest.fixture(scope="module")
def truth():
    return make_truth("ur3", 3)


def test_residual_of_the_true_model_is_the_external_torque_of_a_push(truth):
    push = LinkPush(link=3, point_m=(0.1, 0.0, 0.05), force_n=(0.0, 30.0, 0.0), start_s=0.4, rise_s=0.02, hold_s=0.6)
    plant = SimulatedUR(robot="ur3", truth=truth, rate_hz=500, initial_q_rad=Q0, external_loads=[push], noise=False)
    plant.speed_j(np.array([0.2, -0.1, 0.15, 0.2, 0.2, 0.2]), 5.0)
    t, q, qd, i = _samples(plant, 450)
    r = observer_residuals(truth, t, q, qd, i, gain_per_s=50.0)
    before = (t > 0.1) & (t < 0.4)
    assert np.abs(r[before]).max() < 0.05  # no contact: the exact model leaves only discretisation error
    expected = _point_jacobian(truth, q[-1], 3, push.point_m).T @ np.array(push.force_n)
    assert np.abs(expected).max() > 1.0
    # 0.46 s after the push started (hold from 0.42 s): 20 time constants, the residual has converged
    np.testing.assert_allclose(r[-1], expected, atol=0.03 * np.abs(expected).max())


def test_a_model_with_load_dependent_friction_runs_and_still_sees_the_push():
    """Real-joint friction (mu |tau_load|, presliding, concave viscous law): the observer feeds the load term the
    measured motor torque; without contact the residual stays well below the push's torque."""
    truth = make_truth("ur3", 4, friction="real")
    assert truth.friction.has_load_term
    push = LinkPush(link=3, point_m=(0.1, 0.0, 0.05), force_n=(0.0, 30.0, 0.0), start_s=0.4, rise_s=0.02, hold_s=0.6)
    plant = SimulatedUR(robot="ur3", truth=truth, rate_hz=500, initial_q_rad=Q0, external_loads=[push], noise=False)
    plant.speed_j(np.array([0.2, -0.1, 0.15, 0.2, 0.2, 0.2]), 5.0)
    t, q, qd, i = _samples(plant, 450)
    r = observer_residuals(truth, t, q, qd, i, gain_per_s=50.0)
    expected = _point_jacobian(truth, q[-1], 3, push.point_m).T @ np.array(push.force_n)
    quiet = np.abs(r[(t > 0.1) & (t < 0.4)]).max(axis=0)
    loud = np.abs(expected) > 1.0
    assert np.all(quiet[loud] < 0.25 * np.abs(expected[loud])), (quiet, expected)
    np.testing.assert_allclose(r[-1][loud], expected[loud], rtol=0.25)


def test_a_missed_sample_widens_one_step_and_a_long_gap_restarts(truth):
    plant = SimulatedUR(robot="ur3", truth=truth, rate_hz=500, initial_q_rad=Q0, noise=False)
    plant.speed_j(np.full(6, 0.3), 5.0)
    t, q, qd, i = _samples(plant, 300)
    full = observer_residuals(truth, t, q, qd, i, gain_per_s=50.0)
    keep = np.ones(t.size, bool)
    keep[150] = False
    gapped = observer_residuals(truth, t[keep], q[keep], qd[keep], i[keep], gain_per_s=50.0)
    np.testing.assert_allclose(gapped[-1], full[-1], atol=0.02)
    observer = MomentumResidual(truth, gain_per_s=50.0)
    observer.update(0.0, q[0], qd[0], i[0])
    observer.update(0.002, q[1], qd[1], i[1])
    assert np.any(observer.external_torque_nm != 0)
    observer.update(1.0, q[2], qd[2], i[2])  # 1 s later: 25 time constants, a restart
    np.testing.assert_array_equal(observer.external_torque_nm, 0.0)


def test_thresholds_per_speed_band_with_quantile_margin_and_sparse_bands():
    rng = np.random.default_rng(0)
    n, count = 2, 20_000
    qd = np.column_stack([rng.uniform(-1.0, 1.0, count), np.full(count, 0.3)])
    slow = np.abs(qd) < 0.1
    residual = rng.normal(0.0, 0.1, (count, n)) * np.where(slow, 4.0, 1.0)
    th = estimate_thresholds(residual, qd, joint_names=("a", "b"), observer_gain_per_s=50.0, rate_hz=500.0,
                             velocity_edges_rad_s=(0.1, 0.5), quantile=0.99, margin=0.5)
    assert th.threshold_nm.shape == (2, 3)
    # joint a: the slow band's residual is 4x larger, and so is its threshold (quantile x 1.5)
    expected_fast = np.quantile(np.abs(residual[np.abs(qd[:, 0]) >= 0.5, 0]), 0.99) * 1.5
    assert th.threshold_nm[0, 2] == pytest.approx(expected_fast)
    assert th.threshold_nm[0, 0] == pytest.approx(4 * expected_fast, rel=0.15)
    # joint b only ever moved at 0.3 rad/s: its other bands take its largest measured value
    np.testing.assert_allclose(th.threshold_nm[1], th.threshold_nm[1, 1])
    assert th.at(np.array([0.05, 0.0]))[0] == th.threshold_nm[0, 0]
    assert th.at(np.array([-0.7, 0.0]))[0] == th.threshold_nm[0, 2]
    assert th.provenance["band_samples"][1] == [0, count, 0]


def test_thresholds_refuse_a_too_short_recording_and_bad_shapes():
    with pytest.raises(CollisionModelError, match="too short"):
        estimate_thresholds(np.zeros((50, 1)), np.zeros((50, 1)), joint_names=("a",), observer_gain_per_s=50,
                            rate_hz=500)
    with pytest.raises(CollisionModelError, match=r"\(N, 2\)"):
        estimate_thresholds(np.zeros((500, 1)), np.zeros((500, 1)), joint_names=("a", "b"), observer_gain_per_s=50,
                            rate_hz=500)
    with pytest.raises(CollisionModelError, match="shape"):
        CollisionThresholds(joint_names=("a",), velocity_edges_rad_s=np.array([0.1]), threshold_nm=np.ones((1, 3)),
                            observer_gain_per_s=50, rate_hz=500)
    # a gain the observer cannot run with (K_O dt = 4: it would restart every sample and detect nothing): refused
    # where thresholds are made and wherever a model carrying them is loaded (the nodes at start-up)
    with pytest.raises(CollisionModelError, match=r"2000 1/s is too large for 500 Hz .*detect nothing; default 50"):
        CollisionThresholds(joint_names=("a",), velocity_edges_rad_s=np.array([0.1]), threshold_nm=np.ones((1, 2)),
                            observer_gain_per_s=2000, rate_hz=500)


def test_thresholds_travel_in_the_model_file(tmp_path, truth):
    th = _thresholds(truth, 0.7)
    path = replace(truth, collision_thresholds=th.to_dict()).save(tmp_path / "model.yaml")
    loaded = CollisionThresholds.from_model(DynamicModel.load(path))
    np.testing.assert_array_equal(loaded.threshold_nm, th.threshold_nm)
    assert loaded.observer_gain_per_s == 50.0 and loaded.rate_hz == 500.0
    with pytest.raises(CollisionModelError, match="rdi validate"):
        CollisionThresholds.from_model(truth)


def test_detector_latches_names_the_joint_and_bounds_the_contact_link(truth):
    push = LinkPush(link=3, point_m=(0.1, 0.0, 0.05), force_n=(0.0, 30.0, 0.0), start_s=0.3, rise_s=0.01, hold_s=1.0)
    plant = SimulatedUR(robot="ur3", truth=truth, rate_hz=500, initial_q_rad=Q0, external_loads=[push])
    detector = CollisionDetector(truth, _thresholds(truth, 0.5), rate_hz=500)
    events = []
    for _ in range(400):
        s = plant.step()
        event = detector.update(s.timestamp_s, s.q_rad, s.qd_rad_s, s.current_a)
        if event is not None:
            events.append(event)
    assert len(events) == 1  # latched
    event = events[0]
    assert 0.3 <= event.time_s < 0.33
    expected = _point_jacobian(truth, Q0, 3, push.point_m).T @ np.array(push.force_n)
    assert event.joint in np.flatnonzero(np.abs(expected) > 0.5)
    assert event.contact_link_at_least <= 3  # a contact on link 3 moves no joint after 3
    assert abs(event.external_torque_nm[event.joint]) >= event.threshold_nm[event.joint]
    assert "joint" in event.describe() and event.as_dict()["joint"] == event.joint
    detector.reset()
    assert detector.event is None


def test_threshold_falls_from_a_slow_band_no_faster_than_the_observer(truth):
    th = CollisionThresholds(joint_names=truth.joint_names, velocity_edges_rad_s=np.array([0.1]),
                             threshold_nm=np.tile([2.0, 0.5], (6, 1)), observer_gain_per_s=50.0, rate_hz=500.0)
    detector = CollisionDetector(truth, th)
    q, i = Q0, np.zeros(6)
    detector.update(0.0, q, np.zeros(6), i)
    assert detector.threshold_nm[0] == 2.0
    detector.update(0.002, q, np.full(6, 0.5), i)
    assert detector.threshold_nm[0] == pytest.approx(0.5 + 1.5 * np.exp(-0.1))
    for k in range(2, 40):
        detector.update(0.002 * k, q, np.full(6, 0.5), i)
    assert detector.threshold_nm[0] == pytest.approx(0.5 + 1.5 * np.exp(-50 * 0.078), rel=1e-6)


def test_detector_refuses_thresholds_of_another_rate_or_robot(truth):
    with pytest.raises(CollisionModelError, match="125 Hz"):
        CollisionDetector(truth, _thresholds(truth, rate=500.0), rate_hz=125.0)
    other = CollisionThresholds(joint_names=tuple(f"j{k}" for k in range(6)), velocity_edges_rad_s=np.array([0.1]),
                                threshold_nm=np.ones((6, 2)), observer_gain_per_s=50.0, rate_hz=500.0)
    with pytest.raises(CollisionModelError, match="joints"):
        CollisionDetector(truth, other)
    assert default_observer_gain_per_s(500) == 50.0 and default_observer_gain_per_s(125) == 31.25


def test_monitor_stops_once_and_rearms_when_the_protective_stop_is_cleared(truth):
    detector = CollisionDetector(truth, _thresholds(truth, 0.5))
    seen = []
    monitor = CollisionMonitor(detector, on_collision=seen.append)
    q = Q0
    gravity = truth.robot_model()
    rm = gravity.model
    g = pin.computeGeneralizedGravity(rm, rm.createData(), q)
    hold = g / truth.drive_gains_nm_per_a  # the current that holds the arm: no external torque

    def state(t, extra_nm=0.0, safety=SafetyMode.NORMAL):
        current = hold - np.r_[extra_nm, np.zeros(5)] / truth.drive_gains_nm_per_a[0]
        return RobotState(timestamp_s=t, q_rad=q, qd_rad_s=np.zeros(6), current_a=current, safety_mode=int(safety))

    assert monitor(state(0.0)) is None
    reasons = [monitor(state(0.002 * k, 5.0)) for k in range(1, 20)]
    assert sum(r is not None for r in reasons) == 1 and "joint 0" in next(r for r in reasons if r)
    assert len(seen) == 1
    # the robot's protective stop, then cleared: the monitor starts again
    monitor(state(0.05, 5.0, SafetyMode.PROTECTIVE_STOP))
    assert monitor.event is not None
    monitor(state(0.06, 0.0))
    assert monitor.event is None
    report_only = CollisionMonitor(CollisionDetector(truth, _thresholds(truth, 0.5)), react=False)
    report_only(state(0.0))
    assert all(report_only(state(0.002 * k, 5.0)) is None for k in range(1, 20))
    assert report_only.event is not None


def test_observer_refuses_a_model_without_drive_gains(truth):
    # io/model_file: gains that were never identified are null (None), never a placeholder of 1.0
    with pytest.raises(CollisionModelError, match="no drive gains"):
        MomentumResidual(replace(truth, drive_gains_nm_per_a=None), gain_per_s=50.0)
    with pytest.raises(CollisionModelError, match="implausible"):
        MomentumResidual(replace(truth, drive_gains_nm_per_a=np.full(6, 0.01)), gain_per_s=50.0)


def test_a_collision_is_described_at_the_loops_time_or_the_stamps_clock_time():
    from robot_dynamics_id.control.collision import CollisionEvent

    fields = dict(joint=3, joint_name="wrist_1_joint", external_torque_nm=tuple(np.full(6, -0.23)),
                  threshold_nm=tuple(np.full(6, 0.2)), joints_over=(3,), contact_link_at_least=4)
    event = CollisionEvent(time_s=8.03, **fields)
    assert event.describe().startswith("collision at t = 8.030 s: joint 3 (wrist_1_joint) external torque -0.23 Nm")
    stamped = CollisionEvent(time_s=1795798769.316, **fields)  # a message stamp: seconds since 1970
    assert stamped.describe().startswith("collision at 16:59:29.316 UTC (stamp 1795798769.316 s): joint 3")
