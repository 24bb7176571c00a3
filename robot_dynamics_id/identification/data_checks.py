"""Does the data fit the robot (and the torque source)? Checks that turn silent guesses into messages.

Run by ``rdi identify``, ``rdi validate`` and the identifier node before any
result is written:

* **joint count** of the data vs the robot;
* **torques beyond the robot's rating**: a joint torque above the rated torque
  of ``--robot`` (warning), or above twice it (error) — wrong gains or another
  robot;
* **torque scale against the nominal model** (:func:`gravity_scale`): per joint,
  least squares of the measured torque on the nominal model's gravity torque
  g(q), its inertial/Coriolis torque tau_nom - g, and friction-like columns
  (tanh(q̇ / 0.02 rad/s), q̇, 1)::

      tau_meas_j ~ a_g g_j(q) + a_i (tau_nom - g)_j(q, q̇, q̈) + f_c tanh(q̇_j / 0.02) + f_v q̇_j + o_j

  a_g is ~1 for the joint torque of the robot the nominal model describes (link
  masses within tens of percent); ~1/K (K the drive gain, ~10 Nm/A) for motor
  current read as torque; ~0 for UR's gravity-compensated
  ``actual_current_as_torque``; several times 1 for a recording of a larger UR
  checked against a smaller one (gravity torque grows with mass x reach). Only
  joints whose nominal gravity torque varies by at least
  :data:`MIN_GRAVITY_SPREAD_OF_RATING` of their rating over the recording carry
  the check (on a UR: shoulder and elbow, often wrist 1); the median of their
  a_g is the data's scale.
  Outside :data:`SCALE_OK` is a warning, outside :data:`SCALE_PLAUSIBLE` an
  error naming the likely cause: the known UR whose nominal model gives a scale
  nearest 1 (:func:`likely_robots`), gains that are off (the implied gains), a
  current read as torque, or a gravity-compensated torque. A payload at the
  flange raises the scale too: the message says so.
* **the mount** (:func:`gravity_fit`): gravity torque is linear in the gravity
  vector, so the same least squares with the nominal model's gravity torque
  for unit gravity along each base axis, G_x, G_y, G_z, and the gravity torque
  of an unknown payload on the last link (P_j(q, u) phi: its mass and first
  moments phi, so that a tool does not read as a tilt), shared by all joints,
  in place of a_g g_j::

      tau_meas_j ~ s (u_x G_x,j + u_y G_y,j + u_z G_z,j)(q) + P_j(q, u) phi + a_i,j (tau_nom - g)_j
                   + friction-like_j

  — linear for a given direction u, which is searched on the sphere (variable
  projection) — estimates the direction of gravity in the base frame. More than
  :data:`MOUNT_ANGLE_WARN_DEG` from the gravity the robot model assumes (a
  floor mount unless ``--gravity`` says otherwise), with the assumed direction
  leaving at least :data:`MOUNT_RESIDUAL_RATIO_WARN` times the best one's
  residual, is a warning naming the vector to pass; more than
  :data:`MOUNT_ANGLE_DOUBTFUL_DEG` and :data:`MOUNT_RESIDUAL_RATIO_DOUBTFUL`
  also makes the result of ``rdi identify`` and ``rdi validate`` doubtful
  (exit 3): a tilted, wall or ceiling mount fitted with floor gravity gives a
  model that is wrong wherever the arm's pose differs from the data's.
* **identified masses far from the nominal ones** (:func:`mass_warnings`).

Errors raise :class:`DataCheckError`; warnings are returned as strings. The
checks use only the nominal model of the named robot (robots/), so they work for
any UR and any recording rate; ``skip_robot_check`` turns the scale and rating
errors into warnings for an arm that really differs from its nominal model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
import scipy.optimize

from ..robots.description import ROBOT_NAMES
from ..robots.model import RobotModel, load_robot
from ..robots.priors import foreign_nominal_gains

__all__ = ["DataCheckError", "MASS_RATIO_PLAUSIBLE", "MIN_GRAVITY_SPREAD_OF_RATING", "MOUNT_ANGLE_DOUBTFUL_DEG",
           "MOUNT_ANGLE_WARN_DEG", "MOUNT_RESIDUAL_RATIO_DOUBTFUL", "MOUNT_RESIDUAL_RATIO_WARN", "SCALE_OK",
           "SCALE_PLAUSIBLE", "TorqueScale",
           "check_joint_count", "check_torque_fits_robot", "gravity_direction", "gravity_fit", "gravity_scale",
           "likely_robots", "link_mass_notes", "loaded_arm_notes", "mass_warnings", "mount_check", "mount_problems"]

#: a_g within this band: the data fit the robot's nominal model (mass priors are rough; a light tool is fine)
SCALE_OK = (0.6, 1.7)
#: another UR's a_g within this band: the data are that robot's (nominal models are within ~10-20 % of an arm)
SCALE_CLOSE = (0.8, 1.25)
#: a_g outside this band is refused (another robot, currents read as torque, wrong gains, gravity-compensated).
#: The upper bound lies above what each UR's rated payload at the flange can add to its nominal gravity torque
#: (least squares over random poses of the nominal models: scale 1.7 to 2.2), so a loaded arm is warned about,
#: not refused; the neighbouring UR sizes differ by 2x or more.
SCALE_PLAUSIBLE = (0.4, 2.5)
#: a_g above this (within SCALE_OK) on data to identify the bare arm from: a tool mounted? Above the bare arms'
#: spread (their mass spread times the nominal drive gains' error), below a rated payload's effect
#: (benchmarks/bench_loaded_arm_scale.py measures both)
LOADED_SCALE = 1.3
#: a_g below this (within SCALE_OK): lighter than a bare arm of its type (bare arms 0.90-1.15 with the nominal
#: gains, benchmarks/bench_loaded_arm_scale.py): drive gains too low by about that factor, or the torque's unit
LIGHT_SCALE = 0.8
#: checked joints' a_g this many times apart (one joint against the median of all checked, or two against each
#: other): warning naming the drive gain
JOINT_SCALE_SPREAD = 1.5
#: a_g below this on every checked joint while the inertial torque is seen: gravity-compensated torque
GRAVITY_COMPENSATED_SCALE = 0.15
#: a joint carries the scale check when its nominal gravity torque spans at least this fraction of its rating
MIN_GRAVITY_SPREAD_OF_RATING = 0.05
#: the per-joint scale fit leaves out a joint's rows at rest (|qd| below this, rad/s: the moving threshold of the
#: metrics) while at least MIN_MOVING_FRACTION of the rows move and keep half the gravity torque's spread
STANDSTILL_RAD_S = 0.02
MIN_MOVING_FRACTION = 0.2
#: samples used for the check (evenly spread; the check needs the shape of the motion, not every sample)
MAX_CHECK_SAMPLES = 3000
#: identified total mass of links 2..n outside this ratio of the nominal: warning
MASS_RATIO_OK = (0.5, 2.0)
#: ... outside this one: the result is doubtful. No UR's rated payload adds more than ~0.7x its links' mass
#: (UR3: 3 kg on links 2-6 of 6.6 kg), and no arm of the family weighs less than half its nominal model
MASS_RATIO_PLAUSIBLE = (0.4, 2.5)
#: the data's gravity direction this far from the model's (degrees): warning naming --gravity. On floor-mounted
#: arms the estimate strays by a few degrees (nominal inertials off the truth, friction the check does not model;
#: benchmarks/bench_identification_mount.py), while a tilt of this size fitted as a floor mount already spoils the
#: base joint's model (its torque holds no gravity on a floor, so the tilt's gravity torque is all error).
MOUNT_ANGLE_WARN_DEG = 5.0
#: ... and this far: the result is doubtful (``rdi identify``/``rdi validate`` exit 3)
MOUNT_ANGLE_DOUBTFUL_DEG = 10.0
#: ... each only when the model's own direction leaves at least this much more residual than the data's: where
#: the motion shows the mount poorly (few poses, as in a point-to-point run) the best direction wanders in a
#: flat valley, and what the fit cannot explain is not the mount
MOUNT_RESIDUAL_RATIO_WARN = 1.10
MOUNT_RESIDUAL_RATIO_DOUBTFUL = 1.25


class DataCheckError(ValueError):
    """The data do not fit the robot or the torque source; the message names both and the fix."""


@dataclass(frozen=True)
class TorqueScale:
    """Result of :func:`gravity_scale` for one robot model."""

    robot: str
    #: per joint: gravity coefficient a_g (NaN where the joint does not carry the check)
    gravity_coefficient: np.ndarray
    #: per joint: inertial coefficient a_i (NaN where the joint does not carry the check)
    inertial_coefficient: np.ndarray
    #: joints that carry the check
    checked: np.ndarray
    #: angle between the data's gravity direction and the model's (degrees; NaN: not seen in the data)
    gravity_angle_deg: float = float("nan")
    #: residual with the model's gravity direction / with the data's (:func:`gravity_fit`; NaN: not seen)
    gravity_residual_ratio: float = float("nan")
    #: another built-in UR whose nominal model the torques fit (within :data:`SCALE_CLOSE`) when this robot's does
    #: not, or whose kinematics the recorded TCP pose fits (not a twin's); None otherwise, or when the check was
    #: overridden (--skip-robot-check)
    fits_other_robot: str | None = None
    #: why a result from these torques is doubtful though not refused (another UR fits them or the TCP pose, or they
    #: are below what this robot holds even without a payload); None when plausible or overridden
    doubtful_reason: str | None = None

    @property
    def mount_differs(self) -> bool:
        """Whether the data's gravity is more than :data:`MOUNT_ANGLE_DOUBTFUL_DEG` from the model's and explains
        at least :data:`MOUNT_RESIDUAL_RATIO_DOUBTFUL` of the residual."""
        return bool(self.gravity_angle_deg > MOUNT_ANGLE_DOUBTFUL_DEG
                    and self.gravity_residual_ratio >= MOUNT_RESIDUAL_RATIO_DOUBTFUL)

    @property
    def scale(self) -> float:
        """Median a_g over the checked joints (NaN when none carries the check)."""
        if not np.any(self.checked):
            return float("nan")
        return float(np.median(self.gravity_coefficient[self.checked]))

    @property
    def inertial_scale(self) -> float:
        if not np.any(self.checked):
            return float("nan")
        return float(np.median(self.inertial_coefficient[self.checked]))


def check_joint_count(n_data: int, robot: RobotModel, what: str = "the data") -> None:
    """Refuse data whose joint count differs from the robot's."""
    if n_data != robot.n_joints:
        raise DataCheckError(f"{what} hold {n_data} joints but {robot.name} has {robot.n_joints}: pass the robot the "
                             "data were recorded on (--robot)")


