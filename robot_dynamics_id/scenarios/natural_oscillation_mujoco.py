"""Natural-oscillation identification (seeds.md P1) on the MuJoCo UR3 plant in torque mode (a scenario).

:class:`MujocoVerticalPlaneArm` makes :class:`robot_dynamics_id.sim.plant.SimulatedUR`
look like the trial's plant protocol
(:class:`robot_dynamics_id.identification.natural_oscillation.TorqueControlledArm`) for the
vertical-plane pendulum of :mod:`robot_dynamics_id.identification.natural_oscillation_ur3`: the trial sees
only the shoulder-lift and elbow joints; the base and wrist joints are held at
the upright pose by a PD hold computed every control period, as a real
experiment on the arm would have to do (nothing locks joints on a UR).

The plant is commanded with ``direct_torque``, to which the simulated UR
controller adds its own nominal gravity torque (like UR's ``direct_torque``).
The trial's law therefore subtracts that compensation again
(``PushExperiment.plant_gravity_compensation`` =
:meth:`MujocoVerticalPlaneArm.controller_gravity_nm`); on a real UR the
controller's internal model is not known exactly, and whatever we get wrong
about it goes one-to-one into the identified gravity (measured by
:func:`controller_model_mismatch_bias`).

The plant has joint friction (P2 eq. 11 form). Coulomb friction of the UR3
(~1.5-2.2 N m on shoulder and elbow) is larger than the gravity residual a
1 % parameter error produces (~0.1 N m), so P1's open-loop law cannot find the
fall boundary on a rubbing arm;
:class:`~robot_dynamics_id.identification.natural_oscillation_ur3.FrictionCompensatedModel` adds a
friction model's torque to the law (our extension, not in P1), and
:func:`friction_sweep` measures the bias either way.

Also here: :func:`mujoco_truth` (a seeded perturbed truth, optionally without
friction), :func:`vertical_plane_truth_first_moments` (the lumped quantities the
method identifies, from a :class:`DynamicModel`) and
:func:`identify_mujoco_ur3` (the whole procedure on the simulated arm).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..dynamics.friction import FrictionParameters
from ..identification.natural_oscillation import PushExperiment
from ..identification.natural_oscillation_ur3 import (
    ACTIVE_JOINTS,
    UR3_UPRIGHT_Q_RAD,
    FrictionCompensatedModel,
    VerticalPlaneGravityModel,
    VerticalPlaneIdentification,
    active_joint_friction,
    identify_in_passes,
    reduced_vertical_plane_model,
    vertical_plane_first_moments,
)
from ..io.model_file import DynamicModel
from ..sim.excitation_presets import paper_prbs_excitation
from ..sim.experiment import run_experiment
from ..sim.plant import SimulatedUR
from ..sim.truth import controller_model as nominal_controller_model
from ..sim.truth import make_truth, nominal_friction

__all__ = [
    "MujocoIdentification",
    "MujocoVerticalPlaneArm",
    "default_mujoco_experiment",
    "identify_mujoco_ur3",
    "mujoco_report",
    "regressor_first_moments",
    "mujoco_truth",
    "vertical_plane_truth_first_moments",
]

#: PD hold of the joints not in the experiment: N m/rad and N m s/rad per joint (0-based index).
HOLD_GAINS_BY_JOINT = {0: (200.0, 6.0), 1: (400.0, 12.0), 2: (200.0, 6.0), 3: (60.0, 1.5), 4: (20.0, 0.3),
                       5: (10.0, 0.15)}
#: the hold gains of the default experiment (base, w1, w2, w3 held)
DEFAULT_HOLD_GAINS = tuple(HOLD_GAINS_BY_JOINT[j] for j in (0, 3, 4, 5))


def mujoco_truth(seed: int = 1, *, friction: bool = True, friction_scale: float = 1.0,
                 robot: str = "ur3") -> DynamicModel:
    """The seeded perturbed plant (:func:`robot_dynamics_id.sim.truth.make_truth`).

    ``friction=False`` replaces its friction by :meth:`FrictionParameters.zeros`;
    ``friction_scale`` scales the static, Coulomb, viscous and offset terms (for sweeps).
    """
    truth = make_truth(robot, seed)
    n = truth.n_joints
    if not friction:
        return dataclasses.replace(truth, friction=FrictionParameters.zeros(n))
    if friction_scale != 1.0:
        f = truth.friction
        scaled = dataclasses.replace(f, static_nm=f.static_nm * friction_scale, coulomb_nm=f.coulomb_nm * friction_scale,
                                     viscous_nm_s_per_rad=f.viscous_nm_s_per_rad * friction_scale,
                                     offset_nm=f.offset_nm * friction_scale)
        return dataclasses.replace(truth, friction=scaled)
    return truth


def vertical_plane_truth_first_moments(model: DynamicModel, upright_q_rad: np.ndarray = UR3_UPRIGHT_Q_RAD,
                                       active_joints: tuple[int, ...] = ACTIVE_JOINTS) -> np.ndarray:
    """(MX2, MY2, MX3, MY3, ...), kg m, of a :class:`DynamicModel` with the other joints locked at ``upright_q_rad``."""
    reduced = reduced_vertical_plane_model(model.robot_model().model, upright_q_rad, active_joints)
    return vertical_plane_first_moments(reduced, np.asarray(upright_q_rad, float)[list(active_joints)])


class MujocoVerticalPlaneArm:
    """The MuJoCo UR3 in ``direct_torque`` mode as a 2-joint torque-controlled plant (shoulder, elbow).

    ``reset(q, qd)`` puts the arm at the upright pose with the two active
    joints at ``q`` (2,) moving at ``qd`` (the push); ``apply_torque(tau)``
    sends ``tau`` (2,) on the active joints and a PD hold (gains
    ``hold_gains``, one (k_p, k_d) per held joint) on the others, through
    ``direct_torque`` — the plant adds its controller's nominal gravity to all
    six. ``step()`` advances one control period and returns the measured
    (noise-free unless ``noise``) active (q, qd). ``simulated_time_s`` counts
    the plant time of every trial (the experiment time a real arm would need,
    without the moves between trials).
    """

    def __init__(self, *, truth: DynamicModel, rate_hz: float = 500.0,
                 upright_q_rad: np.ndarray = UR3_UPRIGHT_Q_RAD,
                 active_joints: tuple[int, ...] = ACTIVE_JOINTS,
                 hold_gains: tuple[tuple[float, float], ...] | None = None,
                 noise: bool = False, noise_seed: int = 0,
                 controller_model: DynamicModel | None = None) -> None:
        self.upright_q_rad = np.asarray(upright_q_rad, float).copy()
        self.plant = SimulatedUR(robot=truth.robot, truth=truth, rate_hz=rate_hz, initial_q_rad=self.upright_q_rad,
                                 noise=noise, noise_seed=noise_seed, nominal_model=controller_model)
        n = self.plant.n_joints
        if self.upright_q_rad.shape != (n,):
            raise ValueError(f"upright_q_rad needs {n} joint angles, got shape {self.upright_q_rad.shape}")
        self.active = list(active_joints)
        self.held = [j for j in range(n) if j not in self.active]
        if hold_gains is None:
            hold_gains = tuple(HOLD_GAINS_BY_JOINT[j] for j in self.held)
        gains = np.asarray(hold_gains, float)
        if gains.shape != (len(self.held), 2) or np.any(gains < 0):
            raise ValueError(f"hold_gains needs one (k_p >= 0, k_d >= 0) pair per held joint {self.held}, "
                             f"got {hold_gains!r}")
        self.hold_kp, self.hold_kd = gains[:, 0], gains[:, 1]
        self.period_s = self.plant.period_s
        self.simulated_time_s = 0.0
        self.max_hold_error_rad = 0.0
        self._nominal = self.plant._nominal  # the controller's own model (what direct_torque adds)
        self._nominal_data = self._nominal.createData()
        self._q_full = self.upright_q_rad.copy()
        self._qd_full = np.zeros(n)

    @property
    def controller_model(self) -> DynamicModel:
        """The model the simulated UR controller compensates gravity with."""
        return self.plant.controller_model

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        q_full = self.upright_q_rad.copy()
        qd_full = np.zeros_like(q_full)
        q_full[self.active] = np.asarray(q, float)
        qd_full[self.active] = np.asarray(qd, float)
        self.plant.reset(q_full, qd_full)
        self._q_full, self._qd_full = q_full, qd_full

    def controller_gravity_nm(self, q_active: np.ndarray) -> np.ndarray:
        """The controller's nominal gravity on the active joints, held joints where they are now, N m."""
        q_full = self._q_full.copy()
        q_full[self.active] = np.asarray(q_active, float)
        g = pin.computeGeneralizedGravity(self._nominal, self._nominal_data, q_full)
        return np.asarray(g)[self.active]

    def apply_torque(self, tau_nm: np.ndarray) -> None:
        tau = np.zeros(self.plant.n_joints)
        tau[self.active] = np.asarray(tau_nm, float)
        held = self.held
        tau[held] = (self.hold_kp * (self.upright_q_rad[held] - self._q_full[held])
                     - self.hold_kd * self._qd_full[held])
        self.plant.direct_torque(tau)

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        state = self.plant.step()
        self.simulated_time_s += self.period_s
        self._q_full, self._qd_full = np.asarray(state.q_rad, float), np.asarray(state.qd_rad_s, float)
        err = float(np.max(np.abs(self._q_full[self.held] - self.upright_q_rad[self.held])))
        self.max_hold_error_rad = max(self.max_hold_error_rad, err)
        return self._q_full[self.active].copy(), self._qd_full[self.active].copy()


