"""Drive gains (motor current -> joint torque, Nm/A) from a known-payload experiment.

Currents alone fix the dynamics only up to one scale per joint: k_j i_j = tau_j
is unchanged if k_j and every parameter seen by joint j are scaled together. A
payload of known mass and centre of mass breaks that: its torque is known from
the kinematics alone. With two recordings — A without, B with the payload —

    k_j i_j(A) - W_base(A) beta = 0
    k_j i_j(B) - W_base(B) beta = tau_payload(B)

is linear in the gains k and the arm's base parameters beta (global
identification of drive gains and dynamic parameters, Gautier & Briot 2014).
Because the measured current then sits in the regressor, noise biases k towards
zero; the default solves instead, joint by joint, i_j = W_j gamma_j + kappa_j
tau_payload_j (gamma_j = beta / k_j, kappa_j = 1 / k_j), which keeps the noisy
current on the left-hand side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..dynamics.base_parameters import BaseParameterMap, check_excitation
from ..dynamics.friction import parse_terms, terms_name
from ..dynamics.regressor import (
    DEFAULT_COULOMB_VELOCITY_RAD_S,
    DEFAULT_STRIBECK_VELOCITY_RAD_S,
    full_regressor,
    rigid_body_regressor,
)
from ..robots.model import RobotModel
from .estimators import STD_MIN_BLOCKS, batch_means_blocks, block_robust_covariance, weighted_least_squares
from .friction_columns import ColumnCache, FrictionDesign, design_columns
from .preprocessing import PreprocessedData, parallel_friction_columns

__all__ = ["DriveGainEstimate", "identify_drive_gains", "identify_drive_gains_from_recordings",
           "payload_standard_parameters", "payload_torque"]

#: passes of the load-dependent friction column, each with the load current of the previous pass's fit
_LOAD_PASSES = 2


@dataclass(frozen=True)
class DriveGainEstimate:
    """Identified gains (Nm/A) with standard deviations, and the arm's base parameters found with them."""

    gains_nm_per_a: np.ndarray
    gains_std_nm_per_a: np.ndarray
    base_parameters: np.ndarray
    base_std: np.ndarray
    residual_rms_a: np.ndarray
    #: per joint, lack of fit: the residual RMS of the one model of both runs (the arm's parameters shared, the
    #: declared payload) / that of each run fitted with parameters of its own (which absorb any payload: it
    #: only changes the last link's inertial parameters). ~1 when the declared payload and the two runs fit
    #: one arm; well above 1 when they do not (payload CoM or inertia off, the runs from different arms).
    #: A payload mass off by a factor is not seen: it scales the gains.
    lack_of_fit: np.ndarray | None = None
    #: per joint, the coefficient (dimensionless) of the load-dependent Coulomb term mu |tau_rigid| sign(qd)
    #: fitted with the gain (0 where the fit made it negative and it was left out); None: fitted without it
    load_coefficient: np.ndarray | None = None
    #: per joint, the friction family of the fit (dynamics/friction.py terms, e.g. ``p2+poly+presliding``; its
    #: load term is the one above)
    friction_terms: tuple[str, ...] | None = None
    #: Stribeck velocities (rad/s) the friction columns used, and the low-pass cut-off of both recordings
    stribeck_velocity_rad_s: np.ndarray | None = None
    cutoff_hz: float | None = None

    @property
    def relative_std(self) -> np.ndarray:
        """Standard deviation of each gain relative to the gain."""
        return self.gains_std_nm_per_a / self.gains_nm_per_a


def payload_standard_parameters(robot: RobotModel, mass_kg: float, com_in_tool_m, inertia_about_com_kgm2=None,
                                ) -> np.ndarray:
    """The payload's 10 standard parameters in the last joint's frame (pinocchio order).

    ``com_in_tool_m`` and ``inertia_about_com_kgm2`` (default: a point mass) are in the tool frame.
    """
    if mass_kg <= 0:
        raise ValueError(f"payload mass must be > 0 kg, got {mass_kg}")
    model = robot.model
    frame = model.frames[robot.tool_frame_id]
    if frame.parentJoint != model.njoints - 1:
        raise ValueError(f"tool frame {robot.tool_frame!r} is not attached to the last joint")
    inertia = np.zeros((3, 3)) if inertia_about_com_kgm2 is None else np.asarray(inertia_about_com_kgm2, float)
    payload = pin.Inertia(float(mass_kg), np.asarray(com_in_tool_m, float), inertia)
    return np.asarray(frame.placement.act(payload).toDynamicParameters(), float)