def _subsample(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, MAX_CHECK_SAMPLES)).round().astype(int))


def gravity_scale(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, torque_nm) -> TorqueScale:
    """Per-joint gravity and inertial coefficients of ``torque_nm`` on ``robot``'s nominal model (module doc)."""
    q, qd, qdd, tau = (np.atleast_2d(np.asarray(x, float)) for x in (q_rad, qd_rad_s, qdd_rad_s2, torque_nm))
    n = robot.n_joints
    if tau.shape[1] != n or q.shape[1] != n:
        raise DataCheckError(f"the data hold {tau.shape[1]} joints but {robot.name} has {n}")
    idx = _subsample(q.shape[0])
    model = robot.model
    data = model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model, data, q[k]) for k in idx])
    total = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in idx])
    inertial = total - gravity
    a_g = np.full(n, np.nan)
    a_i = np.full(n, np.nan)
    spread = np.ptp(gravity, axis=0)
    checked = spread >= MIN_GRAVITY_SPREAD_OF_RATING * np.asarray(robot.torque_limit_nm, float)
    for j in np.flatnonzero(checked):
        # A joint at rest holds a torque its friction terms cannot tell (presliding: the sign of the last motion,
        # any size up to the static level): its rows are left out when the moving ones suffice.
        rows = np.abs(qd[idx, j]) >= STANDSTILL_RAD_S
        if rows.sum() < MIN_MOVING_FRACTION * idx.size or np.ptp(gravity[rows, j]) < 0.5 * spread[j]:
            rows = np.ones(idx.size, bool)
        columns = np.column_stack([gravity[rows, j], inertial[rows, j], np.tanh(qd[idx[rows], j] / 0.02),
                                   qd[idx[rows], j], np.ones(rows.sum())])
        norms = np.linalg.norm(columns, axis=0)
        norms[norms == 0] = 1.0
        coef, *_ = np.linalg.lstsq(columns / norms, tau[idx[rows], j], rcond=None)
        coef = coef / norms
        a_g[j], a_i[j] = coef[0], coef[1]
    return TorqueScale(robot=robot.name, gravity_coefficient=a_g, inertial_coefficient=a_i, checked=checked)


