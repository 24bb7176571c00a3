"""``rdi excite plan --kind payload`` -> simulated run with a payload -> bag -> ``rdi payload`` -> payload.yaml."""

from dataclasses import replace

import numpy as np
import pytest
import yaml

from robot_dynamics_id.cli import main
from robot_dynamics_id.dynamics.payload import payload_parameters, payload_regressor
from robot_dynamics_id.excitation.trajectory_file import load_trajectory
from robot_dynamics_id.identification.synthetic import inverse_dynamics
from robot_dynamics_id.io.recording import Recording
from robot_dynamics_id.io.ur_csv import write_ur_csv
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.experiment_bag import write_experiment_bag

MASS, COM = 1.3, (0.02, -0.01, 0.05)
CURRENT_LABEL = "motor current x drive gains (from the simulated truth) Nm/A"


def test_plan_simulate_and_identify_a_payload_from_a_bag(tmp_path, capsys):
    plan = tmp_path / "payload_excitation.yaml"
    assert main(["excite", "plan", "--kind", "payload", "--robot", "ur3", "--starts", "1", "--max-iterations", "25",
                 "--rate", "500", "--out", str(plan)]) == 0
    trajectory = load_trajectory(plan)
    assert trajectory.duration_s == 20.0
    assert np.ptp(trajectory.position_rad[:, :3], axis=0).max() < 1e-12  # the arm stays still
    assert np.ptp(trajectory.position_rad[:, 3:], axis=0).min() > 0.5  # every wrist joint moves
    assert "payload regressor" in capsys.readouterr().out

    result = run_experiment(trajectory, robot="ur3", truth_seed=7, noise_seed=2, payload_kg=MASS, payload_com_m=COM)
    bag = write_experiment_bag(tmp_path / "bag", result)
    # The arm model: here the simulated arm's truth (the benchmark uses an identified one), as fitted to currents.
    arm = tmp_path / "arm.yaml"
    replace(result.truth, provenance={"torque": CURRENT_LABEL}).save(arm)

    out = tmp_path / "payload.yaml"
    code = main(["payload", "--model", str(arm), "--data", str(bag), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ros2 service call /io_and_status_controller/set_payload" in captured.out
    data = yaml.safe_load(out.read_text())
    assert data["schema"] == "robot_dynamics_id/payload/1" and data["frame"] == "tool0"
    assert data["mass_kg"] == pytest.approx(MASS, rel=0.02)
    np.testing.assert_allclose(data["com_m"], COM, atol=0.005)
    assert set(data["inertia_about_com_kgm2"]) == {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"}
    assert data["provenance"]["torque"].startswith("motor current x drive gains")
    assert data["set_payload"]["ur_rtde"].startswith("rtde_control.setPayload(1.3")
    assert not any("nominal drive gains" in w for w in data["warnings"])
    # an arm model identified with the assumed (nominal) gains: the mass carries their error, said
    nominal_arm = tmp_path / "arm_nominal_gains.yaml"
    replace(result.truth, drive_gains_nm_per_a=np.array([10.0, 10.0, 8.0, 6.0, 6.0, 6.0]),
            provenance={"torque": CURRENT_LABEL}).save(nominal_arm)
    main(["payload", "--model", str(nominal_arm), "--data", str(bag), "--out", str(tmp_path / "p_nominal.yaml")])
    assert "the arm model was identified with ur3's nominal drive gains (10, 10, 8, 6, 6, 6 Nm/A, assumed, not " \
           "calibrated): the payload mass scales with their error" in capsys.readouterr().err

    # Torque measured differently from the arm model's: refused, naming the fix.
    assert main(["payload", "--model", str(arm), "--data", str(bag), "--out", str(out),
                 "--torque-source", "effort"]) == 1
    assert "--torque-source current" in capsys.readouterr().err
    # Another robot or other gains than the arm model's: the payload would absorb the mismatch; refused.
    assert main(["payload", "--model", str(arm), "--data", str(bag), "--out", str(out), "--robot", "ur5e"]) == 1
    assert "--robot ur5e contradicts the arm model" in capsys.readouterr().err
    assert main(["payload", "--model", str(arm), "--data", str(bag), "--out", str(out),
                 "--drive-gains", "10,10,8,6,6,6"]) == 1
    assert "differ from the gains the arm model was identified with" in capsys.readouterr().err

    # --out: never an input, never into the bag, never a file that is not an earlier payload file; checked
    # before the fit, nothing written
    arm_text, status_file = arm.read_text(), tmp_path / "notes.txt"
    status_file.write_text("lab notes\n")
    for target, phrase in ((arm, "would overwrite the input"), (bag / "payload.yaml", "points into the input data"),
                           (tmp_path / "missing" / "p.yaml", "does not exist; create it first"),
                           (status_file, "exists and is not an earlier payload file")):
        assert main(["payload", "--model", str(arm), "--data", str(bag), "--out", str(target)]) == 1
        assert phrase in capsys.readouterr().err, target
    assert arm.read_text() == arm_text and status_file.read_text() == "lab notes\n"
    assert not (bag / "payload.yaml").exists() and not (tmp_path / "missing").exists()
    assert data["status"] == "ok"

    # The arm model with the identified payload predicts the run with it mounted; without it the data check
    # refuses (the torques do not fit the bare arm) and, let through, the wrist fits drop.
    assert main(["validate", "--model", str(arm), "--data", str(bag), "--out", str(tmp_path / "v_pay"),
                 "--payload", str(out)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert f"payload: {data['mass_kg']:.3f} kg" in printed and "moving-sample RRE per joint (%): not moving" in printed
    with_payload = yaml.safe_load((tmp_path / "v_pay" / "metrics.json").read_text())
    assert with_payload["payload"]["file"] == str(out) and min(with_payload["fit_percent"][3:]) > 90
    assert main(["validate", "--model", str(arm), "--data", str(bag), "--out", str(tmp_path / "v_bare")]) == 1
    assert "The torques do not fit the model's robot ur3" in capsys.readouterr().err
    assert main(["validate", "--model", str(arm), "--data", str(bag), "--out", str(tmp_path / "v_bare"),
                 "--skip-robot-check"]) in (0, 3)
    capsys.readouterr()
    bare = yaml.safe_load((tmp_path / "v_bare" / "metrics.json").read_text())
    assert max(bare["fit_percent"][3:]) < min(with_payload["fit_percent"][3:]) - 20
    # a declared payload the run does not carry (here twice the mounted one): the message names that cause too
    heavy = tmp_path / "heavy.yaml"
    heavy.write_text(yaml.safe_dump({**data, "mass_kg": 2 * data["mass_kg"]}))
    assert main(["validate", "--model", str(arm), "--data", str(bag), "--out", str(tmp_path / "v_heavy"),
                 "--payload", str(heavy)]) == 3
    err = capsys.readouterr().err
    # the likeliest cause first, in the warnings and in the verdict (another arm's model came first before)
    hint = "warning: the torques do not fit the arm with the declared payload (2.6 kg, --payload): is it the one " \
           "mounted in these data?"
    assert hint in err and err.index(hint) < err.index("The torques do not fit the model's robot"), err
    verdict = err[err.index("DOUBTFUL RESULT"):]
    assert "declared payload (2.6 kg, --payload): is it the one mounted" in verdict.split("If the payload is right")[0]


def test_doubtful_estimate_exits_3_and_still_writes_the_file(tmp_path, capsys):
    """Two seconds of small, slow wrist motion drowned in current noise: mass and CoM are not determined."""
    from robot_dynamics_id.sim.truth import make_truth

    truth = replace(make_truth("ur3", 2), provenance={"torque": CURRENT_LABEL})
    t = np.arange(0, 2.0, 1 / 125)
    q = np.tile([0.0, -1.57, 1.57, -1.57, -1.57, 0.0], (t.size, 1))
    q[:, 3:] += 0.05 * np.sin(2 * np.pi * 0.5 * t)[:, None]
    qd = np.zeros_like(q)
    qd[:, 3:] = 0.05 * 2 * np.pi * 0.5 * np.cos(2 * np.pi * 0.5 * t)[:, None]
    qdd = np.gradient(qd, t, axis=0)
    robot = truth.robot_model()
    payload = payload_parameters(1.0, (0.0, 0.0, 0.05))
    tau = inverse_dynamics(truth, q, qd, qdd) + (payload_regressor(robot, q, qd, qdd) @ payload).reshape(-1, 6)
    current = tau / truth.drive_gains_nm_per_a + np.random.default_rng(0).normal(size=tau.shape) * 0.3
    recording = Recording(joint_names=tuple(truth.joint_names), time_s=t, q_rad=q, qd_rad_s=qd, current_a=current)
    csv = tmp_path / "run.csv"
    write_ur_csv(csv, recording)
    truth.save(tmp_path / "arm.yaml")
    good = {"schema": "robot_dynamics_id/payload/1", "status": "ok", "mass_kg": 1.0, "com_m": [0.0, 0.0, 0.05],
            "realisable_inertia_about_com_kgm2": dict.fromkeys(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"), 0.0),
            "warnings": []}
    (tmp_path / "payload.yaml").write_text(yaml.safe_dump(good))
    code = main(["payload", "--model", str(tmp_path / "arm.yaml"), "--data", str(csv), "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 3, captured.err
    assert "doubtful" in captured.err and "setPayload" not in captured.out  # no set-payload call offered
    # a doubtful result never replaces a good one: it is written beside it
    assert yaml.safe_load((tmp_path / "payload.yaml").read_text()) == good
    written = yaml.safe_load((tmp_path / "payload.doubtful.yaml").read_text())
    assert written["status"] == "doubtful" and written["warnings"]
    assert "payload.doubtful.yaml (status: doubtful)" in captured.out


def test_a_mass_beyond_the_rating_or_of_an_empty_flange_and_another_arms_pose_are_doubtful():
    from types import SimpleNamespace

    from robot_dynamics_id.identification.payload_job import DOUBTFUL, _arm_checks
    from robot_dynamics_id.io.payload_file import DOUBTFUL_WARNINGS
    from robot_dynamics_id.robots.model import load_robot

    ur3, still = load_robot("ur3"), SimpleNamespace(tcp_pose=None)
    assert _arm_checks(SimpleNamespace(mass_kg=1.3), ur3, still) == []
    (heavy,) = _arm_checks(SimpleNamespace(mass_kg=6.485), ur3, still)  # a UR5e's run through a UR3 model
    assert heavy.startswith(DOUBTFUL) and "rated payload (6.49 > 3 kg)" in heavy
    (empty,) = _arm_checks(SimpleNamespace(mass_kg=0.0065), ur3, still)  # nothing mounted, the model's errors
    assert empty.startswith(DOUBTFUL) and "(6.5 g): is the payload mounted?" in empty
    q = np.column_stack([0.8 * np.sin(0.3 * (j + 1) * np.linspace(0, 30, 600) + j) for j in range(6)])
    rotations, positions = load_robot("ur5e").tool_poses(q)
    from scipy.spatial.transform import Rotation

    pose = np.hstack([positions, Rotation.from_matrix(rotations).as_rotvec()])
    moved, other = _arm_checks(SimpleNamespace(mass_kg=1.3), ur3, SimpleNamespace(q_rad=q, tcp_pose=pose))
    assert other.startswith(DOUBTFUL) and "the recorded TCP pose is ur5e's, not ur3's" in other
    # the arm's full excitation, not the wrist-only one: the arm model's big-joint errors go into the payload
    # (advice, not doubt: with a good arm model the estimate holds)
    assert "the base, shoulder or elbow moved during the payload run (joint 0 (1.60 rad)" in moved
    assert not moved.startswith(DOUBTFUL) and "rdi excite plan --kind payload" in moved
    q_wrist = q.copy()
    q_wrist[:, :3] = q[0, :3] + 0.005 * np.sin(np.arange(len(q)))[:, None]  # held still: servo noise only
    assert _arm_checks(SimpleNamespace(mass_kg=1.3), ur3, SimpleNamespace(q_rad=q_wrist, tcp_pose=None)) == []
    # an empty flange seen through a model with nominal gains (107 g on the README's flow): noted, not doubtful
    (light,) = _arm_checks(SimpleNamespace(mass_kg=0.107), ur3, still)
    assert not light.startswith(DOUBTFUL) and "a light payload (107 g" in light and "if nothing is mounted" in light
    assert DOUBTFUL == DOUBTFUL_WARNINGS  # the payload file reader knows every doubtful warning


def test_an_arm_model_that_is_not_physically_consistent_is_refused_before_the_data_is_read(tmp_path, capsys):
    """`rdi payload` with an --method ols model printed set-payload calls that rdi validate --payload and the
    controller then refused ("cannot carry a payload"): refused here too, with the same fix."""
    from robot_dynamics_id.sim.truth import make_truth

    truth = make_truth("ur3", 2)
    masses = truth.link_mass_kg.copy()
    masses[4] = -0.2  # what an unconstrained fit can give a link
    arm = tmp_path / "arm_ols.yaml"
    replace(truth, link_mass_kg=masses, provenance={"torque": CURRENT_LABEL, "method": "ols (base: ols)"}).save(arm)
    code = main(["payload", "--model", str(arm), "--data", str(tmp_path / "not_read.csv"), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "the arm model's links [4] are not physically consistent (identified with --method ols" \
        in err and "identify the arm with --method consistent (the default)" in err, err
    assert not (tmp_path / "payload.yaml").exists()