def payload_torque(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, payload_parameters) -> np.ndarray:
    """Joint torques (N, n) the payload adds: the last link's regressor columns times its parameters."""
    w = rigid_body_regressor(robot, q_rad, qd_rad_s, qdd_rad_s2)
    n = robot.n_joints
    return (w[:, 10 * (n - 1):] @ np.asarray(payload_parameters, float)).reshape(-1, n)


def identify_drive_gains(
    robot: RobotModel,
    base_map: BaseParameterMap,
    without_payload: PreprocessedData,
    with_payload: PreprocessedData,
    payload_parameters: np.ndarray,
    *,
    stribeck_velocity_rad_s=DEFAULT_STRIBECK_VELOCITY_RAD_S,
    coulomb_velocity_rad_s=DEFAULT_COULOMB_VELOCITY_RAD_S,
    method: str = "per_joint",
    load_friction: bool = True,
    friction_design: FrictionDesign | None = None,
) -> DriveGainEstimate:
    """Gains and base parameters from two preprocessed recordings whose ``torque`` is the motor
    current (A): without and with the known payload (identification/preprocessing.preprocess).
    Friction columns are parallel-filtered like the currents.

    ``method="per_joint"`` (default): per joint, i_j = W_j gamma_j + tau_payload_j / k_j by least
    squares (the noisy current is the dependent variable, so no attenuation bias); then the base
    parameters by WLS with the gains fixed. ``"global"``: the one-shot formulation above.
    ``load_friction`` (per_joint only): each joint's fit has a Coulomb term that grows with its load
    (:func:`_fit_joint`): the payload raises a real joint's friction, which a model shared by both runs
    otherwise lacks. ``friction_design`` (per_joint only; ``base_map`` then without friction): each joint's
    friction columns are that design's (identification/friction_columns.py, e.g. the family the identifier
    selected on the first run: richer than P2 on a real joint, so each run's own residual, the lack of
    fit's yardstick, is not inflated by friction the model lacks), its load term left to ``load_friction``;
    its Stribeck and Coulomb velocities replace the arguments.
    """
    n = robot.n_joints
    if method not in ("per_joint", "global"):
        raise ValueError(f"method {method!r} must be 'per_joint' or 'global'")
    if friction_design is not None and (base_map.friction or method != "per_joint"):
        raise ValueError("friction_design needs method='per_joint' and a base map without friction "
                         "(compute_base_parameters(robot, friction=False))")
    if friction_design is not None:
        stribeck_velocity_rad_s = friction_design.stribeck_velocity_rad_s
        coulomb_velocity_rad_s = friction_design.coulomb_velocity_rad_s
        # the design's load term is the per-joint fit's (its load current is refitted there)
        friction_design = friction_design.with_terms(
            [tuple(t for t in friction_design.terms[j] if t != "load") for j in range(n)])
    regressors, currents, payload_torques = [], [], []
    for data, with_load in ((without_payload, False), (with_payload, True)):
        q, qd, qdd, current = data.q_rad, data.qd_rad_s, data.qdd_rad_s2, data.torque
        w, _ = full_regressor(robot, q, qd, qdd, friction=False, rotor=base_map.rotor)
        if base_map.friction:
            w = np.hstack([w, parallel_friction_columns(data, stribeck_velocity_rad_s, coulomb_velocity_rad_s)])
        w = base_map.base_regressor(w)
        if friction_design is not None:
            w = np.hstack([w, design_columns(data, friction_design)])
        regressors.append(w)
        currents.append(current)
        payload_torques.append(payload_torque(robot, q, qd, qdd, payload_parameters) if with_load
                               else np.zeros_like(current))
    if method == "global":
        return _global(regressors, currents, payload_torques, base_map, n)
    x_s = np.broadcast_to(np.asarray(stribeck_velocity_rad_s, float), (n,))
    v_k = np.broadcast_to(np.asarray(coulomb_velocity_rad_s, float), (n,))
    # base columns that are rigid-body (or rotor) ones: the friction columns come last in the full regressor,
    # and a friction design's after the base columns
    n_rigid_full = base_map.n_full - (4 * n if base_map.friction else 0)
    rigid = np.zeros(regressors[0].shape[1], bool)
    rigid[:base_map.n_base] = base_map.independent_columns < n_rigid_full
    delta = np.zeros(n) if friction_design is None else np.where(friction_design.presliding,
                                                                 friction_design.presliding_distance_rad, 0.0)
    caches = [ColumnCache(d) for d in (without_payload, with_payload)] if load_friction else None
    # the gains' std by batch means over both runs (estimators.block_robust_covariance); no block spans both
    first = batch_means_blocks(without_payload.segment_id, without_payload.sample_rate_hz, without_payload.cutoff_hz)[0]
    second = batch_means_blocks(with_payload.segment_id, with_payload.sample_rate_hz, with_payload.cutoff_hz)[0]
    blocks = np.concatenate([first, second + first.max() + 1])
    gains, gains_std, rms, lack, mu = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.zeros(n))
    for j in range(n):
        fit = _fit_joint(robot, j, [w[j::n] for w in regressors], [c[:, j] for c in currents],
                         [t[:, j] for t in payload_torques], rigid,
                         None if caches is None else (caches, float(x_s[j]), float(v_k[j]), float(delta[j])), blocks)
        gains[j], gains_std[j], rms[j], lack[j], mu[j] = fit
    # base parameters with the gains fixed: torque = gain x current on both data sets
    w_all = np.vstack(regressors)
    tau_all = np.vstack([c * gains - t for c, t in zip(currents, payload_torques)]).ravel()
    est = weighted_least_squares(w_all, tau_all, n)
    return DriveGainEstimate(gains_nm_per_a=gains, gains_std_nm_per_a=gains_std, base_parameters=est.parameters,
                             base_std=est.std, residual_rms_a=rms, lack_of_fit=lack,
                             load_coefficient=mu if load_friction else None)