def _unit_vector(angles) -> np.ndarray:
    theta, phi = angles
    return np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])


def _angles(u: np.ndarray) -> list[float]:
    u = u / np.linalg.norm(u)
    return [float(np.arccos(np.clip(u[2], -1.0, 1.0))), float(np.arctan2(u[1], u[0]))]


def gravity_direction(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, torque_nm) -> np.ndarray | None:
    """The direction of gravity in the base frame that fits ``torque_nm`` best (unit 3-vector; module doc), or
    None when the data do not show it (:func:`gravity_fit`)."""
    return gravity_fit(robot, q_rad, qd_rad_s, qdd_rad_s2, torque_nm)[0]


def gravity_fit(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, torque_nm) -> tuple[np.ndarray | None, float]:
    """(the direction of gravity in the base frame that fits ``torque_nm`` best, the weighted residual the
    model's own direction leaves divided by the best one's: how much of what the model cannot explain the
    mount explains). The direction is None (and the ratio NaN) when the data do not show it (the fitted gravity torque is small against the nominal one: currents
    read as torque with no scale, gravity-compensated torque, or a motion that barely changes gravity torque).

    The direction, not the size: a drive gain or a mass off by some percent scales the gravity torque, it does
    not turn it. A payload (a tool, a gripper) is not in the nominal model and would turn it: for each trial
    direction u the fit also holds an unknown mass on the last link (its mass and first moments, linear for a
    given u), and u minimises the weighted residual (variable projection: the linear unknowns solved for each
    u, u searched on the sphere from the payload-free linear estimate and from the model's direction)."""
    q, qd, qdd, tau = (np.atleast_2d(np.asarray(x, float)) for x in (q_rad, qd_rad_s, qdd_rad_s2, torque_nm))
    n = robot.n_joints
    idx = _subsample(q.shape[0])
    m = idx.size
    rating = np.asarray(robot.torque_limit_nm, float)
    model = robot.model.copy()
    data = model.createData()
    last = slice(10 * (n - 1), 10 * (n - 1) + 4)  # the last link's mass and first moments in the regressor
    zero = np.zeros(n)
    arm, payload = [], []
    for axis in np.eye(3):  # per base axis, |g| along it: the nominal arm's gravity torque, a payload's regressor
        model.gravity.linear = float(np.linalg.norm(robot.gravity_m_s2)) * axis
        arm.append(np.array([pin.computeGeneralizedGravity(model, data, q[k]) for k in idx]))
        payload.append(np.array([pin.computeJointTorqueRegressor(model, data, q[k], zero, zero)[:, last]
                                 for k in idx]))
    arm, payload = np.array(arm), np.array(payload)  # (3, m, n), (3, m, n, 4)
    if not np.any(np.ptp(arm, axis=1).max(axis=0) >= MIN_GRAVITY_SPREAD_OF_RATING * rating):
        return None, float("nan")
    model.gravity.linear = np.zeros(3)
    inertial = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in idx])
    # Per joint, its own columns (inertial torque, friction-like), weighted by 1 / its rating so the base and the
    # wrists count as much as the shoulder; the gravity and payload columns are shared by all joints.
    own = np.zeros((n, m, 4 * n))
    for j in range(n):
        own[j, :, 4 * j:4 * j + 4] = np.column_stack([inertial[:, j], np.tanh(qd[idx, j] / 0.02), qd[idx, j],
                                                      np.ones(m)])
    b = (tau[idx] / rating).T.reshape(-1)

    def fit(u: np.ndarray, with_payload: bool) -> tuple[float, np.ndarray]:
        g = np.tensordot(u, arm, 1)
        shared = [g[:, :, None], np.tensordot(u, payload, 1)] if with_payload else [g[:, :, None]]
        a = np.vstack([np.column_stack([*(c[:, j] for c in shared), own[j]]) / rating[j] for j in range(n)])
        norms = np.linalg.norm(a, axis=0)
        norms[norms == 0] = 1.0
        coef, *_ = np.linalg.lstsq(a / norms, b, rcond=None)
        r = b - (a / norms) @ coef
        return float(r @ r), coef / norms

    # The payload-free fit is linear in the gravity vector: three unit-axis columns (one start of the search).
    a = np.vstack([np.column_stack([arm[0][:, j], arm[1][:, j], arm[2][:, j], own[j]]) / rating[j]
                   for j in range(n)])
    norms = np.linalg.norm(a, axis=0)
    norms[norms == 0] = 1.0
    coef, *_ = np.linalg.lstsq(a / norms, b, rcond=None)
    linear = coef[:3] / norms[:3]
    starts = [robot.gravity_m_s2] + ([linear] if np.all(np.isfinite(linear)) and np.linalg.norm(linear) > 0 else [])
    best = min((scipy.optimize.minimize(lambda x: fit(_unit_vector(x), True)[0], _angles(s), method="Nelder-Mead",
                                        options={"xatol": 1e-3, "fatol": 1e-12}) for s in starts),
               key=lambda result: result.fun)
    u = _unit_vector(best.x)
    scale = fit(u, True)[1][0]  # the arm's gravity torque along u, relative to the nominal's
    if not np.isfinite(scale) or abs(scale) < 0.3:
        return None, float("nan")
    ratio = fit(robot.gravity_m_s2 / np.linalg.norm(robot.gravity_m_s2), True)[0] / max(best.fun, 1e-300)
    return u * np.sign(scale), float(ratio)


