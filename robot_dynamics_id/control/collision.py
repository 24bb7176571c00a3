"""Sensorless collision detection on the identified model: momentum observer, thresholds from data, detector.

The generalized-momentum observer (De Luca & Mattone 2003; Haddadin, De Luca & Albu-Schäffer, "Robot
collisions: a survey on detection, isolation, and identification", T-RO 2017, Sec. IV-C, eq. (22))::

    r(t) = K_O [ p(t) − ∫_0^t (τ_m + C(q, q̇)ᵀ q̇ − g(q) − τ_f(q̇) + r) ds − p(0) ],   p = M(q) q̇

follows the external joint torque through a first-order low-pass, ṙ = K_O (τ_ext − r), without joint
accelerations. Here τ_m is the motor current × the model's drive gains (what both CB3 and e-Series
report, at 125 and 500 Hz) and τ_f the model's joint friction; whatever the model gets wrong appears in
r as well, so the residual of a collision-free run measures the model's accuracy.

Discretised on the samples' own timestamps (a missed RTDE sample widens one step, it does not bend the
estimate): with the momentum difference over one sample and ``a = exp(−K_O Δt)``::

    r_k = a r_{k−1} + (1 − a) [ (p_k − p_{k−1}) / Δt − (τ_m,k − τ_f,k + β_k) ],   β = Cᵀ q̇ − g

— the exact discretisation of ṙ = K_O (τ_ext − r) for a sample-and-hold τ_ext, stable for any Δt
(the forward-Euler form ``1 − K_O Δt`` instead of ``a`` needs K_O Δt < 1).

Thresholds (:class:`CollisionThresholds`) come from the residual of a collision-free recording
(:func:`estimate_thresholds`, run by ``rdi validate --collision-thresholds``): per joint and per band of
joint speed |q̇| — near zero speed friction is least predictable (stiction, Stribeck) — a quantile of
|r| times ``1 + margin``. The band of each sample is its own speed; at run time the threshold of a
joint falls back from a higher band no faster than the observer's residual decays (time constant
1/K_O), so a residual left over from a slow phase is not taken for a collision.

:class:`CollisionDetector` compares |r| with the thresholds every sample and, at the first crossing,
reports the joint with the largest ratio, the time, and the isolation the survey describes (Sec. V):
a contact on link i produces torque only on joints ≤ i (τ_ext = J_cᵀ F, whose columns after the
contact link are zero), so the highest joint over its threshold bounds the contact link from below.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..dynamics.drive import DriveGainError, check_drive_gains
from ..dynamics.friction import friction_torque
from ..io.model_file import DynamicModel
from ..robot_state import RobotState, SafetyMode

__all__ = [
    "DEFAULT_MARGIN",
    "DEFAULT_QUANTILE",
    "DEFAULT_VELOCITY_EDGES_RAD_S",
    "CollisionDetector",
    "CollisionEvent",
    "CollisionModelError",
    "CollisionMonitor",
    "CollisionThresholds",
    "MomentumResidual",
    "check_observer_gain",
    "default_observer_gain_per_s",
    "estimate_thresholds",
    "observer_residuals",
]

#: |q̇| band edges (rad/s): standstill/stiction, Stribeck region, slow, normal motion
DEFAULT_VELOCITY_EDGES_RAD_S = (0.02, 0.1, 0.5)
#: quantile of |r| per band taken from the collision-free recording
DEFAULT_QUANTILE = 0.999
#: threshold = quantile × (1 + margin). 1.0: for a Gaussian residual the 99.9 % quantile is 3.3 σ and
#: twice that, 6.6 σ, is exceeded with probability ~4e-11 per sample — under one false alarm in 10^4 h
#: at 500 Hz; a 1 h run's largest Gaussian sample is ~5.4 σ, 1.6x the quantile of a 30 s recording.
DEFAULT_MARGIN = 1.0
#: a band needs this many samples of a joint for its own quantile; fewer: the joint's largest band value
MIN_BAND_SAMPLES = 200
#: a gap between samples longer than this many observer time constants restarts the observer
_RESTART_AFTER_TIME_CONSTANTS = 2.0
#: the largest K_O Δt an observer may run with: beyond it the discrete filter is no longer the continuous
#: one, and at _RESTART_AFTER_TIME_CONSTANTS every sample would restart it (the residual stays 0: nothing
#: is detected); the default is 0.25
MAX_GAIN_TIMES_PERIOD = 1.0


class CollisionModelError(ValueError):
    """Collision thresholds are missing, malformed or do not fit the model/robot; the message names the fix."""


def check_observer_gain(gain_per_s: float, rate_hz: float, *, fix: str) -> None:
    """CollisionModelError unless 0 < K_O and K_O / rate <= :data:`MAX_GAIN_TIMES_PERIOD` (``fix`` ends the message)."""
    if not (math.isfinite(gain_per_s) and gain_per_s > 0):
        raise CollisionModelError(f"observer gain must be > 0 1/s, got {gain_per_s}: {fix}")
    if gain_per_s / rate_hz > MAX_GAIN_TIMES_PERIOD:
        raise CollisionModelError(
            f"observer gain {gain_per_s:g} 1/s is too large for {rate_hz:g} Hz samples (gain x period "
            f"{gain_per_s / rate_hz:.3g} > {MAX_GAIN_TIMES_PERIOD:g}: the observer would restart every sample and "
            f"detect nothing; default {default_observer_gain_per_s(rate_hz):g} 1/s): {fix}")


def default_observer_gain_per_s(rate_hz: float) -> float:
    """K_O for a sample rate: 50 1/s (20 ms time constant) at 500 Hz, 31.25 1/s at 125 Hz (K_O Δt = 0.25).

    The time constant bounds the detection delay of a step contact from below (~0.7/K_O to half the
    step); four samples per time constant keep the discrete filter close to the continuous one."""
    return float(min(50.0, 0.25 * float(rate_hz)))


# ------------------------------------------------------------------------------------------ observer
class MomentumResidual:
    """The generalized-momentum observer of one arm model (see the module docstring).

    ``model``: the (identified) :class:`DynamicModel`: inertials, friction, drive gains. ``payload_kg`` /
    ``payload_com_m`` (tool0 frame): a tool the arm carries, as UR's "set payload" (a point mass).
    """

    def __init__(self, model: DynamicModel, *, gain_per_s: float, payload_kg: float = 0.0,
                 payload_com_m=(0.0, 0.0, 0.0)) -> None:
        if not (gain_per_s > 0 and math.isfinite(gain_per_s)):
            raise CollisionModelError(f"observer gain must be > 0 1/s, got {gain_per_s}")
        if payload_kg < 0:
            raise CollisionModelError(f"payload mass must be >= 0 kg, got {payload_kg}")
        robot = model.robot_model()
        pm = robot.model.copy()
        if payload_kg > 0:
            tool0 = pm.frames[robot.tool_frame_id]
            inertia = pin.Inertia(float(payload_kg), np.asarray(payload_com_m, float), np.zeros((3, 3)))
            pm.inertias[tool0.parentJoint] = pm.inertias[tool0.parentJoint] + tool0.placement.act(inertia)
        self.model = model
        self.gain_per_s = float(gain_per_s)
        self.n_joints = model.n_joints
        self._pin = pm
        self._data = pm.createData()
        if model.drive_gains_nm_per_a is None:
            raise CollisionModelError("the collision observer turns motor currents into torques, but the model has no "
                                      "drive gains (drive_gains_nm_per_a: null): identify the model from currents "
                                      "with --drive-gains, or set the gains in the model file")
        try:
            self._gains = check_drive_gains(model.drive_gains_nm_per_a, model.n_joints,
                                            what="the model's drive_gains_nm_per_a")
        except DriveGainError as exc:
            raise CollisionModelError(str(exc)) from None
        self.external_torque_nm = np.zeros(self.n_joints)
        self._p_prev = np.zeros(self.n_joints)
        self._t_prev: float | None = None

    def reset(self) -> None:
        """Start again at the next sample (r = 0)."""
        self._t_prev = None
        self.external_torque_nm[:] = 0.0

    def drive_torque_nm(self, current_a: np.ndarray, qd_rad_s: np.ndarray) -> np.ndarray:
        """τ_m − τ_f: motor current × drive gains minus the model's friction at ``qd_rad_s``.

        A load-dependent Coulomb term (μ |τ_load| sgn q̇, dynamics/friction.py) sees the measured motor torque
        τ_m as the torque the joint transmits: it differs from the links' rigid-body torque the identifier
        uses by the rotor's inertia torque and the friction itself, which changes the term by μ times those
        (μ is a few percent), and it needs no acceleration, which the observer does not have."""
        motor = np.asarray(current_a, float) * self._gains
        load = motor if self.model.friction.has_load_term else None
        return motor - friction_torque(self.model.friction, qd_rad_s, load_torque_nm=load)

    def update(self, time_s: float, q_rad: np.ndarray, qd_rad_s: np.ndarray, current_a: np.ndarray) -> np.ndarray:
        """One sample in; the external joint torque estimate r (Nm, a reused array) out.

        The first sample (or one after a gap of more than two time constants, or a clock going back)
        starts the observer at r = 0; a repeated timestamp returns the previous estimate."""
        return self.update_drive_torque(time_s, q_rad, qd_rad_s, self.drive_torque_nm(current_a, qd_rad_s))

    def update_drive_torque(self, time_s: float, q_rad: np.ndarray, qd_rad_s: np.ndarray,
                            drive_torque_nm: np.ndarray) -> np.ndarray:
        """:meth:`update` with τ_m − τ_f already computed (:meth:`drive_torque_nm`: many samples at once)."""
        m, d = self._pin, self._data
        t = float(time_s)
        M = pin.crba(m, d, q_rad)
        M = np.triu(M) + np.triu(M, 1).T
        momentum = M @ qd_rad_s
        if self._t_prev is not None and t == self._t_prev:
            return self.external_torque_nm
        dt = None if self._t_prev is None else t - self._t_prev
        if dt is None or dt < 0 or dt * self.gain_per_s > _RESTART_AFTER_TIME_CONSTANTS:
            self.external_torque_nm[:] = 0.0
        else:
            coriolis = pin.computeCoriolisMatrix(m, d, q_rad, qd_rad_s)
            gravity = pin.computeGeneralizedGravity(m, d, q_rad)
            beta = coriolis.T @ qd_rad_s - gravity
            estimate = (momentum - self._p_prev) / dt - (drive_torque_nm + beta)
            a = math.exp(-self.gain_per_s * dt)
            self.external_torque_nm *= a
            self.external_torque_nm += (1.0 - a) * estimate
        self._p_prev = momentum
        self._t_prev = t
        return self.external_torque_nm


def observer_residuals(model: DynamicModel, time_s, q_rad, qd_rad_s, current_a, *, gain_per_s: float,
                       payload_kg: float = 0.0, payload_com_m=(0.0, 0.0, 0.0)) -> np.ndarray:
    """The observer's residual r (N, n) over a recording, sample by sample exactly as it runs on the robot."""
    observer = MomentumResidual(model, gain_per_s=gain_per_s, payload_kg=payload_kg, payload_com_m=payload_com_m)
    t = np.asarray(time_s, float)
    q, qd, i = (np.asarray(a, float) for a in (q_rad, qd_rad_s, current_a))
    if not (q.shape == qd.shape == i.shape == (t.size, model.n_joints)):
        raise CollisionModelError(f"recording arrays must be (N, {model.n_joints}) with N = {t.size} samples; got "
                                  f"q {q.shape}, qd {qd.shape}, current {i.shape}")
    drive = observer.drive_torque_nm(i, qd)  # friction for every sample at once
    out = np.empty_like(q)
    for k in range(t.size):
        out[k] = observer.update_drive_torque(t[k], q[k], qd[k], drive[k])
    return out


