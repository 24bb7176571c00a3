"""Printable reproductions of seeds.md P1 (Jamisola & Dadios): tables, searches, friction bias, UR3.

Shared by ``rdi natural-oscillation`` and ``benchmarks/bench_natural_oscillation.py``;
each function runs its simulations and returns lines of text plus the numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..dynamics.friction import FrictionParameters
from ..identification.natural_oscillation import (
    PushExperiment,
    bracketing_search,
    differential_evolution_search,
    incremental_search,
    run_push_trial,
)
from ..identification.natural_oscillation_ur3 import (
    ACTIVE_JOINTS_FULL,
    UR3_UPRIGHT_Q_RAD,
    FrictionCompensatedModel,
    PinocchioArm,
    VerticalPlaneGravityModel,
    active_joint_friction,
    identify_in_passes,
    identify_vertical_plane_gravity,
    perturbed_model,
    reduced_vertical_plane_model,
    vertical_plane_first_moments,
)
from ..io.model_file import DynamicModel
from ..robots import load_robot
from ..sim.pendulum import JointFriction
from ..sim.truth import make_truth, nominal_friction
from .natural_oscillation_paper import (
    PAPER_TABLE_I,
    PAPER_TABLE_II,
    one_dof_setup,
    reproduce_table_i,
    reproduce_table_ii,
    table_i_zero_point,
    two_dof_setup,
)

__all__ = ["friction_bias_report", "search_report", "tables_report", "ur3_full_report", "ur3_report"]


def _fmt(c) -> str:
    return "falls" if c is None else str(c)


def tables_report() -> list[str]:
    """Tables I and II simulated from the paper's stated model and from the tuned set-up, beside P1's numbers."""
    s1, t1 = one_dof_setup(tuned=False), one_dof_setup()
    s2, t2 = two_dof_setup(tuned=False), two_dof_setup()
    lines = ["P1 Table I — periods in 5,000 steps", "  stated = " + s1.description, "  tuned  = " + t1.description,
             "  f_m    stated  tuned  paper"]
    for (f, stated), (_, tuned), (_, paper) in zip(reproduce_table_i(s1), reproduce_table_i(t1), PAPER_TABLE_I):
        lines.append(f"  {f:.2f}  {_fmt(stated):>7} {_fmt(tuned):>6} {_fmt(paper):>6}")
    f0, slope = table_i_zero_point()
    lines.append(f"  the paper's counts fit count^2 = {slope:.0f} (f_m - {f0:.4f}): its simulated pendulum balanced at "
                 f"f_m = {f0:.3f}, i.e. {100 * (1 - f0):.1f} % less gravity moment than its model (a perfect model "
                 "balances at 1.00, where the stated model drifts away)")
    lines += ["P1 Table II — periods in 5,000 steps, link 1 / link 2", "  stated = " + s2.description,
              "  tuned  = " + t2.description, "  f_m1 f_m2 f_m3      stated       tuned       paper"]
    for (f, a, b), (_, ta, tb), (_, pa, pb) in zip(reproduce_table_ii(s2), reproduce_table_ii(t2), PAPER_TABLE_II):
        lines.append(f"  {f[0]:.2f} {f[1]:.2f} {f[2]:.2f}   {_fmt(a):>5} {_fmt(b):>5} {_fmt(ta):>5} {_fmt(tb):>5} "
                     f"{_fmt(pa):>5} {_fmt(pb):>5}")
    return lines


def _search_runner(setup, friction=None, push_rad_s=None):
    exp = dataclasses.replace(setup.experiment, stop_after_periods=2, max_excursion_rad=0.6)
    if push_rad_s is not None:
        exp = dataclasses.replace(exp, push_qd_rad_s=np.where(exp.push_qd_rad_s != 0, push_rad_s, 0.0))
    arm, model = setup.arm(friction), setup.model()
    return lambda f: run_push_trial(arm, model, f, exp)


def search_report(*, resolution: float = 0.005, with_metaheuristic: bool = True) -> tuple[list[str], dict]:
    """Bracketing vs P1's incremental search at the same resolution (1-DOF), and DE on the 2-DOF."""
    s1 = one_dof_setup()
    truth = float(s1.true_factors()[0])
    run = _search_runner(s1)
    br = bracketing_search(run, np.array([1.2]), 0, low=0.9, high=1.2, tolerance=resolution)
    inc = incremental_search(run, np.array([1.2]), step=resolution)
    nums = {
        "truth_factor": truth, "bracketing_estimate": br.estimate, "bracketing_trials": br.n_trials,
        "bracketing_extrapolated": br.extrapolated, "incremental_estimate": float(inc.factors[0]),
        "incremental_trials": inc.n_trials, "trial_ratio": inc.n_trials / br.n_trials,
    }
    lines = [
        f"Search, 1-DOF, resolution {resolution} (truth factor {truth:.4f} = true m l / model m l):",
        f"  bracketing:  estimate {br.estimate:.4f} (error {100 * (br.estimate / truth - 1):+.2f} %), "
        f"omega^2 secant {br.extrapolated:.4f} ({100 * (br.extrapolated / truth - 1):+.2f} %), {br.n_trials} trials",
        f"  incremental (P1 Fig. 3, from 1.20 down): estimate {inc.factors[0]:.4f} "
        f"({100 * (inc.factors[0] / truth - 1):+.2f} %), {inc.n_trials} trials",
        f"  trials ratio incremental / bracketing = {nums['trial_ratio']:.1f}",
    ]
    s2 = two_dof_setup()
    t2 = s2.true_factors()
    run2 = _search_runner(s2)
    coord_trials = 0
    est = np.array([1.0, 1.2, 1.2])
    for j in (1, 2):
        base = np.array([1.0, 1.2, 1.2])
        r = bracketing_search(run2, base, j, low=0.91, high=1.2, tolerance=resolution)
        est[j] = r.estimate
        coord_trials += r.n_trials
    nums["coordinate_bracketing_2dof"] = est.tolist()
    nums["coordinate_bracketing_2dof_trials"] = coord_trials
    lines.append(f"2-DOF coordinate bracketing of (B1, B2) factors: {est[1]:.4f}, {est[2]:.4f} "
                 f"(truth {t2[1]:.4f}, {t2[2]:.4f}), {coord_trials} trials")
    if with_metaheuristic:
        de = differential_evolution_search(run2, [(0.95, 1.05), (0.9, 1.2), (0.9, 1.2)], max_generations=6,
                                           population=4, seed=1)
        nums["de_2dof"] = de.factors.tolist()
        nums["de_2dof_trials"] = de.n_trials
        lines.append(f"2-DOF differential evolution (f_m1, f_m2, f_m3): {np.round(de.factors, 4).tolist()} "
                     f"(truth {np.round(t2, 4).tolist()}), {de.n_trials} trials — f_m1 (Coriolis) is not "
                     "identified: it does not move the fall boundary")
    return lines, nums