def mount_check(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, torque_nm, *, gravity_fix: str = "--gravity"
                ) -> tuple[float, float, list[str]]:
    """(the angle in degrees between the data's gravity direction (:func:`gravity_fit`) and the robot model's,
    the residual ratio of :func:`gravity_fit`, a warning naming the vector to pass with ``gravity_fix``) — NaNs
    when the data do not show gravity; the warning when the angle is above :data:`MOUNT_ANGLE_WARN_DEG` and the
    ratio at least :data:`MOUNT_RESIDUAL_RATIO_WARN`."""
    found, ratio = gravity_fit(robot, q_rad, qd_rad_s, qdd_rad_s2, torque_nm)
    if found is None:
        return float("nan"), float("nan"), []
    assumed = robot.gravity_m_s2
    norm = float(np.linalg.norm(assumed))
    angle = float(np.degrees(np.arccos(np.clip(found @ assumed / norm, -1.0, 1.0))))
    if angle <= MOUNT_ANGLE_WARN_DEG or ratio < MOUNT_RESIDUAL_RATIO_WARN:
        return angle, ratio, []
    vector = ",".join(f"{v:.2f}" for v in norm * found)
    assumed_text = ", ".join(f"{v:g}" for v in assumed)
    return angle, ratio, [f"The torques fit gravity along ({vector}) m/s² in the base frame, {angle:.0f}° from the model's "
                   f"({assumed_text}): is the arm mounted tilted, on a wall or a ceiling? Pass {gravity_fix} {vector} "
                   "(or the vector of the robot's installation, negated: UR stores the acceleration the robot feels) "
                   "and identify again; a model fitted with the wrong gravity is wrong wherever the pose differs from "
                   "the data's"]


