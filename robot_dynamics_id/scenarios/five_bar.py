"""Motion and constraint-force control of a planar five-bar with passive joints (Aghili, seeds.md P5).

The five-bar (:func:`~robot_dynamics_id.sim.planar_mechanisms.five_bar`) is cut at the pin
where the distal links meet; the constraint ``phi = p_left - p_right = 0`` (2 rows) has the
multiplier ``lambda``, the force the right chain applies to the left one at the pin: the
loop's internal force. The end point (the pin) follows a circle while a PI law on the
measured ``lambda`` (one sample old, as from a force sensor) commands the internal force
along the right distal link (the line along which a link with a passive joint at its
base can push).

* Motion: PD on the joint trajectory of the circle, made constraint-consistent
  (eqs. (13), (16), PIDC eqs. (45)-(48)).
* Force with every joint actuated: :func:`~robot_dynamics_id.control.projected.projected_hybrid_torque`
  (eqs. (51), (52)); with passive joints: :func:`~robot_dynamics_id.dynamics.constrained.passive_joint_force_torque`
  (the passive joints fix part of the force; what is left stays controllable).
* ``simplified_force_law``: the force torque without the inertia term ``(I - P) M qdd_ref``,
  exact only where ``P M = M P``
  (:func:`~robot_dynamics_id.dynamics.constrained.inertia_decoupling_defect`, the decoupling
  condition on the inertia matrix).

:func:`run_five_bar` returns the errors; :func:`five_bar_report` prints the cases of the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..control.projected import pd_reference_acceleration
from ..dynamics.constrained import (
    consistent_acceleration,
    constraint_force_pi,
    constraint_force_torque,
    inertia_decoupling_defect,
    null_space_projector,
    passive_joint_force_torque,
    passive_joints_controllable,
    projected_inverse_dynamics,
)
from ..sim.constrained_simulation import simulate_constrained
from ..sim.planar_mechanisms import ClosedLoopLinkage, five_bar

__all__ = ["CircleTask", "FiveBarRun", "five_bar_ik", "five_bar_report", "run_five_bar"]


def _two_link_ik(target: np.ndarray, l1: float, l2: float, elbow: float) -> np.ndarray:
    """Relative angles of a 2-link planar chain reaching ``target``; ``elbow`` = +1 or -1 picks the branch."""
    r2 = float(target @ target)
    c2 = (r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    if abs(c2) > 1.0:
        raise ValueError(f"five-bar end point {target} is out of reach of a chain {l1} + {l2} m")
    q2 = elbow * np.arccos(c2)
    q1 = np.arctan2(target[1], target[0]) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2])


def five_bar_ik(linkage: ClosedLoopLinkage, point_m: np.ndarray) -> np.ndarray:
    """Joint angles putting the pin at ``point_m``: left elbow out to the left, right elbow to the right."""
    p = np.asarray(point_m, float)
    ll, lr = linkage.left.link_length_m, linkage.right.link_length_m
    return np.concatenate([_two_link_ik(p, ll[0], ll[1], -1.0),
                           _two_link_ik(p - linkage.right_base_m, lr[0], lr[1], 1.0)])


@dataclass(frozen=True)
class CircleTask:
    """End point on a circle (centre, radius, period) and an internal-force profile (N) along the right distal link."""

    centre_m: tuple[float, float] = (0.1, 0.33)
    radius_m: float = 0.05
    period_s: float = 2.0
    #: (start time s, force N) steps of the commanded internal force
    force_steps: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 5.0), (2.0, -5.0))

    def point(self, t: float) -> np.ndarray:
        w = 2 * np.pi / self.period_s
        return np.asarray(self.centre_m) + self.radius_m * np.array([np.cos(w * t), np.sin(w * t)])

    def force(self, t: float) -> float:
        value = 0.0
        for start, f in self.force_steps:
            if t >= start:
                value = f
        return value


def _joint_reference(linkage: ClosedLoopLinkage, task: CircleTask, t: float, dt: float = 1e-4):
    """(q, qd, qdd) of the circle by IK and central differences (the IK is smooth on one branch)."""
    qm, q0, qp = (five_bar_ik(linkage, task.point(t + s)) for s in (-dt, 0.0, dt))
    return q0, (qp - qm) / (2 * dt), (qp - 2 * q0 + qm) / dt**2


@dataclass(frozen=True)
class FiveBarRun:
    """Errors of one five-bar run (after ``settle_s``): end point, internal force along its controllable line."""

    max_position_error_m: float
    max_force_error_n: float
    rms_force_error_n: float
    controllable_force_dimension: int
    passive_joints_controllable: bool
    max_passive_torque_nm: float
    decoupling_defect_median: float
    end_point_m: np.ndarray


def run_five_bar(*, actuated=(True, True, True, True), task: CircleTask | None = None, duration_s: float = 4.0,
                 step_s: float = 1e-3, simplified_force_law: bool = False, force_control: bool = True,
                 stiffness_per_s2: float = 400.0, damping_per_s: float = 40.0, force_gain: float = 0.5,
                 force_integral_gain_per_s: float = 50.0, settle_s: float = 0.5,
                 linkage: ClosedLoopLinkage | None = None) -> FiveBarRun:
    """Track the circle and (``force_control``) the internal force; see the module docstring."""
    if not duration_s > settle_s >= 0.0:
        raise ValueError(f"duration_s ({duration_s}) must exceed settle_s ({settle_s}) >= 0")
    linkage = linkage or five_bar()
    task = task or CircleTask()
    mask = np.asarray(actuated, bool)
    if mask.shape != (linkage.n_joints,):
        raise ValueError(f"actuated needs {linkage.n_joints} flags, got {mask.shape}")
    state = {"integral": np.zeros(1), "t": -1.0}

    def line(q: np.ndarray) -> np.ndarray:
        ql, qr = q[:2], q[2:]
        c = linkage.left.tip(ql)[0]
        d = linkage.right_base_m + linkage.right.link_length_m[0] * np.array([np.cos(qr[0]), np.sin(qr[0])])
        return (c - d) / np.linalg.norm(c - d)

    def law(t, q, qd, lam_measured):
        q_d, qd_d, qdd_d = _joint_reference(linkage, task, t)
        qdd_ref = pd_reference_acceleration(q_d, qd_d, qdd_d, q, qd, stiffness_per_s2=stiffness_per_s2,
                                            damping_per_s=damping_per_s)
        m, h, a, b = linkage.terms(q, qd)
        proj = null_space_projector(a)
        qdd_c = consistent_acceleration(qdd_ref, proj, b)
        e = line(q)
        f_d = task.force(t) if force_control else 0.0
        lam_cmd = f_d * e
        if force_control:
            # PI on the force along the line (measured multiplier one step old); one update per step
            if t > state["t"]:
                cmd, state["integral"] = constraint_force_pi(np.array([f_d]), np.array([e @ lam_measured]),
                                                             state["integral"], proportional_gain=force_gain,
                                                             integral_gain_per_s=force_integral_gain_per_s,
                                                             period_s=step_s)
                state["t"] = t
                state["cmd"] = cmd
            lam_cmd = float(state["cmd"][0]) * e
        if not mask.all():
            return passive_joint_force_torque(m, h, qdd_c, a, mask, lam_cmd).torque
        motion = projected_inverse_dynamics(m, h, qdd_c, proj.projector)
        if simplified_force_law:
            # the force torque as if P M = M P: (I - P)(h - A^T lambda)
            return motion + proj.normal_projector @ (h - a.T @ lam_cmd)
        return motion + constraint_force_torque(m, h, qdd_c, proj, a, lam_cmd)

    q0, qd0, _ = _joint_reference(linkage, task, 0.0)
    run = simulate_constrained(linkage, q0, qd0, duration_s=duration_s, step_s=step_s, torque_law=law)
    sel = run.time_s >= settle_s
    tips = np.array([linkage.tip(q) for q in run.q])
    target = np.array([task.point(t) for t in run.time_s])
    # the force applied over the step that starts at each sample, along the line at that sample
    along = np.array([line(q) @ lam for q, lam in zip(run.q, run.multiplier)])
    desired = np.array([task.force(t) if force_control else np.nan for t in run.time_s])
    # exclude 50 ms after each force step (the PI's transient)
    steady = sel.copy()
    for start, _ in task.force_steps:
        steady &= ~((run.time_s >= start) & (run.time_s < start + 0.05))
    force_err = np.abs(along - desired)[steady] if force_control else np.zeros(1)
    defects, dims, ok, passive_tau = [], [], True, 0.0
    for k in range(0, run.time_s.size, 50):
        m, _, a, _ = linkage.terms(run.q[k], run.qd[k])
        proj = null_space_projector(a)
        defects.append(inertia_decoupling_defect(m, proj.projector))
        ok = ok and passive_joints_controllable(proj.projector, mask)
        if not mask.all():
            dims.append(passive_joint_force_torque(m, linkage.terms(run.q[k], run.qd[k])[1], np.zeros(4), a, mask,
                                                   np.zeros(2)).controllable_directions.shape[1])
    if not mask.all():
        passive_tau = float(np.abs(run.torque[:, ~mask]).max())
    return FiveBarRun(
        max_position_error_m=float(np.linalg.norm(tips - target, axis=1)[sel].max()),
        max_force_error_n=float(force_err.max()), rms_force_error_n=float(np.sqrt(np.mean(force_err**2))),
        controllable_force_dimension=int(min(dims)) if dims else 2, passive_joints_controllable=bool(ok),
        max_passive_torque_nm=passive_tau, decoupling_defect_median=float(np.median(defects)), end_point_m=tips)


def five_bar_report(*, duration_s: float = 3.0) -> tuple[list[str], dict]:
    """The five-bar cases of benchmarks/bench_slider_crank.py: full actuation, one and two passive joints."""
    task = CircleTask()
    lines = [f"Five-bar (base 0.2 m, links 0.25 + 0.3 m, 0.5 kg rods, gravity): end point on a {task.radius_m} m circle "
             f"in {task.period_s} s; internal force along the right distal link stepped {task.force_steps} (N, from s); "
             f"RK4 1 ms, {duration_s:g} s, errors after 0.5 s (force: 50 ms after each step excluded)"]
    nums: dict = {}
    cases = [
        ("all four joints actuated, full force law (eqs. 51, 52)", dict()),
        ("all actuated, feed-forward force only (no PI), full law", dict(force_gain=0.0, force_integral_gain_per_s=0.0)),
        ("all actuated, feed-forward only, without (I-P) M qdd_ref (exact iff P M = M P)",
         dict(force_gain=0.0, force_integral_gain_per_s=0.0, simplified_force_law=True)),
        ("all actuated, no force command (motion only)", dict(force_control=False)),
        ("right distal joint passive", dict(actuated=(True, True, True, False))),
        ("both distal joints passive (the usual build)", dict(actuated=(True, False, True, False),
                                                            force_control=False, duration_s=1.0)),
    ]
    for label, kw in cases:
        r = run_five_bar(**{"duration_s": duration_s, "task": task, **kw})
        nums[label] = r
        force = (f"force error max {r.max_force_error_n:.3g} N, rms {r.rms_force_error_n:.3g} N"
                 if kw.get("force_control", True) else "no force command")
        lines.append(f"  {label}: position error max {r.max_position_error_m * 1e3:.3g} mm; {force}; "
                     f"controllable force directions {r.controllable_force_dimension}; passive joints balanced: "
                     f"{r.passive_joints_controllable}; |P M - M P| defect median {r.decoupling_defect_median:.3f}")
    moved = np.abs(nums[cases[0][0]].end_point_m - nums[cases[3][0]].end_point_m).max()
    nums["motion_change_from_force_steps_m"] = float(moved)
    lines.append(f"  decoupling: end-point difference with vs without the force steps {moved:.2e} m "
                 "(zero-order hold over 1 ms: P turns within a step)")
    return lines, nums