def friction_bias_report(*, levels=((0.0, 0.0), (0.02, 0.0), (0.0, 0.01), (0.0, 0.03), (0.02, 0.03)),
                         push_rad_s: float = 0.3, resolution: float = 0.002) -> tuple[list[str], dict]:
    """Fall-boundary estimate of the 1-DOF factor with joint friction, against the truth.

    Friction levels are (viscous N m s/rad, Coulomb N m); the pendulum's
    largest gravity torque is m g l / 2 = 1.85 N m. A larger push than for the
    tables is used because Coulomb friction stops a small push before it falls.
    """
    s1 = one_dof_setup()
    truth = float(s1.true_factors()[0])
    lines = [f"Friction bias, 1-DOF, push {push_rad_s} rad/s, bracketing to {resolution} "
             f"(truth factor {truth:.4f}; max gravity torque 1.85 N m):"]
    out = {}
    baseline = float("nan")
    for viscous, coulomb in levels:
        friction = None if viscous == 0 and coulomb == 0 else JointFriction([viscous], [coulomb])
        run = _search_runner(s1, friction, push_rad_s)
        try:
            r = bracketing_search(run, np.array([1.2]), 0, low=0.8, high=1.2, tolerance=resolution)
            bias = 100 * (r.estimate / truth - 1)
            if friction is None:
                baseline = bias  # the push's own bias (a large push leaves the bound near the boundary)
            out[(viscous, coulomb)] = bias
            lines.append(f"  viscous {viscous:.3f}, Coulomb {coulomb:.3f}: estimate {r.estimate:.4f} "
                         f"bias {bias:+.2f} % (friction's share {bias - baseline:+.2f} %)  ({r.n_trials} trials)")
        except ValueError as exc:
            out[(viscous, coulomb)] = float("nan")
            lines.append(f"  viscous {viscous:.3f}, Coulomb {coulomb:.3f}: no fall boundary found ({exc})")
    return lines, out


