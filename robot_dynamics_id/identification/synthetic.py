"""Synthetic identification data: Fourier excitation, a perturbed "true" arm and its torques.

Used by the tests and benchmarks of the identifier to check it against a known
truth without the MuJoCo plant: torques come from pinocchio's RNEA (which adds
the rotor inertia ``model.armature * qdd``) plus the friction of seeds.md P2 eq. (11).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from ..dynamics.friction import FrictionParameters, dahl_state, friction_torque
from ..io.model_file import DynamicModel
from ..robots.model import RobotModel

__all__ = ["SyntheticRecording", "fourier_trajectory", "inverse_dynamics", "perturbed_truth", "synthetic_recording",
           "synthetic_ur_recording"]


@dataclass(frozen=True)
class SyntheticRecording:
    """Recording-like arrays (same field names as io/recording.Recording)."""

    time_s: np.ndarray
    q_rad: np.ndarray
    qd_rad_s: np.ndarray
    qdd_rad_s2: np.ndarray
    effort_nm: np.ndarray
    current_a: np.ndarray | None = None


def fourier_trajectory(robot: RobotModel, *, duration_s: float, rate_hz: float, harmonics: int = 5,
                       base_frequency_hz: float = 0.1, seed: int = 0, amplitude_scale: float = 1.0,
                       q_center_rad: np.ndarray | None = None):
    """A random finite Fourier series per joint (Swevers-style), kept inside UR-like speeds.

    Returns (time_s, q, qd, qdd), arrays (N,), (N, n) x3.
    """
    rng = np.random.default_rng(seed)
    n = robot.n_joints
    t = np.arange(int(round(duration_s * rate_hz))) / rate_hz
    w = 2 * np.pi * base_frequency_hz * np.arange(1, harmonics + 1)
    a = rng.normal(size=(n, harmonics)) / np.arange(1, harmonics + 1)
    b = rng.normal(size=(n, harmonics)) / np.arange(1, harmonics + 1)
    # scale so the peak velocity is ~ 0.8 rad/s (x amplitude_scale) per joint
    qd_raw = np.einsum("kh,jh->kj", np.cos(np.outer(t, w)), a * w) - np.einsum("kh,jh->kj", np.sin(np.outer(t, w)),
                                                                                 b * w)
    gain = amplitude_scale * 0.8 / np.maximum(np.abs(qd_raw).max(axis=0), 1e-9)
    a *= gain[:, None]
    b *= gain[:, None]
    sin, cos = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    center = np.array([0.0, -1.57, 1.0, -1.0, 1.0, 0.0][:n]) if q_center_rad is None else np.asarray(q_center_rad)
    q = center + sin @ a.T + cos @ b.T
    qd = cos @ (a * w).T - sin @ (b * w).T
    qdd = -sin @ (a * w**2).T - cos @ (b * w**2).T
    return t, q, qd, qdd


def inverse_dynamics(model: DynamicModel, q, qd, qdd) -> np.ndarray:
    """Joint torques (N, n): RNEA with rotor inertia + friction of ``model``.

    Rows are consecutive samples of one motion: load-dependent friction sees the links'
    rigid-body torque (RNEA without rotor inertia) and a presliding state integrates along
    the position increments (from rest at the first row)."""
    rm = model.robot_model()
    data = rm.model.createData()
    q, qd, qdd = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    tau = np.array([pin.rnea(rm.model, data, q[k], qd[k], qdd[k]) for k in range(q.shape[0])])
    fr = model.friction
    load = None
    if fr.has_load_term:
        links = rm.model.copy()
        links.armature = np.zeros(rm.n_joints)
        links_data = links.createData()
        load = np.array([pin.rnea(links, links_data, q[k], qd[k], qdd[k]) for k in range(q.shape[0])])
    state = None
    if fr.presliding.any():
        state = np.zeros_like(q)
        mask = fr.presliding
        state[:, mask] = dahl_state(np.diff(q[:, mask], axis=0, prepend=q[:1, mask]), fr.presliding_distance_rad[mask])
    return tau + friction_torque(fr, qd, load_torque_nm=load, presliding_state=state)


def perturbed_truth(robot: str = "ur3", *, seed: int = 0, relative: float = 0.2) -> DynamicModel:
    """The nominal model with masses, CoMs, inertias and rotor inertias perturbed by ~``relative``,
    plus non-zero friction: a 'true' arm the identifier has not seen."""
    rng = np.random.default_rng(seed)
    nominal = DynamicModel.nominal(robot)
    n = nominal.n_joints
    mass = nominal.link_mass_kg * (1 + relative * rng.uniform(-1, 1, n))
    com = nominal.link_com_m + relative * 0.1 * rng.uniform(-1, 1, (n, 3))
    inertia = []
    for i in range(n):
        rot = pin.exp3(relative * rng.normal(size=3))
        principal = np.linalg.eigvalsh(nominal.link_inertia_kgm2[i]) * (1 + relative * rng.uniform(-1, 1, 3))
        # keep the triangle inequality (a realisable body)
        principal = np.minimum(principal, 0.95 * (principal.sum() - principal))
        inertia.append(rot @ np.diag(principal) @ rot.T)
    scale = nominal.link_mass_kg.max() / 3.42  # friction grows with the arm's size (UR3 = 1)
    friction = FrictionParameters(
        static_nm=scale * rng.uniform(0.2, 0.8, n),
        coulomb_nm=scale * rng.uniform(0.5, 2.0, n),
        viscous_nm_s_per_rad=scale * rng.uniform(0.2, 1.5, n),
        offset_nm=scale * rng.uniform(-0.2, 0.2, n),
        stribeck_velocity_rad_s=rng.uniform(0.03, 0.2, n),
        coulomb_velocity_rad_s=np.full(n, 0.01),
    )
    return replace(nominal, link_mass_kg=mass, link_com_m=com, link_inertia_kgm2=np.array(inertia),
                   rotor_inertia_kgm2=nominal.rotor_inertia_kgm2 * (1 + relative * rng.uniform(-1, 1, n)),
                   friction=friction, provenance={"source": "synthetic perturbed truth", "seed": seed})


def synthetic_recording(truth: DynamicModel, *, duration_s: float = 30.0, rate_hz: float = 500.0, seed: int = 0,
                        torque_noise_nm: float | np.ndarray = 0.0, position_noise_rad: float = 0.0,
                        harmonics: int = 5, base_frequency_hz: float = 0.1) -> SyntheticRecording:
    """Recording of ``truth`` following a random Fourier trajectory, with optional Gaussian noise."""
    robot = truth.robot_model()
    t, q, qd, qdd = fourier_trajectory(robot, duration_s=duration_s, rate_hz=rate_hz, seed=seed,
                                       harmonics=harmonics, base_frequency_hz=base_frequency_hz)
    tau = inverse_dynamics(truth, q, qd, qdd)
    rng = np.random.default_rng(seed + 1000)
    tau_meas = tau + rng.normal(size=tau.shape) * np.asarray(torque_noise_nm)
    q_meas = q + rng.normal(size=q.shape) * position_noise_rad
    return SyntheticRecording(time_s=t, q_rad=q_meas, qd_rad_s=qd, qdd_rad_s2=qdd, effort_nm=tau_meas)


def synthetic_ur_recording(truth: DynamicModel, drive_gains_nm_per_a, *, duration_s: float = 20.0,
                           rate_hz: float = 100.0, seed: int = 0, torque_noise_nm: float | np.ndarray = 0.0):
    """A :class:`~robot_dynamics_id.io.recording.Recording` with the signals a UR reports, from ``truth``:

    ``current_a`` = joint torque / ``drive_gains_nm_per_a``; ``effort_nm`` = the joint torque (a torque
    interface); ``target_moment_nm`` = the nominal model's rigid-body torque (UR's model: no friction) and
    ``target_current_a`` = that / the gains (no friction either, unlike the simulator's: sim/plant.py);
    ``current_as_torque_nm`` = joint torque minus the nominal gravity (UR's gravity-compensated
    ``actual_current_as_torque``). Fast (no simulator): for tests of the torque-source rule, the data checks
    and validation.
    """
    from ..io.recording import Recording, RecordingSource
    from ..robots.model import load_robot

    syn = synthetic_recording(truth, duration_s=duration_s, rate_hz=rate_hz, seed=seed,
                              torque_noise_nm=torque_noise_nm)
    gains = np.broadcast_to(np.asarray(drive_gains_nm_per_a, float), (truth.n_joints,))
    nominal = load_robot(truth.robot, gravity_m_s2=truth.gravity_m_s2)  # the installation's mount
    data = nominal.model.createData()
    moment = np.array([pin.rnea(nominal.model, data, q, qd, qdd)
                       for q, qd, qdd in zip(syn.q_rad, syn.qd_rad_s, syn.qdd_rad_s2)])
    gravity = np.array([pin.computeGeneralizedGravity(nominal.model, data, q) for q in syn.q_rad])
    return Recording(
        joint_names=tuple(nominal.joint_names), time_s=syn.time_s, q_rad=syn.q_rad, qd_rad_s=syn.qd_rad_s,
        current_a=syn.effort_nm / gains, target_current_a=moment / gains, target_moment_nm=moment,
        effort_nm=syn.effort_nm, current_as_torque_nm=syn.effort_nm - gravity,
        source=RecordingSource(f"synthetic {truth.robot}", "synthetic"))