def default_mujoco_experiment(arm, *, push_rad_s: float = 0.05, max_excursion_rad: float = 0.5,
                              window_steps: int = 6000, stop_after_periods: int = 2,
                              gravity_compensation=None) -> PushExperiment:
    """Upright, a push on the elbow, the controller's gravity subtracted (it is added back by direct_torque).

    ``arm`` has ``upright_q_rad`` and ``active``; ``gravity_compensation`` defaults to
    ``arm.controller_gravity_nm`` (:class:`MujocoVerticalPlaneArm`).
    """
    up = arm.upright_q_rad[arm.active]
    push = np.zeros(up.size)
    push[1] = push_rad_s  # on the elbow
    return PushExperiment(up, push, window_steps=window_steps,
                          max_excursion_rad=max_excursion_rad, stop_after_periods=stop_after_periods,
                          plant_gravity_compensation=gravity_compensation or arm.controller_gravity_nm)


@dataclass
class MujocoIdentification:
    """Result of :func:`identify_mujoco_ur3`: estimate, truth, errors and the experiment's cost."""

    identification: VerticalPlaneIdentification
    truth_first_moments_kgm: np.ndarray      # (MX2, MY2, MX3, MY3[, MX4, MY4])
    prior_first_moments_kgm: np.ndarray
    simulated_time_s: float                  # total plant time of all trials
    max_hold_error_rad: float

    @property
    def first_moments_kgm(self) -> np.ndarray:
        return self.identification.first_moments_kgm

    @property
    def relative_error_along(self) -> np.ndarray:
        """Relative errors of MX2, MX3, ... (P1's "m l" of each group)."""
        p, t = self.first_moments_kgm, self.truth_first_moments_kgm
        return (p[0::2] - t[0::2]) / t[0::2]

    @property
    def error_percent_of_group(self) -> np.ndarray:
        """All four errors in % of |MX| of their group (MY is small, so relative MY errors mislead)."""
        p, t = self.first_moments_kgm, self.truth_first_moments_kgm
        return 100 * (p - t) / np.repeat(np.abs(t[0::2]), 2)