def likely_robots(q_rad, qd_rad_s, qdd_rad_s2, torque_nm) -> dict[str, float]:
    """Scale of the data against every built-in UR with as many joints: {robot: a_g}, nearest 1 first."""
    n = np.atleast_2d(np.asarray(torque_nm)).shape[1]
    scales: dict[str, float] = {}
    for name in ROBOT_NAMES:
        rm = load_robot(name)
        if rm.n_joints != n:
            continue
        s = gravity_scale(rm, q_rad, qd_rad_s, qdd_rad_s2, torque_nm).scale
        if np.isfinite(s) and s > 0:
            scales[name] = s
    return dict(sorted(scales.items(), key=lambda kv: abs(np.log(kv[1]))))


def _fits(scale: float) -> bool:
    return SCALE_OK[0] <= scale <= SCALE_OK[1]


def check_torque_fits_robot(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, torque_nm, *, source: str,
                            drive_gains_nm_per_a=None, robot_label: str | None = None,
                            robot_fix: str = "pass --robot {robot}",
                            skip_robot_check: bool = False, gravity_fix: str = "--gravity",
                            tcp_pose: dict | None = None) -> tuple[list[str], TorqueScale]:
    """Rating and scale checks of a (preprocessed) torque signal against ``robot`` (module doc).

    ``source``: the torque source used ('current', 'effort', 'target_moment'); ``robot_label``: how the robot
    was named to the user (e.g. "--robot ur3", "the model's robot ur10e"); ``robot_fix``: what to do when the
    data fit another robot ({robot} is replaced by its name); ``tcp_pose``: the TCP-pose check's summary
    (kinematic_check): a built-in UR, not a twin, whose kinematics the pose fits instead of ``robot``'s is named
    instead of any robot the torque scale suggests (the scale depends on the drive gains too, the kinematics do
    not). Returns (warnings, scale);
    raises DataCheckError when the data cannot be this robot's joint torque.
    """
    label = robot_label or f"--robot {robot.name}"
    pose_fits = tcp_pose["fits_other_robot"] if (tcp_pose or {}).get("wrong_arm") else None  # a twin: torques decide
    tau = np.atleast_2d(np.asarray(torque_nm, float))
    warnings: list[str] = []
    errors: list[str] = []
    rating = np.asarray(robot.torque_limit_nm, float)
    peak = np.nanpercentile(np.abs(tau), 99.9, axis=0)
    over = np.flatnonzero(peak > rating)
    for j in over:
        text = (f"Joint {_joint(robot, j)} torque reaches {peak[j]:.1f} Nm, beyond {robot.name}'s rated "
                f"{rating[j]:.0f} Nm ({label})")
        (errors if peak[j] > 2 * rating[j] else warnings).append(text)
    copied = None if source != "current" or drive_gains_nm_per_a is None or robot.description is None else \
        foreign_nominal_gains(drive_gains_nm_per_a, robot.description.name)
    warnings += [f"--drive-gains: {copied}"] if copied else []
    result = gravity_scale(robot, q_rad, qd_rad_s, qdd_rad_s2, tau)
    scale = result.scale
    angle, ratio, mount = mount_check(robot, q_rad, qd_rad_s, qdd_rad_s2, tau, gravity_fix=gravity_fix)
    result = replace(result, gravity_angle_deg=angle, gravity_residual_ratio=ratio)
    if not np.isfinite(scale):
        warnings.append(f"The motion barely changes any joint's gravity torque: the data could not be checked "
                        f"against {robot.name}'s nominal model")
    elif not _fits(scale):
        others = {name: s for name, s in likely_robots(q_rad, qd_rad_s, qdd_rad_s2, tau).items() if name != robot.name}
        close = [name for name, s in others.items() if SCALE_CLOSE[0] <= s <= SCALE_CLOSE[1]]
        if not skip_robot_check:
            if pose_fits:
                result = replace(result, fits_other_robot=pose_fits, doubtful_reason=(
                    f"the recorded TCP pose fits {pose_fits}'s kinematics, not {robot.name}'s"))
            elif close:
                fit = " or ".join(f"{name}'s ({others[name]:.2f}x)" for name in close)
                result = replace(result, fits_other_robot=close[0], doubtful_reason=(
                    f"the torques fit {fit} nominal model, not {robot.name}'s ({scale:.2f}x)"))
            elif scale < SCALE_OK[0]:
                result = replace(result, doubtful_reason=(
                    f"the torques are {scale:.2f}x the gravity torque of {robot.name}'s nominal model, less than the "
                    "arm holds without a payload: the drive gains or the robot are wrong"))
        causes = _causes(result, others, tau, source, drive_gains_nm_per_a, robot, robot_fix, pose_fits)
        if mount:
            causes = f"{mount[0]}. {causes}".rstrip()
        checked = ", ".join(_joint(robot, j) for j in np.flatnonzero(result.checked))
        text = (f"The torques do not fit {label}: on joint(s) {checked} they are {scale:.3g}x the gravity torque "
                f"of {robot.name}'s nominal model (expected ~1). {causes}")
        mount = []  # said in this message
        implausible = not SCALE_PLAUSIBLE[0] <= scale <= SCALE_PLAUSIBLE[1]
        (errors if implausible else warnings).append(text)
    else:
        warnings += _joint_scale_warnings(result, source, drive_gains_nm_per_a, robot)
    warnings += mount
    if errors and skip_robot_check:
        warnings = [f"{e} (not refused: --skip-robot-check)" for e in errors] + warnings
        errors = []
    if errors:
        raise DataCheckError(" ".join(e if e.endswith(".") else e + "." for e in errors)
                             + " If the arm really differs from its nominal model, pass --skip-robot-check")
    return warnings, result