# ---------------------------------------------------------------------------------------- thresholds
@dataclass(frozen=True, eq=False)
class CollisionThresholds:
    """Per-joint residual thresholds (Nm) by band of joint speed, and how they were measured.

    Band b of joint j holds |q̇_j| in [edges[b−1], edges[b]) (edges[−1] = 0, edges[B−1] = ∞);
    ``threshold_nm`` has shape (n, B) with B = len(velocity_edges_rad_s) + 1. The observer gain is
    part of the thresholds: another gain filters the residual differently.
    """

    joint_names: tuple[str, ...]
    velocity_edges_rad_s: np.ndarray
    threshold_nm: np.ndarray
    observer_gain_per_s: float
    rate_hz: float
    quantile: float = DEFAULT_QUANTILE
    margin: float = DEFAULT_MARGIN
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        edges = np.asarray(self.velocity_edges_rad_s, float).ravel()
        th = np.atleast_2d(np.asarray(self.threshold_nm, float))
        n = len(self.joint_names)
        if edges.size and (np.any(edges <= 0) or np.any(np.diff(edges) <= 0) or not np.all(np.isfinite(edges))):
            raise CollisionModelError(f"collision threshold velocity edges must be > 0 and increasing, got "
                                      f"{edges.tolist()}")
        if th.shape != (n, edges.size + 1):
            raise CollisionModelError(f"collision thresholds must have shape ({n}, {edges.size + 1}) (joints x speed "
                                      f"bands), got {th.shape}")
        if not np.all(np.isfinite(th)) or np.any(th <= 0):
            raise CollisionModelError(f"collision thresholds must be finite and > 0 Nm, got {th.tolist()}")
        if not (self.observer_gain_per_s > 0 and self.rate_hz > 0):
            raise CollisionModelError("collision thresholds need the observer gain (1/s) and the rate (Hz) "
                                      "they were measured with, both > 0")
        check_observer_gain(self.observer_gain_per_s, self.rate_hz, fix="measure the thresholds again with "
                            "the default gain (rdi validate --collision-thresholds, no --collision-gain)")
        object.__setattr__(self, "velocity_edges_rad_s", edges)
        object.__setattr__(self, "threshold_nm", th)
        object.__setattr__(self, "joint_names", tuple(self.joint_names))

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    def band(self, qd_rad_s: np.ndarray) -> np.ndarray:
        """Band index per joint for joint speeds ``qd_rad_s``."""
        return np.searchsorted(self.velocity_edges_rad_s, np.abs(qd_rad_s), side="right")

    def at(self, qd_rad_s: np.ndarray) -> np.ndarray:
        """Thresholds (Nm) per joint at joint speeds ``qd_rad_s`` (no history: see CollisionDetector)."""
        return self.threshold_nm[np.arange(self.n_joints), self.band(qd_rad_s)]

    def to_dict(self) -> dict:
        return {
            "joint_names": list(self.joint_names),
            "velocity_edges_rad_s": [float(v) for v in self.velocity_edges_rad_s],
            "threshold_nm": [[float(v) for v in row] for row in self.threshold_nm],
            "observer_gain_per_s": float(self.observer_gain_per_s),
            "rate_hz": float(self.rate_hz),
            "quantile": float(self.quantile),
            "margin": float(self.margin),
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_dict(cls, data, *, source: str = "model file") -> CollisionThresholds:
        if not isinstance(data, dict):
            raise CollisionModelError(f"{source}: collision_thresholds must be a mapping")
        try:
            return cls(joint_names=tuple(data["joint_names"]),
                       velocity_edges_rad_s=np.asarray(data["velocity_edges_rad_s"], float),
                       threshold_nm=np.asarray(data["threshold_nm"], float),
                       observer_gain_per_s=float(data["observer_gain_per_s"]), rate_hz=float(data["rate_hz"]),
                       quantile=float(data.get("quantile", DEFAULT_QUANTILE)),
                       margin=float(data.get("margin", DEFAULT_MARGIN)), provenance=dict(data.get("provenance") or {}))
        except CollisionModelError as exc:
            raise CollisionModelError(f"{source}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise CollisionModelError(f"{source}: malformed collision_thresholds ({exc!r}); write them with "
                                      "`rdi validate --collision-thresholds`") from None

    @classmethod
    def from_model(cls, model: DynamicModel, *, source: str = "model file") -> CollisionThresholds:
        """The thresholds stored in a model file; raises naming the command that writes them."""
        data = model.collision_thresholds
        if data is None:
            raise CollisionModelError(
                f"{source} holds no collision thresholds: measure them on a collision-free recording with "
                "`rdi validate --model MODEL --data BAG --out DIR --collision-thresholds`")
        thresholds = cls.from_dict(data, source=source)
        if tuple(thresholds.joint_names) != tuple(model.joint_names):
            raise CollisionModelError(f"{source}: collision thresholds are for joints {list(thresholds.joint_names)}, "
                                      f"the model has {list(model.joint_names)}")
        return thresholds


def estimate_thresholds(residual_nm: np.ndarray, qd_rad_s: np.ndarray, *, joint_names, observer_gain_per_s: float,
                        rate_hz: float, quantile: float = DEFAULT_QUANTILE, margin: float = DEFAULT_MARGIN,
                        velocity_edges_rad_s=DEFAULT_VELOCITY_EDGES_RAD_S,
                        min_band_samples: int = MIN_BAND_SAMPLES, provenance: dict | None = None
                        ) -> CollisionThresholds:
    """Thresholds from the observer residual of a collision-free recording (module docstring).

    Per joint and speed band: ``quantile`` of |r| × (1 + ``margin``). A band with fewer than
    ``min_band_samples`` samples of a joint takes that joint's largest band value (the recording did not
    show that speed often enough to measure it; the conservative choice). Raises when the recording is too
    short to measure any band.
    """
    r = np.abs(np.asarray(residual_nm, float))
    qd = np.asarray(qd_rad_s, float)
    names = tuple(joint_names)
    if r.ndim != 2 or r.shape != qd.shape or r.shape[1] != len(names):
        raise CollisionModelError(f"residual and joint speeds must both be (N, {len(names)}), got {r.shape}, "
                                  f"{qd.shape}")
    if not 0.5 <= quantile <= 1.0 or margin < 0:
        raise CollisionModelError(f"quantile must be in [0.5, 1] and margin >= 0, got {quantile}, {margin}")
    if not np.all(np.isfinite(r)):
        raise CollisionModelError("the residual contains NaN or infinity: check the recording's currents and "
                                  "joint states")
    edges = np.asarray(velocity_edges_rad_s, float)
    n, bands = len(names), edges.size + 1
    level = np.full((n, bands), np.nan)
    counts = np.zeros((n, bands), int)
    which = np.searchsorted(edges, np.abs(qd), side="right")
    for j in range(n):
        for b in range(bands):
            sel = r[which[:, j] == b, j]
            counts[j, b] = sel.size
            if sel.size >= min_band_samples:
                level[j, b] = np.quantile(sel, quantile)
    if np.any(np.all(np.isnan(level), axis=1)):
        raise CollisionModelError(f"the recording is too short for collision thresholds: fewer than {min_band_samples} "
                                  "samples in every speed band of some joint; record at least 20 s of the excitation")
    filled = np.where(np.isnan(level), np.nanmax(level, axis=1, keepdims=True), level)
    # A residual that never left the sensor's resolution would give a zero threshold: keep it above
    # the smallest residual step the data can show.
    floor = max(1e-3, float(np.quantile(r, 0.5)) * 1e-2)
    thresholds = np.maximum(filled * (1.0 + margin), floor)
    info = {"samples": int(r.shape[0]), "band_samples": counts.tolist(),
            "max_residual_nm": [float(v) for v in r.max(axis=0)]}
    info.update(provenance or {})
    return CollisionThresholds(joint_names=names, velocity_edges_rad_s=edges, threshold_nm=thresholds,
                               observer_gain_per_s=float(observer_gain_per_s), rate_hz=float(rate_hz),
                               quantile=float(quantile), margin=float(margin), provenance=info)


# ------------------------------------------------------------------------------------------ detector
@dataclass(frozen=True)
class CollisionEvent:
    """A detected collision: when, which joint crossed first (largest ratio), and the isolation."""

    time_s: float
    joint: int
    joint_name: str
    external_torque_nm: tuple[float, ...]
    threshold_nm: tuple[float, ...]
    #: joints over their threshold at detection (0-based)
    joints_over: tuple[int, ...]
    #: the contact is on link ``contact_link_at_least`` or further out (1-based link after joint j is j + 1)
    contact_link_at_least: int

    @property
    def ratio(self) -> float:
        return abs(self.external_torque_nm[self.joint]) / self.threshold_nm[self.joint]

    def describe(self) -> str:
        t = self.time_s
        # a robot loop's time since its start, or a message stamp (ROS time: seconds since 1970), as a clock time
        ms = int(round(t * 1000.0))
        when = (f"{time.strftime('%H:%M:%S', time.gmtime(ms // 1000))}.{ms % 1000:03d} UTC (stamp {t:.3f} s)"
                if t > 1e9 else f"t = {t:.3f} s")
        return (f"collision at {when}: joint {self.joint} ({self.joint_name}) external torque "
                f"{self.external_torque_nm[self.joint]:+.2f} Nm over its threshold "
                f"{self.threshold_nm[self.joint]:.2f} Nm"
                f" (joints over: {list(self.joints_over)}; contact on link {self.contact_link_at_least} or beyond)")

    def as_dict(self) -> dict:
        return {"time_s": self.time_s, "joint": self.joint, "joint_name": self.joint_name, "ratio": self.ratio,
                "external_torque_nm": list(self.external_torque_nm), "threshold_nm": list(self.threshold_nm),
                "joints_over": list(self.joints_over), "contact_link_at_least": self.contact_link_at_least}


class CollisionDetector:
    """Observer + thresholds: call :meth:`update` with every robot sample; a collision latches until :meth:`reset`.

    Args:
        model: the identified model (inertials, friction, drive gains).
        thresholds: from the same model's collision-free residual (:func:`estimate_thresholds`).
        threshold_scale: multiplies every threshold (> 1: less sensitive).
        payload_kg, payload_com_m: the tool at the flange (tool0 frame), as UR's "set payload".
        rate_hz: the rate the detector runs at; thresholds measured at another rate are refused (the
            residual's noise depends on it).
    """

    def __init__(self, model: DynamicModel, thresholds: CollisionThresholds, *, threshold_scale: float = 1.0,
                 payload_kg: float = 0.0, payload_com_m=(0.0, 0.0, 0.0), rate_hz: float | None = None) -> None:
        if tuple(thresholds.joint_names) != tuple(model.joint_names):
            raise CollisionModelError(f"thresholds are for joints {list(thresholds.joint_names)}, the model has "
                                      f"{list(model.joint_names)}")
        if not (threshold_scale > 0 and math.isfinite(threshold_scale)):
            raise CollisionModelError(f"threshold scale must be > 0, got {threshold_scale}")
        if rate_hz is not None and abs(float(rate_hz) - thresholds.rate_hz) > 0.02 * thresholds.rate_hz:
            raise CollisionModelError(
                f"the collision thresholds were measured at {thresholds.rate_hz:g} Hz, the robot runs at "
                f"{rate_hz:g} Hz:"
                f" measure them on a recording at {rate_hz:g} Hz (`rdi validate --collision-thresholds`)")
        self.thresholds = thresholds
        self.threshold_scale = float(threshold_scale)
        self.observer = MomentumResidual(model, gain_per_s=thresholds.observer_gain_per_s, payload_kg=payload_kg,
                                         payload_com_m=payload_com_m)
        self.joint_names = tuple(model.joint_names)
        self.robot = model.robot  # the arm the model (and its thresholds) are of
        self.notes: list[str] = []  # for the node to warn about (hardware/collision_config.py)
        n = model.n_joints
        #: thresholds in use at the latest sample (Nm)
        self.threshold_nm = np.zeros(n)
        #: r / threshold at the latest sample (|value| >= 1: over the threshold)
        self.ratio = np.zeros(n)
        self.event: CollisionEvent | None = None
        self._t_prev: float | None = None

    @property
    def external_torque_nm(self) -> np.ndarray:
        return self.observer.external_torque_nm

    def reset(self) -> None:
        """Forget the collision and the observer's history (e.g. after the protective stop was cleared)."""
        self.event = None
        self.observer.reset()
        self._t_prev = None

    def update(self, time_s: float, q_rad: np.ndarray, qd_rad_s: np.ndarray, current_a: np.ndarray
               ) -> CollisionEvent | None:
        """One robot sample; returns a :class:`CollisionEvent` at the sample that detects a collision, else None."""
        return self.update_drive_torque(time_s, q_rad, qd_rad_s, self.observer.drive_torque_nm(current_a, qd_rad_s))

    def update_drive_torque(self, time_s: float, q_rad: np.ndarray, qd_rad_s: np.ndarray,
                            drive_torque_nm: np.ndarray) -> CollisionEvent | None:
        """:meth:`update` with τ_m − τ_f already computed (``self.observer.drive_torque_nm``)."""
        r = self.observer.update_drive_torque(time_s, q_rad, qd_rad_s, drive_torque_nm)
        band = self.thresholds.at(qd_rad_s) * self.threshold_scale
        t = float(time_s)
        if self._t_prev is None or t <= self._t_prev:
            self.threshold_nm[:] = band
        else:
            # fall back from a higher band no faster than the residual decays (1 / K_O)
            a = math.exp(-self.thresholds.observer_gain_per_s * (t - self._t_prev))
            np.maximum(band, a * self.threshold_nm + (1.0 - a) * band, out=self.threshold_nm)
        self._t_prev = t
        np.divide(r, self.threshold_nm, out=self.ratio)
        if self.event is not None:
            return None
        over = np.flatnonzero(np.abs(self.ratio) >= 1.0)
        if over.size == 0:
            return None
        j = int(over[np.argmax(np.abs(self.ratio[over]))])
        self.event = CollisionEvent(time_s=t, joint=j, joint_name=self.joint_names[j],
                                    external_torque_nm=tuple(float(v) for v in r),
                                    threshold_nm=tuple(float(v) for v in self.threshold_nm),
                                    joints_over=tuple(int(v) for v in over), contact_link_at_least=int(over.max()) + 1)
        return self.event


class CollisionMonitor:
    """A :class:`CollisionDetector` as the robot loop's cycle monitor: RobotState in, a stop reason out.

    Every fresh sample goes through the detector (``on_sample(time_s, external_torque_nm, threshold_nm)``
    sees each, e.g. to publish them); at a collision ``on_collision(event)`` is called and the reason is
    returned so that the loop makes a protective stop — unless ``react`` is False (report only). After a
    collision the monitor stays latched (no second stop for the same contact) until the robot's protective
    stop has been cleared (its safety mode back to normal after it was not) or :meth:`rearm` is called.
    """

    def __init__(self, detector: CollisionDetector, *, react: bool = True, on_collision=None, on_sample=None) -> None:
        self.detector = detector
        self.react = bool(react)
        self._on_collision = on_collision
        self._on_sample = on_sample
        self._stopped_since_event = False
        self._rearm = False

    @property
    def event(self) -> CollisionEvent | None:
        return self.detector.event

    def rearm(self) -> None:
        """Forget the latched collision at the next sample (any thread)."""
        self._rearm = True

    def __call__(self, state: RobotState) -> str | None:
        detector = self.detector
        normal = state.safety_mode in (int(SafetyMode.NORMAL), int(SafetyMode.REDUCED))
        if detector.event is not None:
            if not normal:
                self._stopped_since_event = True
            elif self._stopped_since_event:
                self._rearm = True
        if self._rearm:
            self._rearm = self._stopped_since_event = False
            detector.reset()
        event = detector.update(state.timestamp_s, state.q_rad, state.qd_rad_s, state.current_a)
        if self._on_sample is not None:
            self._on_sample(state.timestamp_s, detector.external_torque_nm, detector.threshold_nm)
        if event is None:
            return None
        if self._on_collision is not None:
            self._on_collision(event)
        return event.describe() if self.react else None