def identify_mujoco_ur3(truth: DynamicModel, *, friction_compensation: FrictionParameters | None = None,
                        push_rad_s: float = 0.05, max_excursion_rad: float = 0.5, tolerance: float = 0.004,
                        low: float = 0.8, high: float = 1.25, max_trials: int = 15, rate_hz: float = 500.0,
                        controller_model: DynamicModel | None = None,
                        subtracted_gravity_model: DynamicModel | None = None,
                        noise: bool = False, passes: int = 2, coarse_tolerance: float = 0.015,
                        fine_window_s: float = 30.0, active_joints: tuple[int, ...] = ACTIVE_JOINTS
                        ) -> MujocoIdentification:
    """P1 on the MuJoCo UR3 (``active_joints``: shoulder + elbow by default, ``ACTIVE_JOINTS_FULL`` adds wrist 1;
    the other joints PD-held), prior = the controller's nominal model.

    ``friction_compensation`` (six joints) adds that friction model to the law.
    ``controller_model`` is what the simulated UR controller adds in
    ``direct_torque`` (default its nominal model); ``subtracted_gravity_model``
    is what we believe it adds (default: the same, i.e. known exactly).
    ``passes`` = 2 runs a coarse search (``coarse_tolerance``) and then a fine
    one (``tolerance``, trials up to ``fine_window_s``) in a narrow bracket around
    it; 1 runs the coarse only.
    Raises ValueError (from the search) when no fall boundary is found, e.g.
    because friction holds an under-compensated arm.
    """
    arm = MujocoVerticalPlaneArm(truth=truth, rate_hz=rate_hz, controller_model=controller_model, noise=noise,
                                 active_joints=active_joints)
    prior = nominal_controller_model(truth.robot)
    up = arm.upright_q_rad
    nominal_reduced = reduced_vertical_plane_model(prior.robot_model().model, up, active_joints)
    model = VerticalPlaneGravityModel(nominal_reduced, up[arm.active])
    law = model if friction_compensation is None else FrictionCompensatedModel(
        model, active_joint_friction(friction_compensation, arm.active))
    experiment = default_mujoco_experiment(arm, push_rad_s=push_rad_s, max_excursion_rad=max_excursion_rad)
    if subtracted_gravity_model is not None:
        believed = subtracted_gravity_model.robot_model().model
        data = believed.createData()

        def believed_gravity(q_active: np.ndarray) -> np.ndarray:
            q_full = arm._q_full.copy()
            q_full[arm.active] = q_active
            return np.asarray(pin.computeGeneralizedGravity(believed, data, q_full))[arm.active]

        experiment = dataclasses.replace(experiment, plant_gravity_compensation=believed_gravity)
    result = identify_in_passes(arm, law, experiment, passes=passes, low=low, high=high,
                                coarse_tolerance=coarse_tolerance, tolerance=tolerance, fine_window_s=fine_window_s,
                                max_trials=max_trials, push_group_under_test=len(active_joints) > 2)
    return MujocoIdentification(result, vertical_plane_truth_first_moments(truth, up, active_joints),
                                model.first_moments_kgm.copy(),
                                arm.simulated_time_s, arm.max_hold_error_rad)


