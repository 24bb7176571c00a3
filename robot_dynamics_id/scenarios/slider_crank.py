"""Aghili's slider-crank case study (seeds.md P5) and where the classical augmented formulation fails.

* :class:`CrankTrajectory`, :func:`crank_tracking_law` — PIDC of the crank through the
  singularity (P5 eqs. 45-48; passive rod joint by eqs. 55-62); :func:`min_norm_check`.
* :func:`reproduce_slider_crank` — the numbers printed by ``rdi slider-crank`` and
  ``benchmarks/bench_slider_crank.py``: free motion through the singular configurations
  by projection and by the augmented (KKT) baseline, redundant constraints, PIDC.
* :func:`augmented_failure_cases` — the augmented baseline beside the projection method
  where it breaks down: a parallelogram four-bar started in its flat (singular)
  configuration, and Baumgarte-stabilised crossings of the slider-crank's singularity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..control.projected import pd_reference_acceleration, projected_hybrid_torque
from ..dynamics.constrained import (
    DEFAULT_RANK_TOLERANCE,
    consistent_acceleration,
    constrained_forward_dynamics,
    null_space_projector,
    passive_joint_torque,
)
from ..sim.constrained_simulation import TorqueLaw, simulate_augmented, simulate_constrained
from ..sim.planar_mechanisms import (
    RedundantConstraints,
    TipOnLineSystem,
    parallelogram_four_bar,
    slider_crank,
    slider_crank_branch_state,
)

__all__ = [
    "CrankTrajectory",
    "augmented_failure_cases",
    "crank_tracking_law",
    "min_norm_check",
    "reproduce_slider_crank",
    "singular_start",
]

@dataclass(frozen=True)
class CrankTrajectory:
    """Desired crank angle ``theta(t) = start + rate t + amplitude sin(frequency t)`` (rad).

    With the defaults the crank turns ~3 rad/s with a +-0.5 rad wobble, so it passes
    the singular configurations (+-pi/2) about once a second.
    """

    start_rad: float = 0.0
    rate_rad_s: float = 3.0
    amplitude_rad: float = 0.5
    frequency_rad_s: float = 2.0

    def crank(self, time_s: float) -> tuple[float, float, float]:
        """``(theta, theta_dot, theta_ddot)`` at ``time_s``."""
        w = self.frequency_rad_s
        s, c = np.sin(w * time_s), np.cos(w * time_s)
        return (self.start_rad + self.rate_rad_s * time_s + self.amplitude_rad * s,
                self.rate_rad_s + self.amplitude_rad * w * c,
                -self.amplitude_rad * w * w * s)

    def joint(self, time_s: float):
        """Desired ``(q, qd, qdd)`` of the slider-crank on its ordinary branch."""
        return slider_crank_branch_state(*self.crank(time_s))


def crank_tracking_law(
    system: TipOnLineSystem,
    trajectory: CrankTrajectory,
    *,
    stiffness_per_s2: float = 400.0,
    damping_per_s: float = 40.0,
    actuated: np.ndarray | None = None,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> TorqueLaw:
    """PIDC tracking the crank trajectory (Aghili P5, eqs. (45)-(48)); passive joints by eqs. (55)-(62).

    A PD on the (branch-consistent) joint trajectory, made constraint-consistent and
    projected by :func:`~robot_dynamics_id.control.projected.projected_hybrid_torque`.
    With ``actuated`` (boolean mask, e.g. ``[True, False]`` for a crank motor and a
    free rod joint) the torque is the minimum-norm one that is zero on the passive joints.
    """
    def law(t, q, qd, _lam):
        q_d, qd_d, qdd_d = trajectory.joint(t)
        qdd_ref = pd_reference_acceleration(q_d, qd_d, qdd_d, q, qd,
                                            stiffness_per_s2=stiffness_per_s2, damping_per_s=damping_per_s)
        m, h, a, adot_qd = system.terms(q, qd)
        if actuated is None:
            return projected_hybrid_torque(m, h, a, adot_qd, qdd_ref, rank_tolerance=rank_tolerance).torque_nm
        proj = null_space_projector(a, rank_tolerance=rank_tolerance)
        return passive_joint_torque(m, h, consistent_acceleration(qdd_ref, proj, adot_qd), proj, actuated).torque

    return law


def min_norm_check(system: TipOnLineSystem, q: np.ndarray, qd: np.ndarray, torque: np.ndarray, *,
                   samples: int = 100, seed: int = 0,
                   rank_tolerance: float = DEFAULT_RANK_TOLERANCE) -> tuple[float, float]:
    """Compare ``torque`` with ``torque + (I - P) xi`` for random ``xi`` (same motion by construction).

    Returns ``(smallest norm ratio ||tau + (I-P) xi|| / ||tau||, largest change of qdd)``: a
    minimum-norm torque gives a ratio >= 1 and a zero acceleration change.
    """
    rng = np.random.default_rng(seed)
    m, h, a, b = system.terms(q, qd)
    proj = null_space_projector(a, rank_tolerance=rank_tolerance)
    qdd = constrained_forward_dynamics(m, h, torque, a, b, projection=proj)
    ratio, dqdd = np.inf, 0.0
    norm = float(np.linalg.norm(torque))
    for _ in range(samples):
        other = torque + proj.normal_projector @ rng.normal(scale=max(norm, 1.0), size=torque.shape)
        ratio = min(ratio, float(np.linalg.norm(other)) / max(norm, 1e-300))
        dqdd = max(dqdd, float(np.max(np.abs(constrained_forward_dynamics(m, h, other, a, b, projection=proj) - qdd))))
    return ratio, dqdd


# --- the P5 reproduction -------------------------------------------------------------------


def singular_start(crank_rate_rad_s: float = 6.0):
    """State AT the singular configuration (crank down, rod folded back, slider on the pivot),
    moving along the ordinary branch. This is also the mechanism's stable equilibrium."""
    q, qd, _ = slider_crank_branch_state(-np.pi / 2, crank_rate_rad_s)
    return q, qd