def _joint(robot: RobotModel, j: int) -> str:
    """A joint as messages name it: its index from 0 (as ur_rtde's columns and every per-joint list) and name."""
    return f"{j} ({robot.joint_names[j]})"


def _joint_scale_warnings(result: TorqueScale, source: str, gains, robot: RobotModel) -> list[str]:
    """Checked joints whose torque scales disagree by more than :data:`JOINT_SCALE_SPREAD`: a drive gain (or the
    torque sensing of a joint) is suspect. With three or more checked joints the one apart from their
    median is named, with the gain the nominal model implies for it; with two, both. A payload also spreads
    the scales (the wrist's most: its nominal gravity torque is the smallest), so this is a warning."""
    checked = np.flatnonzero(result.checked)
    a_g = result.gravity_coefficient
    if checked.size < 2 or np.any(a_g[checked] <= 0):
        return []
    g = np.asarray(gains, float) if source == "current" and gains is not None else None
    if checked.size == 2:
        j, k = checked
        if 1 / JOINT_SCALE_SPREAD <= a_g[j] / a_g[k] <= JOINT_SCALE_SPREAD:
            return []
        return [f"Joints {_joint(robot, j)} and {_joint(robot, k)} disagree: their torques are {a_g[j]:.2f}x and "
                f"{a_g[k]:.2f}x the gravity torque of {robot.name}'s nominal model: one of their drive gains looks off"
                + (f" (the model implies {g[j] / a_g[j]:.3g} and {g[k] / a_g[k]:.3g} Nm/A)" if g is not None else "")
                + ", unless a payload at the flange explains it"]
    out = []
    median = float(np.median(a_g[checked]))  # of three or more: one joint off does not move it
    for j in checked:
        if not 1 / JOINT_SCALE_SPREAD <= a_g[j] / median <= JOINT_SCALE_SPREAD:
            implied = (f" (at the others' scale, {robot.name}'s nominal model implies {g[j] / a_g[j] * median:.3g} "
                       "Nm/A for it)" if g is not None else "")
            out.append(f"Joint {_joint(robot, j)}'s torque is {a_g[j]:.2f}x the gravity torque of {robot.name}'s "
                       f"nominal model while the checked joints' median is {median:.2f}x: its drive gain looks "
                       f"off{implied}, unless a payload at the flange explains it")
    return out