def regressor_first_moments(truth: DynamicModel, *, duration_s: float = 60.0, seed: int = 0,
                            known_drive_gains: bool = True) -> tuple[np.ndarray, float]:
    """The same lumped quantities from the regressor identifier (pipeline.identify) on a simulated
    PRBS excitation (seeds.md P3) of the same MuJoCo plant; returns (MX2, MY2, MX3, MY3) and the
    experiment's duration in s. ``known_drive_gains=False`` converts currents with the nominal gains
    (config/ur3.yaml), as on an arm whose gains were not identified."""
    from ..identification.pipeline import identify

    trajectory = paper_prbs_excitation(truth.robot, duration_s=duration_s, seed=seed)
    experiment = run_experiment(trajectory, truth=truth, configured_drive_gains_nm_per_a=(
        truth.drive_gains_nm_per_a if known_drive_gains else None))
    result = identify(experiment.recording, truth.robot)
    t = np.asarray(experiment.recording.time_s, float)
    return vertical_plane_truth_first_moments(result.model), float(t[-1] - t[0])


def mujoco_report(*, seed: int = 1, with_friction_cases: bool = True, with_regressor: bool = True
                  ) -> tuple[list[str], dict]:
    """P1 on the MuJoCo UR3 in torque mode: frictionless, with friction (raw / compensated), vs the regressor."""
    def pct(p: np.ndarray, t: np.ndarray) -> np.ndarray:
        return 100 * (p - t) / np.abs(t[[0, 0, 2, 2]])

    lines = [f"UR3, MuJoCo plant in direct_torque (controller adds its nominal gravity), truth make_truth(seed {seed}),"
             " 500 Hz, base + wrist PD-held; errors of (MX2, MY2, MX3, MY3) in % of |MX| of the group:"]
    nums: dict = {}
    cases = [("no friction", mujoco_truth(seed, friction=False), {})]
    if with_friction_cases:
        with_friction = mujoco_truth(seed)
        cases += [("plant friction, P1 law (no compensation)", with_friction, {}),
                  ("plant friction, true friction fed forward", with_friction,
                   {"friction_compensation": with_friction.friction}),
                  ("plant friction, nominal friction fed forward", with_friction,
                   {"friction_compensation": nominal_friction("ur3")})]
    for label, truth, kw in cases:
        try:
            r = identify_mujoco_ur3(truth, **kw)
            e = r.error_percent_of_group
            nums[label] = {"error_percent": e.tolist(), "trials": r.identification.n_trials,
                           "simulated_s": r.simulated_time_s}
            lines.append(f"  {label}: {np.round(e, 2).tolist()}  ({r.identification.n_trials} trials, "
                         f"{r.simulated_time_s:.0f} s of trials)")
        except ValueError as exc:
            nums[label] = None
            lines.append(f"  {label}: no fall boundary found ({exc})")
    if with_regressor:
        truth = mujoco_truth(seed, friction=False)
        tp = vertical_plane_truth_first_moments(truth)
        for known in (True, False):
            est, duration = regressor_first_moments(truth, known_drive_gains=known)
            e = pct(est, tp)
            label = f"regressor, PRBS excitation, drive gains {'known' if known else 'nominal (unidentified)'}"
            nums[label] = {"error_percent": e.tolist(), "experiment_s": duration}
            lines.append(f"  {label}: {np.round(e, 2).tolist()}  ({duration:.0f} s experiment)")
    return lines, nums