def ur3_report(*, tolerance: float = 0.004, seed: int = 1) -> tuple[list[str], dict]:
    """P1 on a pinocchio UR3 (shoulder + elbow in a vertical plane) with a perturbed truth model."""
    full = load_robot("ur3").model
    nominal = reduced_vertical_plane_model(full)
    truth = reduced_vertical_plane_model(perturbed_model(full, seed=seed))
    up = UR3_UPRIGHT_Q_RAD[[1, 2]]
    true_p = vertical_plane_first_moments(truth, up)
    model = VerticalPlaneGravityModel(nominal, up)
    prior = model.first_moments_kgm.copy()
    exp = PushExperiment(up, np.array([0.0, 0.05]), window_steps=6000, max_excursion_rad=0.5, stop_after_periods=2)
    res = identify_vertical_plane_gravity(PinocchioArm(truth, period_s=0.002), model, exp, tolerance=tolerance)
    names = ("MX2", "MY2", "MX3", "MY3")
    lines = ["UR3 (pinocchio, 500 Hz, wrist and base locked, upright, push 0.05 rad/s on the elbow, "
             f"bound 0.5 rad, truth = perturbed model seed {seed}):",
             "  param   prior    truth    identified  error (% of |MX| of its group)"]
    for i, n in enumerate(names):
        scale = abs(true_p[2 * (i // 2)])
        lines.append(f"  {n}   {prior[i]:+.4f}  {true_p[i]:+.4f}  {res.first_moments_kgm[i]:+.4f}   "
                     f"{100 * (res.first_moments_kgm[i] - true_p[i]) / scale:+.2f}")
    lines.append(f"  trials: {res.n_trials}")
    return lines, {"truth": true_p.tolist(), "identified": res.first_moments_kgm.tolist(), "trials": res.n_trials}


def ur3_full_report(*, seed: int = 1, tolerance: float = 0.004, passes: int = 3,
                    friction_cases: bool = True, identify_with_friction: bool = False) -> tuple[list[str], dict]:
    """P1 on the whole upright UR3: shoulder, elbow and wrist 1 free (every joint gravity loads there).

    Plant: pinocchio, 500 Hz, truth = ``sim.truth.make_truth('ur3', seed)`` (masses, CoMs,
    inertias and friction perturbed), base and wrists 2-3 locked. Without friction the six
    first moments (MX2, MY2, MX3, MY3, MX4, MY4) are identified (errors in % of |MX| of their
    group). With the truth's friction (Coulomb + viscous, stick/slip) the law feeds a friction
    model forward (our extension); the report then runs, per group, a clearly
    under-compensated trial (factor 0.8, the others at 1.3) and says whether the arm falls:
    the fall boundary can only be found if it does. ``identify_with_friction`` also runs the
    whole identification with the true friction fed forward (minutes).
    """
    act = list(ACTIVE_JOINTS_FULL)
    k = len(act)
    truth = make_truth("ur3", seed)
    reduced_truth = reduced_vertical_plane_model(truth.robot_model().model, UR3_UPRIGHT_Q_RAD, ACTIVE_JOINTS_FULL)
    nominal = reduced_vertical_plane_model(DynamicModel.nominal("ur3").robot_model().model, UR3_UPRIGHT_Q_RAD,
                                           ACTIVE_JOINTS_FULL)
    up = UR3_UPRIGHT_Q_RAD[act]
    true_p = vertical_plane_first_moments(reduced_truth, up)
    exp = PushExperiment(up, np.array([0.0, 0.05, 0.0]), window_steps=6000, max_excursion_rad=0.5, stop_after_periods=2)
    lines = [f"UR3, whole upright arm (shoulder, elbow, wrist 1 free; base and wrists 2-3 locked), pinocchio 500 Hz, "
             f"truth make_truth('ur3', {seed}), push 0.05 rad/s on the joint of the group under test, bound 0.5 rad, "
             f"{passes} passes; errors of (MX2, MY2, MX3, MY3, MX4, MY4) in % of |MX| of the group:",
             f"  truth first moments (kg m): {np.round(true_p, 4).tolist()}"]
    model = VerticalPlaneGravityModel(nominal, up)
    r = identify_in_passes(PinocchioArm(reduced_truth, period_s=0.002), model, exp, passes=passes, high=2.0,
                           tolerance=tolerance, max_trials=25, push_group_under_test=True)
    err = 100 * (r.first_moments_kgm - true_p) / np.repeat(np.abs(true_p[0::2]), 2)
    nums: dict = {"truth": true_p.tolist(), "no friction": {"error_percent": err.tolist(), "trials": r.n_trials}}
    lines.append(f"  no friction: {np.round(err, 2).tolist()}  ({r.n_trials} trials)")
    if not friction_cases:
        return lines, nums
    fr = truth.friction
    # the plant's friction in the law's form (the plant has no static peak and no offset)
    true_law = FrictionParameters(
        static_nm=np.zeros(k), coulomb_nm=fr.coulomb_nm[act], viscous_nm_s_per_rad=fr.viscous_nm_s_per_rad[act],
        offset_nm=np.zeros(k), stribeck_velocity_rad_s=fr.stribeck_velocity_rad_s[act],
        coulomb_velocity_rad_s=fr.coulomb_velocity_rad_s[act])
    nominal_law = dataclasses.replace(active_joint_friction(nominal_friction("ur3"), act), static_nm=np.zeros(k),
                             offset_nm=np.zeros(k))
    lines.append(f"  with the truth's friction (Coulomb {np.round(fr.coulomb_nm[act], 2).tolist()} N m, stick/slip), "
                 "a trial per group at factor 0.8 (the others 1.3); it must fall for a boundary to be found:")
    for label, law_friction in (("P1 law, nothing fed forward", None), ("true friction fed forward", true_law),
                                ("nominal friction fed forward", nominal_law)):
        law = model if law_friction is None else FrictionCompensatedModel(model, law_friction)
        outcomes = []
        for j in range(k):
            f = np.full(k, 1.3)
            f[j] = 0.8
            push = np.zeros(k)
            push[j] = 0.05
            arm = PinocchioArm(reduced_truth, period_s=0.002, coulomb_nm=fr.coulomb_nm[act],
                               viscous_nm_s_per_rad=fr.viscous_nm_s_per_rad[act])
            t = run_push_trial(arm, law, f, dataclasses.replace(exp, push_qd_rad_s=push))
            outcomes.append("falls" if bool(np.any(t.fell)) else "stuck" if not np.any(np.abs(arm.qd) > 1e-9)
                            else "moves")
        nums[label] = outcomes
        lines.append(f"    {label}: shoulder {outcomes[0]}, elbow {outcomes[1]}, wrist 1 {outcomes[2]}")
    if identify_with_friction:
        arm = PinocchioArm(reduced_truth, period_s=0.002, coulomb_nm=fr.coulomb_nm[act],
                           viscous_nm_s_per_rad=fr.viscous_nm_s_per_rad[act])
        law = FrictionCompensatedModel(VerticalPlaneGravityModel(nominal, up), true_law)
        try:
            r = identify_in_passes(arm, law, exp, passes=passes, high=2.0, tolerance=tolerance, max_trials=25,
                                   push_group_under_test=True)
            err = 100 * (r.first_moments_kgm - true_p) / np.repeat(np.abs(true_p[0::2]), 2)
            nums["identification, true friction fed forward"] = {"error_percent": err.tolist(), "trials": r.n_trials}
            lines.append(f"  identification with the true friction fed forward: {np.round(err, 2).tolist()}  "
                         f"({r.n_trials} trials)")
        except ValueError as exc:
            nums["identification, true friction fed forward"] = None
            lines.append(f"  identification with the true friction fed forward: no fall boundary found ({exc})")
    return lines, nums
