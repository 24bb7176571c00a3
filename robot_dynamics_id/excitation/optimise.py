"""Optimised excitation: Fourier trajectories that minimise the condition number of the base regressor.

Beyond the schedule of seeds.md P3, the excitation is chosen the way Swevers et
al. (IEEE T-RA 13(5), 1997) propose: per-joint finite Fourier series
(excitation/fourier.py, at rest at both ends by construction) whose coefficients
minimise the condition number of the column-normalised base-parameter regressor
(rigid body + rotor + friction columns, dynamics/base_parameters.py) over one
period, subject to

* joint position limits (the robot's, intersected with a window around a
  centre pose, so the arm does not fold onto itself), velocity and acceleration
  limits (the robot's × the planning scales) — linear in the coefficients, so
  they are exact linear constraints on a dense time grid;
* the table keep-out: every joint origin and the tool frame above
  ``table_height_m`` (pinocchio forward kinematics, analytic Jacobian).

Speed: the cost is evaluated on a decimated grid (``cost_rate_hz``, 10 Hz by
default: the series has no content above K/period Hz); its gradient is analytic
through the SVD (dσ = uᵀ dW v) and the column normalisation, with the regressor's
derivatives with respect to each sample's (q, qd, qdd) by forward differences in
one batched regressor call. SLSQP runs from ``n_starts`` seeded random feasible
starts; the best feasible result is kept. The result is then checked at the
robot rate with :func:`excitation.checker.check_trajectory` and, if sampling
between grid points left a violation, shrunk until it passes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin
import scipy.optimize

from ..dynamics.base_parameters import BaseParameterMap, compute_base_parameters, condition_number
from ..dynamics.regressor import DEFAULT_COULOMB_VELOCITY_RAD_S, DEFAULT_STRIBECK_VELOCITY_RAD_S, full_regressor
from ..progress import ProgressCallback
from ..robots.model import RobotModel
from ._blas import single_threaded_blas
from .checker import ExcitationLimits, TrajectoryLimitError, check_trajectory, keep_out_points
from .fourier import FourierTrajectory, fourier_basis
from .prbs import UR_HOME_POSITION_RAD
from .trajectory import JointTrajectory

__all__ = [
    "FourierOptimisationResult",
    "FourierOptimisationSettings",
    "excitation_condition_number",
    "optimise_fourier_excitation",
    "robot_rate_hz",
]


def robot_rate_hz(robot: RobotModel) -> float:
    """The controller rate of ``robot`` (125 Hz CB3, 500 Hz e-Series; 125 Hz for a custom URDF)."""
    return float(robot.description.control_rate_hz) if robot.description is not None else 125.0


@dataclass(frozen=True, kw_only=True)
class FourierOptimisationSettings:
    """What to optimise and under which limits (all saved with the result).

    ``duration_s`` must be a whole number of ``period_s``. ``velocity_scale`` and
    ``acceleration_scale`` multiply the robot's limits (and ``safety_factor`` all
    of them); the optimiser aims at ``limit_margin`` of those so that the dense
    check at the robot rate passes. ``position_centre_rad`` (default: the UR
    upright home pose, or zeros) ± ``position_range_rad`` bounds each joint.
    """

    duration_s: float = 60.0
    period_s: float = 10.0
    n_harmonics: int = 5
    velocity_scale: float = 0.5
    acceleration_scale: float = 0.5
    safety_factor: float = 1.0
    table_height_m: float | None = 0.05
    position_centre_rad: Sequence[float] | None = None
    position_range_rad: Sequence[float] | float = np.pi / 2
    cost_rate_hz: float = 10.0
    constraint_rate_hz: float = 10.0
    limit_margin: float = 0.97
    keep_out_margin_m: float = 0.01
    n_starts: int = 2
    max_iterations: int = 120
    seed: int = 0
    friction: bool = True
    rotor: bool = True
    stribeck_velocity_rad_s: float = DEFAULT_STRIBECK_VELOCITY_RAD_S
    coulomb_velocity_rad_s: float = DEFAULT_COULOMB_VELOCITY_RAD_S

    def __post_init__(self) -> None:
        if not (self.period_s > 0 and self.duration_s > 0):
            raise ValueError("period_s and duration_s must be > 0")
        periods = self.duration_s / self.period_s
        if abs(periods - round(periods)) > 1e-6 or round(periods) < 1:
            raise ValueError(f"duration_s {self.duration_s} is not a whole number of periods of {self.period_s} s; "
                             "choose --period so that it divides --duration")
        if self.n_harmonics < 2:
            raise ValueError("n_harmonics must be >= 2 (harmonic 1 is used to start and end at rest)")
        if not 0 < self.limit_margin <= 1:
            raise ValueError("limit_margin must be in (0, 1]")
        if self.n_starts < 1 or self.max_iterations < 1:
            raise ValueError("n_starts and max_iterations must be >= 1")
        if self.cost_rate_hz * self.period_s < 2 * self.n_harmonics:
            raise ValueError(f"cost_rate_hz {self.cost_rate_hz} under-samples {self.n_harmonics} harmonics of a "
                             f"{self.period_s} s period")

    @property
    def n_periods(self) -> int:
        return int(round(self.duration_s / self.period_s))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("position_centre_rad", "position_range_rad"):
            if out[key] is not None:
                out[key] = np.asarray(out[key], float).tolist()
        return out


@dataclass
class FourierOptimisationResult:
    """The optimised Fourier excitation and how it was found.

    ``condition_number`` is measured on the optimiser's decimated grid (one period at
    ``cost_rate_hz``); :func:`excitation_condition_number` gives it at the robot rate.
    ``shrink_factor`` < 1 says the motion was scaled down to pass the dense check.
    """

    fourier: FourierTrajectory
    condition_number: float
    limits: ExcitationLimits
    settings: FourierOptimisationSettings
    robot: str
    wall_time_s: float
    n_cost_evaluations: int
    shrink_factor: float
    joint_names: tuple[str, ...] = ()
    starts: list[dict[str, Any]] = field(default_factory=list)

    def to_trajectory(self, *, rate_hz: float = 125.0, joint_names: Sequence[str] | None = None) -> JointTrajectory:
        """Robot-rate samples carrying the planning limits and optimisation record (ready to save)."""
        metadata = {
            "generator": "excitation.optimise.optimise_fourier_excitation",
            "condition_number": float(self.condition_number),
            "optimisation_wall_time_s": float(self.wall_time_s),
            "n_cost_evaluations": int(self.n_cost_evaluations),
            "shrink_factor": float(self.shrink_factor),
            "settings": self.settings.to_dict(),
            "starts": self.starts,
        }
        trajectory = self.fourier.to_trajectory(rate_hz=rate_hz, joint_names=joint_names or self.joint_names or None,
                                                robot=self.robot,
                                                metadata=metadata)
        trajectory.limits = self.limits.to_dict()
        return trajectory


def excitation_condition_number(robot: RobotModel, trajectory: JointTrajectory, *, rate_hz: float | None = None,
                                base_map: BaseParameterMap | None = None, friction: bool = True,
                                rotor: bool = True) -> float:
    """Normalised condition number of the base regressor over ``trajectory`` (optionally resampled)."""
    if rate_hz is not None:
        trajectory = trajectory.resample(rate_hz)
    base_map = base_map or compute_base_parameters(robot, friction=friction, rotor=rotor)
    y, _ = full_regressor(robot, trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2,
                          friction=base_map.friction, rotor=base_map.rotor)
    return condition_number(base_map.base_regressor(y), normalise=True)


class _Problem:
    """Decision vector x = per joint [a_free (K−1), b_free (K−1), offset (1)], joint-major."""

    def __init__(self, robot: RobotModel, settings: FourierOptimisationSettings, limits: ExcitationLimits,
                 base_map: BaseParameterMap, lower: np.ndarray, upper: np.ndarray) -> None:
        self.robot, self.settings, self.limits, self.base_map = robot, settings, limits, base_map
        self.n = robot.n_joints
        self.k = settings.n_harmonics
        self.nf = 2 * (self.k - 1)
        self.nx = self.n * (self.nf + 1)
        self.lower, self.upper = lower, upper
        period = settings.period_s
        n_cost = int(round(period * settings.cost_rate_hz))
        self.t_cost = np.arange(n_cost) * period / n_cost  # one period, end excluded (periodic)
        n_con = int(round(period * settings.constraint_rate_hz))
        self.t_con = np.arange(n_con + 1) * period / n_con
        self.phi_cost = self._basis(self.t_cost)
        self.phi_con = self._basis(self.t_con)
        self.cols = base_map.independent_columns
        self.n_evaluations = 0
        self._cache: dict[str, Any] | None = None
        self._keep_out_cache: tuple[bytes, np.ndarray, np.ndarray] | None = None
        self.model = robot.model
        self.data = robot.model.createData()
        self.points = keep_out_points(robot)
        self._linear = self._linear_constraints()

    def _basis(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Φq, Φqd, Φqdd), each (M, 2(K−1)), mapping free coefficients of one joint to q − q0, qd, qdd
        with harmonic 1 eliminated by the rest conditions (fourier.rest_constrained_coefficients)."""
        b = fourier_basis(t, self.settings.period_s, self.k)
        s, c, w = b["sin"], b["cos"], b["omega"]
        ell = np.arange(2, self.k + 1)
        # a_1 = -sum a_l ; b_1 = -sum l b_l
        pq = np.hstack([s[:, 1:] / w[1:] - s[:, :1] / w[0], -c[:, 1:] / w[1:] + c[:, :1] * ell / w[0]])
        pqd = np.hstack([c[:, 1:] - c[:, :1], s[:, 1:] - s[:, :1] * ell])
        pqdd = np.hstack([-s[:, 1:] * w[1:] + s[:, :1] * w[0], c[:, 1:] * w[1:] - c[:, :1] * w[0] * ell])
        return pq, pqd, pqdd

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blocks = np.asarray(x, float).reshape(self.n, self.nf + 1)
        return blocks[:, : self.nf], blocks[:, self.nf]

    def pack(self, theta: np.ndarray, offset: np.ndarray) -> np.ndarray:
        return np.hstack([theta, offset[:, None]]).ravel()

    def motion(self, x: np.ndarray, phi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        theta, offset = self.unpack(x)
        pq, pqd, pqdd = phi
        return pq @ theta.T + offset, pqd @ theta.T, pqdd @ theta.T

    def fourier(self, x: np.ndarray) -> FourierTrajectory:
        theta, offset = self.unpack(x)
        half = self.k - 1
        return FourierTrajectory.from_free_coefficients(
            period_s=self.settings.period_s, offset_rad=offset, a_free_rad_s=theta[:, :half],
            b_free_rad_s=theta[:, half:], n_periods=self.settings.n_periods)

    # ---- cost: log of the normalised condition number, with its analytic gradient ----------------
    def _regressor(self, q, qd, qdd) -> np.ndarray:
        s = self.settings
        y, _ = full_regressor(self.robot, q, qd, qdd, friction=s.friction, rotor=s.rotor,
                              stribeck_velocity_rad_s=s.stribeck_velocity_rad_s,
                              coulomb_velocity_rad_s=s.coulomb_velocity_rad_s)
        return y[:, self.cols]

    def _evaluate(self, x: np.ndarray) -> dict[str, Any]:
        """Cost and the SVD pieces its gradient needs (cached for the last x)."""
        key = np.asarray(x, float).tobytes()
        if self._cache is not None and self._cache["key"] == key:
            return self._cache
        self.n_evaluations += 1
        q, qd, qdd = self.motion(x, self.phi_cost)
        yb = self._regressor(q, qd, qdd)
        norms = np.linalg.norm(yb, axis=0)
        norms = np.where(norms > 0, norms, 1e-300)
        w = yb / norms
        u, sv, vt = np.linalg.svd(w, full_matrices=False)
        value = float(np.log(sv[0] / sv[-1])) if sv[-1] > 0 else 1e3
        self._cache = {"key": key, "value": value, "grad": None, "q": q, "qd": qd, "qdd": qdd, "yb": yb,
                       "norms": norms, "w": w, "u": u, "sv": sv, "vt": vt}
        return self._cache

    def cost(self, x: np.ndarray) -> float:
        """log of the normalised condition number of the base regressor on the cost grid."""
        return self._evaluate(x)["value"]

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """Analytic gradient of :meth:`cost` (SVD perturbation + column normalisation + chain rule)."""
        e = self._evaluate(x)
        if e["grad"] is not None:
            return e["grad"]
        u, sv, vt, w, norms, yb = e["u"], e["sv"], e["vt"], e["w"], e["norms"], e["yb"]
        q, qd, qdd = e["q"], e["qd"], e["qdd"]
        m, n = q.shape
        if sv[-1] <= 0:
            e["grad"] = np.zeros_like(np.asarray(x, float))
            return e["grad"]
        # d log(σ1/σr) = u1ᵀ dW v1 / σ1 − urᵀ dW vr / σr
        g_w = np.outer(u[:, 0], vt[0]) / sv[0] - np.outer(u[:, -1], vt[-1]) / sv[-1]
        # W = Yb / ‖Yb‖ column-wise: dW_i = (I − w_i w_iᵀ) dYb_i / ‖Yb_i‖
        g_y = ((g_w - w * np.sum(w * g_w, axis=0)) / norms).reshape(m, n, -1)
        # Regressor derivative w.r.t. each sample's (q, qd, qdd), forward differences, one batched call.
        h = 1e-6
        z = np.concatenate([q, qd, qdd], axis=1)  # (m, 3n)
        pert = np.repeat(z[None], 3 * n, axis=0)  # (3n, m, 3n)
        idx = np.arange(3 * n)
        pert[idx, :, idx] += h
        pert = pert.reshape(-1, 3 * n)
        yp = self._regressor(pert[:, :n], pert[:, n:2 * n], pert[:, 2 * n:]).reshape(3 * n, m, n, -1)
        dy = (yp - yb.reshape(1, m, n, -1)) / h
        g_z = np.einsum("kmjb,mjb->mk", dy, g_y)  # (m, 3n): d cost / d (q, qd, qdd) per sample
        gq, gqd, gqdd = g_z[:, :n], g_z[:, n:2 * n], g_z[:, 2 * n:]
        pq, pqd, pqdd = self.phi_cost
        g_theta = (pq.T @ gq + pqd.T @ gqd + pqdd.T @ gqdd).T  # (n, nf)
        e["grad"] = self.pack(g_theta, gq.sum(axis=0))
        return e["grad"]

    def cost_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        return self.cost(x), self.gradient(x)

    # ---- constraints (all as g(x) >= 0) ------------------------------------------------------
    def _linear_constraints(self) -> tuple[np.ndarray, np.ndarray]:
        """A, c with A x + c >= 0: position window, velocity and acceleration limits on the dense grid."""
        margin = self.settings.limit_margin
        pq, pqd, pqdd = self.phi_con
        m = pq.shape[0]
        rows, consts = [], []
        ones = np.ones((m, 1))
        vmax = self.limits.velocity_rad_s * margin
        amax = self.limits.acceleration_rad_s2 * margin
        for j in range(self.n):
            def block(mat: np.ndarray) -> np.ndarray:
                out = np.zeros((mat.shape[0], self.nx))
                out[:, j * (self.nf + 1): (j + 1) * (self.nf + 1)] = mat
                return out
            full_q = np.hstack([pq, ones])
            full_qd = np.hstack([pqd, 0 * ones])
            full_qdd = np.hstack([pqdd, 0 * ones])
            rows += [block(-full_q), block(full_q), block(-full_qd), block(full_qd), block(-full_qdd),
                     block(full_qdd)]
            consts += [np.full(m, self.upper[j]), np.full(m, -self.lower[j]), np.full(m, vmax[j]),
                       np.full(m, vmax[j]), np.full(m, amax[j]), np.full(m, amax[j])]
        return np.vstack(rows), np.concatenate(consts)

    def linear_constraint(self, x: np.ndarray) -> np.ndarray:
        a, c = self._linear
        return a @ x + c

    def keep_out(self, x: np.ndarray, *, jacobian: bool = False):
        """Per sample of the constraint grid: lowest point height − (table + margin); optionally d/dx."""
        key = np.asarray(x, float).tobytes()
        if self._keep_out_cache is None or self._keep_out_cache[0] != key:
            values, jac = self._keep_out(x)
            self._keep_out_cache = (key, values, jac)
        _, values, jac = self._keep_out_cache
        return (values, jac) if jacobian else values

    def _keep_out(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # SLSQP asks for values and Jacobian at the same x: compute both in one pass.
        height = self.limits.table_height_m + self.settings.keep_out_margin_m
        q, _, _ = self.motion(x, self.phi_con)
        m = q.shape[0]
        values = np.empty(m)
        jac = np.zeros((m, self.nx))
        pq = self.phi_con[0]
        model, data = self.model, self.data
        for k in range(m):
            pin.computeJointJacobians(model, data, q[k])  # also updates data.oMi
            zs = [data.oMi[idx].translation[2] if kind == "joint"
                  else pin.updateFramePlacement(model, data, idx).translation[2] for _, kind, idx in self.points]
            i = int(np.argmin(zs))
            values[k] = zs[i] - height
            _, kind, idx = self.points[i]
            if kind == "joint":
                jz = pin.getJointJacobian(model, data, idx, pin.LOCAL_WORLD_ALIGNED)[2]
            else:
                jz = pin.getFrameJacobian(model, data, idx, pin.LOCAL_WORLD_ALIGNED)[2]
            # dz/dx: dz/dq_j times dq_j/d(free coefficients, offset) of joint j
            blocks = jac[k].reshape(self.n, self.nf + 1)
            blocks[:, : self.nf] = jz[:, None] * pq[k]
            blocks[:, self.nf] = jz
        return values, jac

    def feasibility(self, x: np.ndarray) -> float:
        """Worst constraint value (>= 0 when feasible)."""
        worst = float(self.linear_constraint(x).min())
        if self.limits.table_height_m is not None:
            worst = min(worst, float(self.keep_out(x).min()))
        return worst

    def random_start(self, rng: np.random.Generator, centre: np.ndarray) -> np.ndarray:
        """Random coefficients (1/l amplitude roll-off) scaled to half the limits, offsets at the centre."""
        ell = np.concatenate([np.arange(2, self.k + 1)] * 2)
        theta = rng.standard_normal((self.n, self.nf)) / ell
        offset = np.clip(centre, self.lower, self.upper)
        x = self.pack(theta, offset)
        q, qd, qdd = self.motion(x, self.phi_con)
        half_range = 0.5 * (self.upper - self.lower)
        ratio = max(np.max(np.abs(qd) / self.limits.velocity_rad_s),
                    np.max(np.abs(qdd) / self.limits.acceleration_rad_s2),
                    np.max(np.abs(q - offset) / half_range))
        scale = 0.5 / ratio
        for _ in range(30):
            x = self.pack(theta * scale, offset)
            if self.feasibility(x) >= 0:
                return x
            scale *= 0.7
        raise ValueError("no feasible start: the centre pose itself breaks a limit or the table keep-out; "
                         "choose another position_centre_rad or a lower table_height_m")


def optimise_fourier_excitation(robot: RobotModel, settings: FourierOptimisationSettings | None = None, *,
                                base_map: BaseParameterMap | None = None,
                                progress: ProgressCallback | None = None) -> FourierOptimisationResult:
    """Optimise a Fourier excitation for ``robot`` (see the module docstring); reproducible by ``settings.seed``.

    ``progress(fraction, stage)`` is told each start ("start 2/4, best condition number 3.1") and the
    iterations within it."""
    settings = settings or FourierOptimisationSettings()
    with single_threaded_blas():  # many small SVDs: threads only add waiting (excitation/_blas.py)
        return _optimise(robot, settings, base_map, progress)


def start_stage(i: int, n_starts: int, best_condition_number: float) -> str:
    """The progress stage name of start ``i`` of a multi-start optimisation."""
    best = f", best condition number {best_condition_number:.2f}" if np.isfinite(best_condition_number) else ""
    return f"start {i + 1}/{n_starts}{best}"


def _optimise(robot: RobotModel, settings: FourierOptimisationSettings, base_map: BaseParameterMap | None,
              progress: ProgressCallback | None) -> FourierOptimisationResult:
    started = time.perf_counter()
    n = robot.n_joints
    limits = ExcitationLimits.from_robot(robot, safety_factor=settings.safety_factor,
                                         velocity_scale=settings.velocity_scale,
                                         acceleration_scale=settings.acceleration_scale,
                                         table_height_m=settings.table_height_m)
    if settings.position_centre_rad is None:
        centre = np.array(UR_HOME_POSITION_RAD) if n == 6 else np.zeros(n)
    else:
        centre = np.asarray(settings.position_centre_rad, float).ravel()
        if centre.size != n:
            raise ValueError(f"position_centre_rad needs {n} values, got {centre.size}")
    span = np.broadcast_to(np.asarray(settings.position_range_rad, float), (n,))
    margin = settings.limit_margin
    lower = np.maximum(centre - span, limits.position_lower_rad * margin)
    upper = np.minimum(centre + span, limits.position_upper_rad * margin)
    if np.any(upper <= lower):
        raise ValueError("the position window (centre ± range) lies outside the joint limits")
    base_map = base_map or compute_base_parameters(robot, friction=settings.friction, rotor=settings.rotor,
                                                   stribeck_velocity_rad_s=settings.stribeck_velocity_rad_s,
                                                   coulomb_velocity_rad_s=settings.coulomb_velocity_rad_s)
    problem = _Problem(robot, settings, limits, base_map, lower, upper)
    constraints = [{"type": "ineq", "fun": problem.linear_constraint, "jac": lambda x: problem._linear[0]}]
    if settings.table_height_m is not None:
        constraints.append({"type": "ineq", "fun": problem.keep_out,
                            "jac": lambda x: problem.keep_out(x, jacobian=True)[1]})
    rng = np.random.default_rng(settings.seed)
    best_x, best_cost, starts = None, np.inf, []
    for i in range(settings.n_starts):
        stage = start_stage(i, settings.n_starts, float(np.exp(best_cost)))
        if progress is not None:
            progress(i / settings.n_starts, stage)
        x0 = problem.random_start(rng, centre)
        cost0 = problem.cost(x0)
        # SLSQP iterates may leave the feasible set; keep the best feasible one seen (the start is feasible).
        tracked = {"x": x0, "cost": cost0, "iterations": 0}

        def track(xk: np.ndarray, tracked=tracked, i=i, stage=stage) -> None:
            tracked["iterations"] += 1
            if progress is not None:
                progress((i + min(tracked["iterations"] / settings.max_iterations, 1.0)) / settings.n_starts, stage)
            cost_k = problem.cost(xk)
            if cost_k < tracked["cost"] and problem.feasibility(xk) >= -1e-6:
                tracked["x"], tracked["cost"] = np.array(xk), cost_k

        res = scipy.optimize.minimize(problem.cost, x0, jac=problem.gradient, method="SLSQP", constraints=constraints,
                                      callback=track, options={"maxiter": settings.max_iterations, "ftol": 1e-6})
        track(res.x)
        cost = tracked["cost"]
        starts.append({"start": i, "initial_condition_number": float(np.exp(cost0)),
                       "final_condition_number": float(np.exp(cost)), "iterations": int(res.nit),
                       "message": str(res.message)})
        if cost < best_cost:
            best_x, best_cost = tracked["x"], cost
    fourier = problem.fourier(best_x)
    # Dense check at the robot rate; shrink the motion about the offsets if grid sampling hid a violation.
    rate = robot_rate_hz(robot)
    shrink = 1.0
    for _ in range(40):
        candidate = fourier.scaled(shrink)
        one_period = FourierTrajectory(period_s=candidate.period_s, offset_rad=candidate.offset_rad,
                                       a_rad_s=candidate.a_rad_s, b_rad_s=candidate.b_rad_s, n_periods=1)
        try:
            check_trajectory(one_period.to_trajectory(rate_hz=rate), robot, limits)
            break
        except TrajectoryLimitError:
            shrink *= 0.98
    else:
        raise RuntimeError("optimised trajectory still breaks a limit after shrinking; report this as a bug")
    fourier = fourier.scaled(shrink)
    y, _ = full_regressor(robot, *fourier.evaluate(problem.t_cost), friction=settings.friction, rotor=settings.rotor,
                          stribeck_velocity_rad_s=settings.stribeck_velocity_rad_s,
                          coulomb_velocity_rad_s=settings.coulomb_velocity_rad_s)
    cond = condition_number(base_map.base_regressor(y), normalise=True)
    return FourierOptimisationResult(
        fourier=fourier, condition_number=cond, limits=limits, settings=settings, robot=robot.name,
        wall_time_s=time.perf_counter() - started, n_cost_evaluations=problem.n_evaluations, shrink_factor=shrink,
        joint_names=tuple(robot.joint_names), starts=starts,
    )
