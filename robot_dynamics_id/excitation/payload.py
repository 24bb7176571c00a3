"""A short wrist excitation for payload identification.

The shoulder, elbow and base stay at a fixed pose (by default the forearm
horizontal, so the wrist turns the payload through every direction of gravity);
the three wrist joints follow rest-to-rest Fourier series (excitation/fourier.py)
whose coefficients minimise the condition number of the payload's
column-normalised 10-parameter regressor (dynamics/payload.py) over one period —
the same criterion as the arm's excitation (Swevers et al. 1997), applied to the
only parameters a payload run estimates. Limits: each wrist joint within the
centre ± ``wrist_range_rad``, the robot's velocity and acceleration limits x the
planning scales, every joint origin and the tool frame above the table. The
result is checked at the robot rate (excitation/checker.py) and shrunk if a
limit is touched between the optimiser's grid points.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.optimize

from ..dynamics.payload import payload_regressor, tool_to_joint_transform
from ..progress import ProgressCallback
from ..robots.model import RobotModel
from ._blas import single_threaded_blas
from .checker import ExcitationLimits, TrajectoryLimitError, check_trajectory, keep_out_heights
from .fourier import FourierTrajectory
from .optimise import start_stage
from .trajectory import JointTrajectory

__all__ = ["PAYLOAD_ARM_POSE_RAD", "PayloadExcitationSettings", "payload_condition_number",
           "plan_payload_excitation"]

#: Base, shoulder, elbow (and wrist centre) of the payload excitation: upper arm up, forearm horizontal.
PAYLOAD_ARM_POSE_RAD = (0.0, -np.pi / 2, np.pi / 2, -np.pi / 2, -np.pi / 2, 0.0)
_WRIST = (3, 4, 5)


@dataclass(frozen=True, kw_only=True)
class PayloadExcitationSettings:
    """What the wrist excitation may do (saved with the trajectory)."""

    duration_s: float = 20.0
    period_s: float = 10.0
    n_harmonics: int = 4
    pose_rad: Sequence[float] = PAYLOAD_ARM_POSE_RAD
    wrist_range_rad: float = np.pi / 2
    velocity_scale: float = 0.5
    acceleration_scale: float = 0.5
    safety_factor: float = 1.0
    table_height_m: float | None = 0.05
    cost_rate_hz: float = 10.0
    limit_margin: float = 0.95
    keep_out_margin_m: float = 0.01
    n_starts: int = 3
    max_iterations: int = 80
    seed: int = 0

    def __post_init__(self) -> None:
        periods = self.duration_s / self.period_s
        if not (self.duration_s > 0 and self.period_s > 0) or abs(periods - round(periods)) > 1e-6:
            raise ValueError(f"duration {self.duration_s} s must be a whole number (>= 1) of periods of "
                             f"{self.period_s} s")
        if self.n_harmonics < 2:
            raise ValueError("n_harmonics must be >= 2 (harmonic 1 makes the motion start and end at rest)")
        if not 0 < self.wrist_range_rad <= np.pi:
            raise ValueError(f"wrist_range_rad must be in (0, pi], got {self.wrist_range_rad}")
        if len(tuple(self.pose_rad)) != 6:
            raise ValueError(f"pose_rad needs 6 joint angles (a UR arm), got {list(self.pose_rad)}")

    @property
    def n_periods(self) -> int:
        return int(round(self.duration_s / self.period_s))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["pose_rad"] = [float(v) for v in self.pose_rad]
        return out


def payload_condition_number(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2) -> float:
    """Condition number of the column-normalised payload regressor over the samples (inf if degenerate)."""
    w = payload_regressor(robot, q_rad, qd_rad_s, qdd_rad_s2)
    norms = np.linalg.norm(w, axis=0)
    if np.any(norms == 0):
        return float("inf")
    s = np.linalg.svd(w / norms, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


class _WristProblem:
    """Decision vector: per wrist joint, free Fourier coefficients a_2..a_K, b_2..b_K (rad/s)."""

    def __init__(self, robot: RobotModel, settings: PayloadExcitationSettings, limits: ExcitationLimits) -> None:
        self.robot, self.settings, self.limits = robot, settings, limits
        self.pose = np.asarray(settings.pose_rad, float)
        self.nf = 2 * (settings.n_harmonics - 1)
        self.transform = tool_to_joint_transform(robot)
        period = settings.period_s
        m = int(round(period * settings.cost_rate_hz))
        self.t = np.arange(m) * period / m
        self.t_con = np.linspace(0.0, period, 4 * m + 1)
        # Linear map from one joint's free coefficients to (q - q0, qd, qdd) on a grid.
        self.basis = self._basis(self.t)
        self.basis_con = self._basis(self.t_con)
        self.n_evaluations = 0

    def _basis(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        half = self.nf // 2
        cols = ([], [], [])
        for k in range(self.nf):
            x = np.zeros(self.nf)
            x[k] = 1.0
            traj = FourierTrajectory.from_free_coefficients(
                period_s=self.settings.period_s, offset_rad=[0.0], a_free_rad_s=[x[:half]], b_free_rad_s=[x[half:]])
            for out, values in zip(cols, traj.evaluate(t)):
                out.append(values[:, 0])
        return tuple(np.column_stack(c) for c in cols)  # type: ignore[return-value]

    def fourier(self, x: np.ndarray) -> FourierTrajectory:
        theta = np.zeros((6, self.nf))
        theta[list(_WRIST)] = np.asarray(x, float).reshape(3, self.nf)
        half = self.nf // 2
        return FourierTrajectory.from_free_coefficients(
            period_s=self.settings.period_s, offset_rad=self.pose, a_free_rad_s=theta[:, :half],
            b_free_rad_s=theta[:, half:], n_periods=self.settings.n_periods)

    def motion(self, x: np.ndarray, basis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        theta = np.asarray(x, float).reshape(3, self.nf)
        q = np.tile(self.pose, (basis[0].shape[0], 1))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        for row, j in enumerate(_WRIST):
            q[:, j] += basis[0] @ theta[row]
            qd[:, j] = basis[1] @ theta[row]
            qdd[:, j] = basis[2] @ theta[row]
        return q, qd, qdd

    def cost(self, x: np.ndarray) -> float:
        self.n_evaluations += 1
        q, qd, qdd = self.motion(x, self.basis)
        w = payload_regressor(self.robot, q, qd, qdd, transform=self.transform)
        norms = np.linalg.norm(w, axis=0)
        if np.any(norms == 0):
            return 1e3
        s = np.linalg.svd(w / norms, compute_uv=False)
        return float(np.log(s[0] / s[-1])) if s[-1] > 0 else 1e3

    def linear_constraints(self, x: np.ndarray) -> np.ndarray:
        margin = self.settings.limit_margin
        theta = np.asarray(x, float).reshape(3, self.nf)
        out = []
        for row, j in enumerate(_WRIST):
            dq = self.basis_con[0] @ theta[row]
            qd = self.basis_con[1] @ theta[row]
            qdd = self.basis_con[2] @ theta[row]
            lo = max(-self.settings.wrist_range_rad, (self.limits.position_lower_rad[j] - self.pose[j]) * margin)
            hi = min(self.settings.wrist_range_rad, (self.limits.position_upper_rad[j] - self.pose[j]) * margin)
            out += [dq - lo, hi - dq, self.limits.velocity_rad_s[j] * margin - np.abs(qd),
                    self.limits.acceleration_rad_s2[j] * margin - np.abs(qdd)]
        return np.concatenate(out)

    def keep_out(self, x: np.ndarray) -> np.ndarray:
        q, _, _ = self.motion(x, self.basis)
        heights, _ = keep_out_heights(self.robot, q)
        return heights.min(axis=1) - (self.limits.table_height_m + self.settings.keep_out_margin_m)

    def feasible(self, x: np.ndarray) -> bool:
        ok = self.linear_constraints(x).min() >= 0
        if ok and self.limits.table_height_m is not None:
            ok = self.keep_out(x).min() >= 0
        return bool(ok)

    def feasible_near(self, x: np.ndarray) -> np.ndarray | None:
        """``x`` itself when feasible, else ``x`` shrunk towards the pose (every limit is a bound on a Fourier sum
        that shrinks with it) until it is: SLSQP's iterates break the limits by a little, all of them at times."""
        x = np.asarray(x, float)
        for _ in range(60):
            if self.feasible(x):
                return x
            x = 0.97 * x
        return None

    def random_start(self, rng: np.random.Generator) -> np.ndarray:
        ell = np.concatenate([np.arange(2, self.settings.n_harmonics + 1)] * 2)
        x = (rng.standard_normal((3, self.nf)) / ell).ravel()
        for _ in range(60):
            if self.feasible(x):
                return x
            x = 0.7 * x
        raise ValueError("no feasible start: the arm pose itself breaks a limit or the table keep-out; choose "
                         "another --pose or a lower --table-height")