def _fit_joint(robot: RobotModel, j: int, w_runs: list[np.ndarray], y_runs: list[np.ndarray],
               payload_runs: list[np.ndarray], rigid: np.ndarray, load, blocks: np.ndarray | None = None
               ) -> tuple[float, float, float, float, float]:
    """Joint j's gain, its std, residual RMS (A), lack of fit and load coefficient from both runs' rows.

    The std is by batch means over ``blocks`` (one block number per row; estimators.block_robust_covariance),
    the textbook one without them or with fewer than STD_MIN_BLOCKS.

    i_j = W_j gamma_j [+ mu_j |i_rigid,j| sign(qd_j)] + kappa_j tau_payload_j with gamma_j = beta / k_j and
    kappa_j = 1 / k_j: the noisy current stays on the left, so the estimate has no errors-in-variables bias.
    The load-dependent Coulomb term (``load`` = (column caches, x_s, v_k, presliding distance); None: without
    it) is written in current units, where its coefficient mu_j is the same as in torque units
    (|tau| / k_j = |i|): its load is the rigid-body and payload current of the previous pass (Madsen et al.
    2020's load-dependent friction; dynamics/friction.py), and it is dropped when the fit makes mu_j negative
    (friction that would help the motion).
    """
    name = f"joint {j} ({robot.joint_names[j]})"
    w_j = np.vstack(w_runs)
    used = np.flatnonzero(np.linalg.norm(w_j, axis=0) > 0)
    a = np.column_stack([w_j[:, used], np.concatenate(payload_runs)])
    y = np.concatenate(y_runs)
    if not np.linalg.norm(a[:, -1]) > 0:
        raise ValueError(f"{name}: the payload puts no torque on this joint in these recordings, so "
                         "its drive gain is not identifiable; give the payload's CoM (--payload-com, m in "
                         "tool0; default 0,0,0) and offset it from the joint's axis (for the last joint: off "
                         "the tool axis), and move the joint")
    x, r_factor, scale = _least_squares(a, y)
    diag = np.abs(np.diag(r_factor))
    if diag[-1] < 1e-6 * diag.max():
        raise ValueError(f"{name}: the payload torque is (nearly) a combination of the arm's own "
                         "regressor columns, so its drive gain is not identifiable; move this joint more "
                         "and offset the payload CoM from the flange axis")
    load_runs, mu = None, 0.0
    if load is not None:
        caches, x_s, v_k, delta = load
        rigid_used = rigid[used]
        without_load = a
        for _ in range(_LOAD_PASSES):
            columns = []
            for cache, w_run, p_run in zip(caches, w_runs, payload_runs):
                current = np.zeros((w_run.shape[0], robot.n_joints))
                current[:, j] = w_run[:, used[rigid_used]] @ x[:len(used)][rigid_used] + x[-1] * p_run
                columns.append(cache.columns(j, ["load_coefficient"], stribeck_velocity_rad_s=x_s,
                                             coulomb_velocity_rad_s=v_k, presliding_distance_rad=delta,
                                             load_torque_nm=current)[:, 0])
            a_load = np.column_stack([without_load[:, :-1], np.concatenate(columns), without_load[:, -1]])
            x_load, r_load, scale_load = _least_squares(a_load, y)
            if not x_load[-2] > 0:
                break
            a, x, r_factor, scale, load_runs, mu = a_load, x_load, r_load, scale_load, columns, float(x_load[-2])
    residual = y - a @ x
    sigma2 = residual @ residual / max(a.shape[0] - a.shape[1], 1)
    r_inv_last = np.linalg.solve(r_factor, np.eye(a.shape[1]))[-1]
    kappa, kappa_std = x[-1], np.sqrt(sigma2 * (r_inv_last @ r_inv_last)) / scale[-1]
    if blocks is not None and int(blocks.max()) + 1 >= STD_MIN_BLOCKS:
        kappa_std = float(np.sqrt(max(block_robust_covariance(a, y, x, np.ones(y.size), 1, blocks)[-1, -1], 0.0)))
    if kappa <= 0:
        raise ValueError(f"{name}: identified drive gain is not positive. Are the recordings swapped or the "
                         "same (--data without the payload, --payload-data with it), or the payload's CoM given "
                         "with a wrong sign or axis (--payload-com, m, in tool0)? Otherwise the payload does not "
                         "load this joint enough (heavier payload, CoM offset from the flange axis, more motion)")
    # lack of fit: each run fitted with parameters of its own (the same friction columns, load term included)
    separate = sum(_residual_sum_of_squares(
        w_run[:, used] if load_runs is None else np.column_stack([w_run[:, used], load_runs[k]]), y_run)
        for k, (w_run, y_run) in enumerate(zip(w_runs, y_runs)))
    return (1.0 / kappa, kappa_std / kappa**2,  # first-order propagation through 1/kappa
            float(np.sqrt(np.mean(residual**2))), float(np.sqrt(residual @ residual / max(separate, 1e-300 * y.size))),
            mu)