def _causes(result: TorqueScale, others: dict[str, float], tau, source: str, gains, robot: RobotModel,
            robot_fix: str, pose_fits: str | None = None) -> str:
    """The likely explanations of a scale far from 1, most specific first (``others``: :func:`likely_robots`
    of the data without ``robot``; ``pose_fits``: the robot the recorded TCP pose fits, if another)."""
    scale, inertial = result.scale, result.inertial_scale
    if source == "effort" and abs(scale) < GRAVITY_COMPENSATED_SCALE and inertial > 0.4:
        return ("The effort carries the arm's inertia but no gravity: it looks gravity-compensated (UR's "
                "actual_current_as_torque, which the official UR driver reports as effort on new firmware). Use "
                "motor currents with --drive-gains instead (driver: use_currents_as_efforts: true, "
                "--ur-driver-topics)")
    if source == "effort" and 0.03 < scale < SCALE_PLAUSIBLE[0] and 0.5 < inertial / scale < 2.0:
        return (f"The effort looks like motor current in A (implied gain ~{1 / scale:.3g} Nm/A): for the official UR "
                "driver pass --ur-driver-topics and --drive-gains; for another recorder's /joint_states whose "
                "effort is current, --joint-states-effort current and --drive-gains")
    if pose_fits:  # the robots the torques fit, and the gains this robot's model implies, are beside the point
        theirs = others.get(pose_fits, float("nan"))
        text = f"The recorded TCP pose fits {pose_fits}'s kinematics: {robot_fix.format(robot=pose_fits)}"
        if np.isfinite(theirs) and not _fits(theirs):
            text += f". The torques are {theirs:.2f}x its nominal model's gravity torque too"
            text += ": a payload at the flange, or drive gains that are off" if theirs > SCALE_OK[1] else (
                ": drive gains that are off" if source == "current" else "")
        return text + "."
    parts = []
    fitting = [name for name, s in others.items() if SCALE_CLOSE[0] <= s <= SCALE_CLOSE[1]]
    if fitting:
        listed = " or ".join(f"{name} ({others[name]:.2f}x)" for name in fitting)
        twins = "" if len(fitting) == 1 else (
            " (or " + " / ".join(robot_fix.format(robot=name) for name in fitting[1:])
            + ": joint torques hardly tell a UR from its e-Series twin; name the arm you have)")
        parts.append(f"They fit {listed}: {robot_fix.format(robot=fitting[0])}{twins}")
    if SCALE_OK[1] < scale < 3.5:  # a mounted tool is the commonest cause: named before the gains
        parts.append(f"{'Or a' if parts else 'A'} payload at the flange raises the torques: identify the arm "
                     "without one (a run with the payload is for rdi payload; rdi validate --payload payload.yaml "
                     "scores it with the payload added)")
    if source == "current" and gains is not None:
        g = np.asarray(gains, float)
        implied = ", ".join(f"joint {_joint(robot, j)}: {g[j] / result.gravity_coefficient[j]:.3g}"
                            for j in np.flatnonzero(result.checked))
        parts.append(f"{'Or the' if parts else 'The'} drive gains are off: {robot.name}'s nominal model implies "
                     f"{implied} Nm/A")
    if source == "target_moment":
        parts.append("UR's target moment depends on the payload set on the pendant")
    return "".join(f"{p}. " for p in parts).rstrip()


def mass_warnings(link_mass_kg, robot: RobotModel, *, consistent: bool, doubtful: bool = False) -> list[str]:
    """Warnings when identified link masses are far from the nominal ones (links 2..n: link 1's mass does not
    act on any joint torque of a fixed-base arm and stays at its prior), outside :data:`MASS_RATIO_OK`; with
    ``doubtful``, the problem when they are outside :data:`MASS_RATIO_PLAUSIBLE` instead; a plausible total with
    single links far off gets :func:`link_mass_notes`. None for a model that is not physically consistent (its
    per-link masses carry no meaning)."""
    if not consistent:
        return []  # the per-link masses of a non-physical model carry no meaning (the job says so)
    nominal = np.array([robot.model.inertias[i + 1].mass for i in range(robot.n_joints)])
    identified = np.asarray(link_mass_kg, float)
    total_id, total_nom = float(identified[1:].sum()), float(nominal[1:].sum())
    if total_nom <= 0:
        return []
    ratio = total_id / total_nom
    low, high = MASS_RATIO_PLAUSIBLE if doubtful else MASS_RATIO_OK
    if low <= ratio <= high:
        return [] if doubtful else link_mass_notes(identified, robot)
    text = (f"Identified masses of links 2-{robot.n_joints} total {total_id:.2f} kg, {ratio:.2f}x the nominal "
            f"{robot.name}'s {total_nom:.2f} kg")
    if doubtful:
        return [f"{text}: no payload a UR carries explains that; a drive gain, the torque source or --robot is off "
                "(see the warnings); --skip-robot-check if the arm really differs"]
    return [f"{text}: check --robot, the drive gains and for a payload"]