def plan_payload_excitation(robot: RobotModel, settings: PayloadExcitationSettings | None = None, *,
                            rate_hz: float = 125.0, progress: ProgressCallback | None = None) -> JointTrajectory:
    """The optimised wrist excitation as robot-rate samples (metadata: settings, condition number).

    ``progress(fraction, stage)`` is told each start and the iterations within it."""
    settings = settings or PayloadExcitationSettings()
    if robot.n_joints != 6:
        raise ValueError(f"the payload excitation moves the wrist of a 6-joint UR arm; {robot.name} has "
                         f"{robot.n_joints} joints")
    started = time.perf_counter()
    limits = ExcitationLimits.from_robot(robot, safety_factor=settings.safety_factor,
                                         velocity_scale=settings.velocity_scale,
                                         acceleration_scale=settings.acceleration_scale,
                                         table_height_m=settings.table_height_m)
    problem = _WristProblem(robot, settings, limits)
    constraints = [{"type": "ineq", "fun": problem.linear_constraints}]
    if settings.table_height_m is not None:
        constraints.append({"type": "ineq", "fun": problem.keep_out})
    rng = np.random.default_rng(settings.seed)
    best_x, best_cost = None, np.inf
    with single_threaded_blas():
        for start in range(settings.n_starts):
            stage = start_stage(start, settings.n_starts, float(np.exp(best_cost)))
            if progress is not None:
                progress(start / settings.n_starts, stage)
            x0 = problem.random_start(rng)
            tracked = {"x": x0, "cost": problem.cost(x0), "iterations": 0}

            def track(xk: np.ndarray, tracked=tracked, start=start, stage=stage) -> None:
                tracked["iterations"] += 1
                if progress is not None:
                    progress((start + min(tracked["iterations"] / settings.max_iterations, 1.0)) / settings.n_starts,
                             stage)
                near = problem.feasible_near(xk)
                value = np.inf if near is None else problem.cost(near)
                if value < tracked["cost"]:
                    tracked["x"], tracked["cost"] = near, value

            res = scipy.optimize.minimize(problem.cost, x0, method="SLSQP", constraints=constraints, callback=track,
                                          options={"maxiter": settings.max_iterations, "ftol": 1e-6})
            track(res.x)
            if tracked["cost"] < best_cost:
                best_x, best_cost = tracked["x"], tracked["cost"]
    fourier = problem.fourier(best_x)
    shrink = 1.0
    for _ in range(40):
        candidate = fourier.scaled(shrink)
        try:
            check_trajectory(FourierTrajectory(period_s=candidate.period_s, offset_rad=candidate.offset_rad,
                                               a_rad_s=candidate.a_rad_s, b_rad_s=candidate.b_rad_s,
                                               n_periods=1).to_trajectory(rate_hz=rate_hz), robot, limits)
            break
        except TrajectoryLimitError:
            shrink *= 0.98
    else:
        raise RuntimeError("the payload excitation still breaks a limit after shrinking; report this as a bug")
    fourier = fourier.scaled(shrink)
    q, qd, qdd = fourier.evaluate(problem.t)
    cond = payload_condition_number(robot, q, qd, qdd)
    metadata = {"generator": "excitation.payload.plan_payload_excitation", "purpose": "payload identification",
                "payload_condition_number": cond, "settings": settings.to_dict(), "shrink_factor": shrink,
                "optimisation_wall_time_s": time.perf_counter() - started,
                "n_cost_evaluations": problem.n_evaluations}
    trajectory = fourier.to_trajectory(rate_hz=rate_hz, joint_names=robot.joint_names, robot=robot.name,
                                       metadata=metadata)
    trajectory.limits = limits.to_dict()
    return trajectory