def reproduce_slider_crank(*, duration_s: float = 10.0, step_s: float = 1e-3,
                           crank_rate_rad_s: float = 6.0) -> dict[str, float | str]:
    """Run the P5 slider-crank reproduction and return its numbers (see ``rdi slider-crank``).

    1. Free motion (no input, no friction) from the singular configuration, RK4 at
       ``step_s`` with Newton-Raphson drift correction: constraint error, energy drift
       (relative to the initial kinetic energy = energy above the potential minimum),
       ``cond(M_c)`` along the run, singular crossings.
    2. The augmented (KKT) baseline from the same state, and with the constraint
       stated twice (redundant): its matrix's condition number, and failure.
    3. PIDC tracking a crank trajectory through the singularities (both joints
       driven), the minimum-norm check, and the crank-only (passive rod) variant.
    """
    out: dict[str, float | str] = {"duration_s": duration_s, "step_s": step_s}
    system = slider_crank()
    q0, qd0 = singular_start(crank_rate_rad_s)
    free = simulate_constrained(system, q0, qd0, duration_s=duration_s, step_s=step_s)
    kinetic0 = system.chain.kinetic_energy(q0, qd0)
    smin = free.min_singular_value
    near = (smin[1:-1] < smin[:-2]) & (smin[1:-1] <= smin[2:]) & (smin[1:-1] < 0.02)
    out.update({
        "free_max_constraint_error_m": float(free.constraint_error_m.max()),
        "free_max_velocity_error_m_s": float(free.velocity_error_m_s.max()),
        "free_energy_drift_relative": float(np.abs(free.energy_j - free.energy_j[0]).max() / kinetic0),
        "free_singular_crossings": int(near.sum() + (smin[0] < 0.02)),
        "free_closest_sigma_min_m": float(smin.min()),
        "free_max_rod_off_branch_rad": float(np.abs(free.q[:, 1] + 2 * free.q[:, 0]).max()),
        "Mc_condition_max": float(free.constraint_inertia_condition.max()),
        "Mc_condition_median": float(np.median(free.constraint_inertia_condition)),
        "Mc_condition_at_start": float(free.constraint_inertia_condition[0]),
    })
    aug = simulate_augmented(system, q0, qd0, duration_s=duration_s, step_s=step_s)
    out.update({
        "augmented_kkt_condition_at_start": float(aug.constraint_inertia_condition[0]) if aug.time_s.size else float("nan"),
        "augmented_kkt_condition_median": float(np.median(aug.constraint_inertia_condition)) if aug.time_s.size else float("nan"),
        "augmented_failure": aug.failure or "none",
        "augmented_energy_drift_relative": float(np.abs(aug.energy_j - aug.energy_j[0]).max() / kinetic0)
        if aug.time_s.size else float("nan"),
        # the largest constraint force of each run (at the singular configuration it is not unique)
        "free_max_multiplier_projection_n": float(np.abs(free.multiplier).max()),
        "free_max_multiplier_augmented_n": float(np.abs(aug.multiplier).max()) if aug.time_s.size else float("nan"),
    })
    redundant = RedundantConstraints(system)
    short = min(duration_s, 1.0)
    red_proj = simulate_constrained(redundant, q0, qd0, duration_s=short, step_s=step_s)
    red_aug = simulate_augmented(redundant, q0, qd0, duration_s=short, step_s=step_s)
    n_short = red_proj.time_s.size
    out.update({
        "redundant_projection_max_q_difference_rad": float(np.abs(red_proj.q - free.q[:n_short]).max()),
        "redundant_augmented_failure": red_aug.failure or "none",
        "redundant_augmented_failed_at_s": red_aug.failed_at_s,
    })
    traj = CrankTrajectory()
    qt0, qdt0, _ = traj.joint(0.0)
    track = simulate_constrained(system, qt0, qdt0, duration_s=duration_s, step_s=step_s,
                                 torque_law=crank_tracking_law(system, traj))
    crank_d = np.array([traj.crank(t)[0] for t in track.time_s])
    checks = [min_norm_check(system, track.q[k], track.qd[k], track.torque[k])
              for k in range(0, track.time_s.size, max(1, track.time_s.size // 50))]
    out.update({
        "pidc_max_crank_error_rad": float(np.abs(track.q[:, 0] - crank_d).max()),
        "pidc_crank_travel_rad": float(track.q[-1, 0] - track.q[0, 0]),
        "pidc_closest_sigma_min_m": float(track.min_singular_value.min()),
        "pidc_max_torque_nm": float(np.abs(track.torque).max()),
        "pidc_min_norm_ratio_vs_random_nullspace": float(min(c[0] for c in checks)),
        "pidc_random_nullspace_max_qdd_change": float(max(c[1] for c in checks)),
        "pidc_max_constraint_error_m": float(track.constraint_error_m.max()),
    })
    passive = simulate_constrained(system, qt0, qdt0, duration_s=duration_s, step_s=step_s,
                                   torque_law=crank_tracking_law(system, traj, actuated=np.array([True, False])))
    out.update({
        "passive_max_crank_error_rad": float(np.abs(passive.q[:, 0] - crank_d).max()),
        "passive_max_rod_torque_nm": float(np.abs(passive.torque[:, 1]).max()),
        "passive_max_crank_torque_nm": float(np.abs(passive.torque[:, 0]).max()),
        "passive_max_slider_force_n": float(np.abs(passive.multiplier).max()),
    })
    return out


def _summary(run, kinetic0: float, branch_error) -> dict[str, float | str]:
    if not run.time_s.size:
        return {"failure": run.failure or "none", "failed_at_s": run.failed_at_s}
    off = np.abs(branch_error(run.q))
    # where it broke down: the failure, else where it first left its branch by 0.1 rad
    event = run.time_s.size - 1 if run.failure else (int(np.argmax(off > 0.1)) if np.any(off > 0.1) else None)
    near = slice(max(0, (event or 0) - 50), (event or 0) + 1)
    return {
        "failure": run.failure or "none",
        "failed_at_s": run.failed_at_s,
        "left_branch_at_s": float(run.time_s[event]) if event is not None and not run.failure else float("nan"),
        "min_sigma_50ms_before_m": float(run.min_singular_value[near].min()) if event is not None else float("nan"),
        "simulated_s": float(run.time_s[-1]),
        "max_constraint_error_m": float(run.constraint_error_m.max()),
        "energy_drift_relative": float(np.abs(run.energy_j - run.energy_j[0]).max() / kinetic0),
        "max_branch_error_rad": float(off.max()),
        "max_multiplier_n": float(np.abs(run.multiplier).max()),
    }


def augmented_failure_cases(*, duration_s: float = 5.0, step_s: float = 1e-3,
                            baumgarte_per_s: tuple[float, ...] = (5.0, 10.0, 20.0)
                            ) -> dict[str, dict[str, float | str]]:
    """The augmented (Lagrange-multiplier) baseline beside the projection method where A is singular.

    1. ``four_bar_flat_*``: a parallelogram four-bar (crank 0.2 m, coupler 0.4 m, 1 kg rods,
       gravity) released at 5 rad/s from its flat configuration, where every link lies on
       the ground line and A has an exactly zero row. ``max_branch_error_rad`` is the
       coupler's angle to the ground (zero on the parallelogram branch).
    2. ``slider_crank_baumgarte_<a>``: the slider-crank's free run from its singular
       configuration (6 rad/s) with the augmented formulation stabilised by Baumgarte's
       feedback at ``a`` 1/s instead of coordinate projection (the classical pairing);
       ``max_branch_error_rad`` is the rod's departure from the ordinary branch.
    Energies are relative to the initial kinetic energy; ``min_sigma_50ms_before_m`` is the
    smallest singular value of A in the 50 ms before the run failed or left its branch
    (how close to the singular configuration that happened).
    """
    out: dict[str, dict[str, float | str]] = {}
    linkage = parallelogram_four_bar()
    q0, qd0 = np.zeros(3), np.array([5.0, -5.0, 5.0])
    kinetic0 = linkage.energy(q0, qd0) - linkage.energy(q0, np.zeros(3))
    coupler = lambda q: q[:, 0] + q[:, 1]  # noqa: E731 - absolute coupler angle
    out["four_bar_flat_projection"] = _summary(
        simulate_constrained(linkage, q0, qd0, duration_s=duration_s, step_s=step_s), kinetic0, coupler)
    out["four_bar_flat_augmented"] = _summary(
        simulate_augmented(linkage, q0, qd0, duration_s=duration_s, step_s=step_s), kinetic0, coupler)
    system = slider_crank()
    q0, qd0 = singular_start()
    kinetic0 = system.chain.kinetic_energy(q0, qd0)
    branch = lambda q: q[:, 1] + 2.0 * q[:, 0]  # noqa: E731 - zero on the ordinary branch
    for gain in baumgarte_per_s:
        run = simulate_augmented(system, q0, qd0, duration_s=duration_s, step_s=step_s, stabilisation="baumgarte",
                                 baumgarte_per_s=gain)
        out[f"slider_crank_baumgarte_{gain:g}"] = _summary(run, kinetic0, branch)
    return out