def _least_squares(a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of column-normalised ``a``: (solution, R of the normalised QR, column scales)."""
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    q_factor, r_factor = np.linalg.qr(a / scale)
    return np.linalg.solve(r_factor, q_factor.T @ y) / scale, r_factor, scale


def _residual_sum_of_squares(a: np.ndarray, y: np.ndarray) -> float:
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    x = np.linalg.lstsq(a / scale, y, rcond=None)[0]
    residual = y - (a / scale) @ x
    return float(residual @ residual)


def _global(regressors, currents, payload_torques, base_map: BaseParameterMap, n: int) -> DriveGainEstimate:
    """Gautier & Briot's global formulation: k_j i_j - W beta = tau_payload, one WLS for all unknowns
    (efficient, but the noisy current sits in the regressor: biased towards zero at high current noise)."""
    blocks, rhs = [], []
    for wb, current, tau_p in zip(regressors, currents, payload_torques):
        gain_columns = np.zeros((current.shape[0], n, n))
        gain_columns[:, np.arange(n), np.arange(n)] = current
        blocks.append(np.hstack([gain_columns.reshape(-1, n), -wb]))
        rhs.append(tau_p.ravel())
    a = np.vstack(blocks)
    y = np.concatenate(rhs)
    names = [f"drive_gain{j + 1}" for j in range(n)] + list(base_map.names)
    check_excitation(a, names)
    est = weighted_least_squares(a, y, n)
    gains = est.parameters[:n]
    if np.any(gains <= 0):
        raise ValueError(f"identified drive gains {np.round(gains, 3).tolist()} are not all positive: the payload "
                         "does not load every joint enough (move every joint, offset the payload CoM from the "
                         "flange axis, use a heavier payload)")
    return DriveGainEstimate(gains_nm_per_a=gains, gains_std_nm_per_a=est.std[:n], base_parameters=est.parameters[n:],
                             base_std=est.std[n:], residual_rms_a=est.residual_rms_nm / np.maximum(gains, 1e-9))


def identify_drive_gains_from_recordings(
    robot: RobotModel | str,
    without_payload,
    with_payload,
    *,
    payload_mass_kg: float,
    payload_com_m,
    payload_inertia_about_com_kgm2=None,
    options=None,
    method: str = "per_joint",
    load_friction: bool = True,
) -> DriveGainEstimate:
    """Drive gains from two recordings with motor currents (``current_a``, A) of the same excitation:
    without and with a known payload at the flange (mass, CoM and inertia in the tool0 frame).

    The recordings are preprocessed alike (the cut-off found on the first one). The first one is identified
    in amperes (unit gains): each joint's friction model — family and shape constants, ``options.friction_model``,
    default the identifier's selection — does not depend on the gain (currents and torques differ by a factor
    per joint). :func:`identify_drive_gains` then solves for the gains with those friction columns and
    (``load_friction``) a Coulomb term that grows with the load. ``method="global"`` uses P2 friction columns.

    The base joint carries no payload *gravity* torque (its axis is vertical); its gain is seen only
    through the payload's inertia torque (m r^2 qdd_1 and Coriolis terms), so the excitation must
    accelerate joint 1 with the payload away from the base axis. ``options``: an
    :class:`~robot_dynamics_id.identification.pipeline.IdentificationOptions` (preprocessing, friction).
    """
    from dataclasses import replace

    from ..dynamics.base_parameters import compute_base_parameters
    from ..robots.model import load_robot
    from .pipeline import IdentificationOptions, identify, prepare

    rm = robot if isinstance(robot, RobotModel) else load_robot(robot)
    n = rm.n_joints
    base = options or IdentificationOptions()
    # Currents as the "torque" (unit gains): the gain-free identification of the first run gives the cut-off and
    # the friction model (family and shape constants per joint; currents and torques differ by a factor per joint)
    in_amps = replace(base, estimator="wls", torque_source="current", drive_gains_nm_per_a=np.ones(n))
    design_of_first = base.friction and method == "per_joint"
    if not design_of_first:
        in_amps = replace(in_amps, friction_model="p2")  # the global method's columns are P2
    first = identify(without_payload, rm, in_amps)
    second_options = replace(in_amps, preprocessing=replace(in_amps.preprocessing, cutoff_hz=first.data.cutoff_hz))
    second = prepare(with_payload, rm, second_options)
    payload = payload_standard_parameters(rm, payload_mass_kg, payload_com_m, payload_inertia_about_com_kgm2)
    design = first.friction_fit.design if design_of_first else None
    base_map = compute_base_parameters(rm, friction=base.friction and design is None, rotor=base.rotor)
    estimate = identify_drive_gains(rm, base_map, first.data, second, payload,
                                    stribeck_velocity_rad_s=first.stribeck_velocity_rad_s,
                                    coulomb_velocity_rad_s=base.coulomb_velocity_rad_s, method=method,
                                    load_friction=load_friction and base.friction, friction_design=design)
    terms = ("p2",) * n if design is None else tuple(
        terms_name(tuple(t for t in design.terms[j] if t != "load")) for j in range(n))
    if estimate.load_coefficient is not None:
        terms = tuple(terms_name(parse_terms(t) + ("load",)) if mu > 0 else t
                      for t, mu in zip(terms, estimate.load_coefficient))
    return replace(estimate, stribeck_velocity_rad_s=first.stribeck_velocity_rad_s, cutoff_hz=first.data.cutoff_hz,
                   friction_terms=terms if base.friction else None)