def link_mass_notes(link_mass_kg, robot: RobotModel) -> list[str]:
    """A note when single links' masses lie outside :data:`MASS_RATIO_PLAUSIBLE` of the nominal ones: joint
    torques do not determine them one by one (a mass on a joint's axis acts alike on either link it joins; link
    1's acts on no joint torque of a fixed-base arm), so such a split is one of many that predict the same
    torques; the total of links 2..n is what the data fix."""
    nominal = np.array([robot.model.inertias[i + 1].mass for i in range(robot.n_joints)])
    identified = np.asarray(link_mass_kg, float)
    if identified.shape != nominal.shape:
        return []
    ratio = identified / nominal
    far = [(i + 1, m, r) for i, (m, r) in enumerate(zip(identified, ratio))
           if not MASS_RATIO_PLAUSIBLE[0] <= r <= MASS_RATIO_PLAUSIBLE[1]]
    if not far:
        return []
    listed = ", ".join(f"link {i} {m:.3g} kg ({r:.2f}x nominal)" for i, m, r in far)
    return [f"Single link masses far from the nominal {robot.name}'s: {listed}. Joint torques fix only combinations of "
            "link masses (a mass on a joint axis acts alike on both links it joins): this split is one of many that "
            "predict the same joint torques. A simulator reading the exported URDF gets the same joint dynamics; do "
            "not read these numbers as the links' weights"]


def mount_problems(checks: dict, robot: RobotModel, what: str) -> list[str]:
    """Doubtful-result problems from the data checks: the data's gravity direction far from the model's, a TCP pose
    of another UR (not a twin), or the torque scale's ``doubtful_reason`` (another built-in UR's nominal model fits
    them, or they are below what this robot holds without a payload; data_checks)."""
    problems = []
    if checks["mount_differs"]:
        assumed = ", ".join(f"{v:g}" for v in robot.gravity_m_s2)
        problems.append(f"{what}: the torques' gravity is {checks['gravity_angle_deg']:.0f}° from the model's "
                        f"({assumed} m/s²): the arm's mount differs (see the warning for the --gravity to pass)")
    pose, reason = checks.get("tcp_pose") or {}, checks.get("doubtful_reason")
    if pose.get("wrong_arm"):
        problems.append(f"{what}: the recorded TCP pose is {pose['fits_other_robot']}'s (see the warning)")
        reason = None if (reason or "").startswith("the recorded TCP pose") else reason  # said just now
    if reason:
        problems.append(f"{what}: {reason} (see the warning); --skip-robot-check if the arm really differs, e.g. "
                        "carries a payload")
    return problems


def loaded_arm_notes(checks: dict, robot: RobotModel) -> list[str]:
    """A warning when the data to identify the arm from hold more gravity torque than the bare arm
    (:data:`LOADED_SCALE`): a tool left on the flange goes into the links' parameters; or less than any bare arm
    of its type (:data:`LIGHT_SCALE`): the drive gains are too low, and the whole model is scaled by them."""
    scale = checks.get("torque_scale_vs_nominal")
    if scale is None or not np.isfinite(scale):
        return []
    if SCALE_OK[0] <= scale < LIGHT_SCALE:
        return [f"the torques are {scale:.2f}x the gravity torque of {robot.name}'s nominal model: lighter than a bare "
                f"{robot.name} (below {LIGHT_SCALE:g}x). Are the drive gains too low by about that factor (or the "
                "torque's unit off)? A model identified with them is scaled by it: it still predicts the recorded "
                "currents, but its torques in Nm (the controller's, a payload's mass) are off by the same factor. "
                "Check the gains: rdi drive-gains with a known payload, or the values of the arm's controller"]
    if not LOADED_SCALE < scale <= SCALE_OK[1]:
        return []
    return [f"the torques are {scale:.2f}x the gravity torque of {robot.name}'s nominal model: was a tool or payload "
            "mounted during the run? Its weight then goes into the links' parameters (a model of arm and tool: "
            "rdi payload, payload_file or tool_mass_kg would count the tool twice). Identify the arm with the "
            "flange empty and the tool with rdi payload; with nothing mounted, check the drive gains"]
