"""Reproduction of Bicchi & Melchiorri's examples (seeds.md P4) and the UR3 contact demonstration.

Shared by ``rdi flexible-compensation`` and ``benchmarks/bench_flexible_compensation.py`` so
both print the same numbers. The paper only draws its initial poses; the set-points
(moment 10 N × n m with a 10 N force along y) are met only by an arm that, deflected, is
stretched along the base x axis. The default pose of each example is a BENT arm whose
initial error matches the paper's stated (e_fx, e_mz) (see ``flexible.PAPER_EXAMPLES`` and
``flexible.paper_like_pose`` for why); the reproduction also runs (a) the stretched
commanded pose q = 0, a degenerate start, and (b) a family of poses of the same kind —
the same construction with other inner-joint bends — because the steepest-descent
iteration count depends strongly on the exact pose.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .flexible import (
    PAPER_EXAMPLES,
    UR3_JOINT_STIFFNESS_NM_PER_RAD,
    UR3_LINK_TUBES_ASSUMED,
    CompensationResult,
    CompliantChain,
    compensate_levenberg_marquardt,
    compensate_steepest_descent,
    deflect_chain,
    paper_like_pose,
    paper_planar_arm,
    rigid_sensor_wrench,
    ur3_link_beams,
    ur_force_setpoint_correction,
)

__all__ = [
    "STEEPEST_DESCENT_VARIANTS",
    "ExampleReproduction",
    "LinkFlexibilityDemo",
    "UrContactDemo",
    "format_example",
    "format_link_demo",
    "format_ur_demo",
    "steepest_descent_sweep",
    "ur3_link_flexibility_demo",
    "reproduce_example",
    "ur3_contact_demo",
]


@dataclass(frozen=True)
class ExampleReproduction:
    """One P4 example: the default (bent) pose, the stretched pose q = 0 and a pose family, both solvers."""

    key: str
    initial_error: np.ndarray
    steepest: CompensationResult
    lm: CompensationResult
    steepest_time_s: float
    lm_time_s: float
    stretched_initial_error: np.ndarray
    stretched_steepest: CompensationResult
    stretched_lm: CompensationResult
    family_bends_rad: np.ndarray
    family_poses_rad: np.ndarray
    family_initial_errors: np.ndarray
    family_steepest_iterations: np.ndarray
    family_lm_iterations: np.ndarray
    family_all_converged: bool


def reproduce_example(
    key: str, *, family_size: int = 6, family_max_bend_rad: float = 0.1, family_max_iterations: int = 20000
) -> ExampleReproduction:
    """Run P4's example ``key`` ('3dof' or '5dof') with both solvers.

    On the default pose (``PAPER_EXAMPLES[key].q_initial_rad``), on the stretched pose q = 0,
    and on ``family_size`` poses ``paper_like_pose(key, β)`` with inner bends β evenly spread
    over ±``family_max_bend_rad`` (β = 0 and bends for which no such pose exists are skipped);
    steepest descent on the family stops at ``family_max_iterations`` (then counted as not converged).
    """
    if key not in PAPER_EXAMPLES:
        raise ValueError(f"unknown P4 example {key!r}; choose one of {', '.join(PAPER_EXAMPLES)}")
    if family_size < 0 or not family_max_bend_rad >= 0:
        raise ValueError("family_size must be >= 0 and family_max_bend_rad >= 0 rad")
    ex = PAPER_EXAMPLES[key]
    arm = paper_planar_arm(ex.n_links)
    args = (ex.sensor_wrench, ex.desired_base_wrench)

    def initial_error(q: np.ndarray) -> np.ndarray:
        return ex.desired_base_wrench - deflect_chain(arm, q, ex.sensor_wrench).base_wrench

    start = time.perf_counter()
    sd = compensate_steepest_descent(arm, ex.q_initial_rad, *args)
    sd_time = time.perf_counter() - start
    start = time.perf_counter()
    lm = compensate_levenberg_marquardt(arm, ex.q_initial_rad, *args)
    lm_time = time.perf_counter() - start
    q_stretched = np.zeros(ex.n_links)
    bends = np.linspace(-family_max_bend_rad, family_max_bend_rad, family_size + 1) if family_size else []
    bends = [b for b in bends if abs(b) > 1e-12][:family_size]
    used, poses, errors, sd_it, lm_it, ok = [], [], [], [], [], True
    for bend in bends:
        try:
            q0 = paper_like_pose(key, bend)
        except ValueError:
            continue  # no pose with this bend reproduces the paper's initial error
        a = compensate_steepest_descent(arm, q0, *args, max_iterations=family_max_iterations,
                                        stall_iterations=min(500, family_max_iterations))
        b = compensate_levenberg_marquardt(arm, q0, *args)
        ok = ok and a.converged and b.converged
        used.append(bend)
        poses.append(q0)
        errors.append(initial_error(q0))
        sd_it.append(a.iterations if a.converged else -a.iterations)  # negative: stopped unconverged
        lm_it.append(b.iterations)
    return ExampleReproduction(
        key=key, initial_error=initial_error(ex.q_initial_rad), steepest=sd, lm=lm, steepest_time_s=sd_time,
        lm_time_s=lm_time, stretched_initial_error=initial_error(q_stretched),
        stretched_steepest=compensate_steepest_descent(arm, q_stretched, *args),
        stretched_lm=compensate_levenberg_marquardt(arm, q_stretched, *args),
        family_bends_rad=np.asarray(used), family_poses_rad=np.asarray(poses).reshape(-1, ex.n_links),
        family_initial_errors=np.asarray(errors).reshape(-1, 6),
        family_steepest_iterations=np.asarray(sd_it, int), family_lm_iterations=np.asarray(lm_it, int),
        family_all_converged=ok,
    )


def _vec(v: np.ndarray) -> str:
    return "[" + " ".join(f"{x:.5g}" for x in v) + "]"


def _status(r: CompensationResult) -> str:
    return f"{r.iterations} iterations, V = {r.lyapunov_value:.3g} ({'converged' if r.converged else 'NOT converged'})"


def format_example(rep: ExampleReproduction) -> str:
    """Human-readable lines: our numbers beside the paper's.

    Iterations are counted the same way for both solvers: joint-space update steps computed
    (one chain evaluation each; LM's rejected trial steps included).
    """
    ex = PAPER_EXAMPLES[rep.key]
    sd, lm = rep.steepest, rep.lm
    paper_final = "V <= 1e-6" if ex.paper_final_lyapunov is None else f"V = {ex.paper_final_lyapunov:g}"
    lines = [
        f"P4 {ex.n_links}-DOF planar arm: sensor wrench {_vec(ex.sensor_wrench)}, set-point "
        f"{_vec(ex.desired_base_wrench)}",
        f"  default pose q0 = {_vec(ex.q_initial_rad)} rad (bent; see flexible.PAPER_EXAMPLES)",
        f"  initial error, ours   : {_vec(rep.initial_error)}",
        f"  initial error, paper  : {_vec(ex.paper_initial_error)}",
        f"  steepest descent (eq. 15): {_status(sd)}   paper: {ex.paper_iterations} iterations, {paper_final}",
        f"  Levenberg-Marquardt      : {_status(lm)}",
        f"  LM / SD iterations: {lm.iterations / max(sd.iterations, 1):.2%} (acceptance <= 10%); "
        f"wall time SD {rep.steepest_time_s * 1e3:.1f} ms, LM {rep.lm_time_s * 1e3:.2f} ms (one run)",
        f"  stretched pose q = 0 (degenerate start): initial error {_vec(rep.stretched_initial_error)}; "
        f"SD {rep.stretched_steepest.iterations}, LM {rep.stretched_lm.iterations} iterations",
    ]
    sdi, lmi = rep.family_steepest_iterations, rep.family_lm_iterations
    n = sdi.size
    if n:
        lines += [
            f"  family of {n} poses of the same kind (inner bends {_vec(rep.family_bends_rad)} rad, each matching "
            f"the paper's e_fx, e_mz), all converged: {rep.family_all_converged}",
            f"    steepest descent iterations: [{' '.join(str(i) if i > 0 else f'>{-i}' for i in sdi)}]; "
            f"median {np.median(np.abs(sdi)):.0f}{'' if np.all(sdi > 0) else ' (at least)'}",
            f"    Levenberg-Marquardt iterations: {_vec(lmi)}; median {np.median(lmi):.0f}",
            f"    poses with LM <= 10% of SD: {int(np.sum(lmi <= 0.1 * np.abs(sdi)))}/{n}",
        ]
    return "\n".join(lines)


@dataclass(frozen=True)
class UrContactDemo:
    """UR3 pressing on a surface with compliant joints: world-frame wrench error before/after correction."""

    q_contact_rad: np.ndarray
    joint_stiffness_nm_per_rad: np.ndarray
    desired_wrench_base: np.ndarray
    sensor_wrench: np.ndarray
    #: joint deflection at the uncorrected set-point (rad)
    joint_deflection_rad: np.ndarray
    error_before: np.ndarray
    error_after: np.ndarray
    result: CompensationResult
    solve_time_s: float


def ur3_contact_demo(
    *,
    joint_stiffness_nm_per_rad: np.ndarray | None = None,
    q_contact_rad: np.ndarray | None = None,
    contact_force_n: np.ndarray | None = None,
) -> UrContactDemo:
    """Quasi-static UR3 contact: a rigid-model force loop holds the sensor wrench; compare base-frame errors.

    The desired wrench is ``contact_force_n`` (base axes; default 40 N up from the
    surface plus 10 N / 5 N friction) acting at the tool point. The "actual"
    wrench is evaluated by pinocchio at the deflected joint angles found by the
    fixed point ``θ = q + K⁻¹ J(θ)ᵀ ᴱw`` — a computation independent of the
    chain recursion used by the correction.
    """
    import pinocchio as pin

    from ..robots import load_robot

    robot = load_robot("ur3")
    stiffness = np.asarray(UR3_JOINT_STIFFNESS_NM_PER_RAD if joint_stiffness_nm_per_rad is None
                           else joint_stiffness_nm_per_rad, dtype=float)
    q = np.array([0.3, -1.2, 1.4, -1.77, -1.57, 0.2]) if q_contact_rad is None else np.asarray(q_contact_rad, float)
    force = np.array([10.0, -5.0, 40.0]) if contact_force_n is None else np.asarray(contact_force_n, float)
    model, data, fid = robot.model, robot.new_data(), robot.tool_frame_id
    pin.framesForwardKinematics(model, data, q)
    desired = np.concatenate([force, np.cross(data.oMf[fid].translation, force)])
    chain = CompliantChain.from_robot_model(robot, stiffness)
    w_tool = rigid_sensor_wrench(chain, q, desired)

    def actual_base_wrench(q_set: np.ndarray) -> np.ndarray:
        theta = q_set.copy()
        for _ in range(500):
            jac = pin.computeFrameJacobian(model, data, theta, fid, pin.LOCAL)
            new = q_set + (jac.T @ w_tool) / stiffness
            done = np.max(np.abs(new - theta)) < 1e-14
            theta = new
            if done:
                break
        pin.framesForwardKinematics(model, data, theta)
        return data.oMf[fid].act(pin.Force(w_tool[:3], w_tool[3:])).vector

    start = time.perf_counter()
    result = ur_force_setpoint_correction(robot, q, None, desired, stiffness)
    elapsed = time.perf_counter() - start
    return UrContactDemo(
        q_contact_rad=q, joint_stiffness_nm_per_rad=stiffness, desired_wrench_base=desired,
        sensor_wrench=w_tool, joint_deflection_rad=deflect_chain(chain, q, w_tool).joint_deflection_rad,
        error_before=desired - actual_base_wrench(q),
        error_after=desired - actual_base_wrench(result.q_rad), result=result, solve_time_s=elapsed,
    )


def format_ur_demo(demo: UrContactDemo, label: str = "") -> str:
    r = demo.result
    return "\n".join([
        f"UR3 contact, compliant joints {label}(stiffness {_vec(demo.joint_stiffness_nm_per_rad)} N·m/rad)",
        f"  desired base wrench           : {_vec(demo.desired_wrench_base)}",
        f"  joint deflection at contact   : {_vec(demo.joint_deflection_rad)} rad",
        f"  force error before correction : |e_f| = {np.linalg.norm(demo.error_before[:3]):.4g} N, "
        f"|e_m| = {np.linalg.norm(demo.error_before[3:]):.4g} N·m   {_vec(demo.error_before)}",
        f"  force error after correction  : |e_f| = {np.linalg.norm(demo.error_after[:3]):.4g} N, "
        f"|e_m| = {np.linalg.norm(demo.error_after[3:]):.4g} N·m   {_vec(demo.error_after)}",
        f"  correction {_vec(r.correction_rad)} rad; {r.summary()}; solve {demo.solve_time_s * 1e3:.1f} ms",
    ])


#: Variants of P4's steepest descent the paper leaves open: ``S_n`` (``max_direction_component``:
#: each component of ``G^T P e`` limited to this), a relaxation of the step ``lambda_n`` of eq. (15)
#: (``step_scale``), and the exact derivative of the quasi-static model instead of G.
STEEPEST_DESCENT_VARIANTS: tuple[tuple[str, dict], ...] = (
    ("eq. (15) as printed: S_n = I, step lambda_n", {}),
    ("S_n limits |(G^T P e)_i| to 0.01", {"max_direction_component": 0.01}),
    ("S_n limits |(G^T P e)_i| to 0.003", {"max_direction_component": 0.003}),
    ("S_n limits |(G^T P e)_i| to 0.001", {"max_direction_component": 0.001}),
    ("step 0.5 lambda_n", {"step_scale": 0.5}),
    ("step 0.8 lambda_n", {"step_scale": 0.8}),
    ("step 0.95 lambda_n", {"step_scale": 0.95}),
    ("exact derivative instead of G", {"jacobian": "full"}),
)


def steepest_descent_sweep(key: str, poses: list[np.ndarray] | None = None, *, max_iterations: int = 4000,
                           variants: tuple[tuple[str, dict], ...] = STEEPEST_DESCENT_VARIANTS
                           ) -> list[tuple[str, list[int | None]]]:
    """Iterations to V <= 1e-6 of P4's steepest descent under each variant, per pose (None = not within
    ``max_iterations``). Default poses: the example's default pose only."""
    ex = PAPER_EXAMPLES[key]
    arm = paper_planar_arm(ex.n_links)
    poses = [ex.q_initial_rad] if poses is None else poses
    rows = []
    for label, kw in variants:
        counts: list[int | None] = []
        for q0 in poses:
            r = compensate_steepest_descent(arm, q0, ex.sensor_wrench, ex.desired_base_wrench,
                                            max_iterations=max_iterations, stall_iterations=max_iterations, **kw)
            counts.append(r.iterations if r.converged else None)
        rows.append((label, counts))
    return rows


@dataclass(frozen=True)
class LinkFlexibilityDemo:
    """UR3 contact with compliant joints and flexible links (P4 eq. (5) beams): base-frame wrench errors."""

    q_contact_rad: np.ndarray
    desired_wrench_base: np.ndarray
    #: world-frame wrench error of a rigid-model force loop: joints only, links only, both
    error_joints: np.ndarray
    error_links: np.ndarray
    error_both: np.ndarray
    #: after P4's joint set-point correction computed with joints only / with joints and links,
    #: evaluated on the arm with both
    error_after_joint_only_correction: np.ndarray
    error_after_full_correction: np.ndarray
    link_tip_deflection: np.ndarray  # per long link [dd (m), dtheta (rad)] in its distal frame
    full_correction: CompensationResult


def ur3_link_flexibility_demo(*, joint_stiffness_nm_per_rad: np.ndarray | None = None,
                              tubes: dict[int, tuple[float, float]] | None = None) -> LinkFlexibilityDemo:
    """The contact of :func:`ur3_contact_demo` on a UR3 whose upper arm and forearm are also beams.

    The arm with both joint and link compliance (:func:`ur3_link_beams`, ASSUMED tubes) is the
    truth here; errors are ``w_d - w`` in the base frame with the sensor wrench a rigid-model
    force loop holds. (The joint-only demo checks the chain against an independent pinocchio
    fixed point; with beams only the chain recursion of eqs. (17)-(19) is available.)
    """
    from ..robots import load_robot

    robot = load_robot("ur3")
    stiffness = np.asarray(UR3_JOINT_STIFFNESS_NM_PER_RAD if joint_stiffness_nm_per_rad is None
                           else joint_stiffness_nm_per_rad, dtype=float)
    base = ur3_contact_demo(joint_stiffness_nm_per_rad=stiffness)
    q, desired = base.q_contact_rad, base.desired_wrench_base
    beams = ur3_link_beams(robot, tubes)
    joints = CompliantChain.from_robot_model(robot, stiffness)
    links = CompliantChain.from_robot_model(robot, None, link_beams=beams)
    both = CompliantChain.from_robot_model(robot, stiffness, link_beams=beams)
    w_tool = rigid_sensor_wrench(both, q, desired)

    def error(chain: CompliantChain, q_set: np.ndarray) -> np.ndarray:
        return desired - deflect_chain(chain, q_set, w_tool).base_wrench

    joint_only = compensate_levenberg_marquardt(joints, q, w_tool, desired)
    full = compensate_levenberg_marquardt(both, q, w_tool, desired)
    state = deflect_chain(both, q, w_tool)
    return LinkFlexibilityDemo(
        q_contact_rad=q, desired_wrench_base=desired, error_joints=error(joints, q), error_links=error(links, q),
        error_both=error(both, q), error_after_joint_only_correction=error(both, joint_only.q_rad),
        error_after_full_correction=error(both, full.q_rad),
        link_tip_deflection=state.link_deflection[sorted(beams)], full_correction=full)


def format_link_demo(demo: LinkFlexibilityDemo, tubes: dict[int, tuple[float, float]] | None = None) -> str:
    tubes = UR3_LINK_TUBES_ASSUMED if tubes is None else tubes
    f = lambda e: f"|e_f| {np.linalg.norm(e[:3]):.4g} N, |e_m| {np.linalg.norm(e[3:]):.4g} N·m"  # noqa: E731
    described = ", ".join(f"segment {i}: tube {d * 1e3:.0f} x {w * 1e3:.0f} mm" for i, (d, w) in tubes.items())
    tip = demo.link_tip_deflection
    return "\n".join([
        f"UR3 contact with compliant joints AND flexible links (ASSUMED aluminium tubes: {described})",
        f"  link tip deflection: upper arm {np.linalg.norm(tip[0, :3]) * 1e6:.1f} um / {np.linalg.norm(tip[0, 3:]) * 1e3:.3f}"
        f" mrad, forearm {np.linalg.norm(tip[1, :3]) * 1e6:.1f} um / {np.linalg.norm(tip[1, 3:]) * 1e3:.3f} mrad",
        f"  world-frame error, rigid-model force loop: joints only {f(demo.error_joints)}; links only "
        f"{f(demo.error_links)}; both {f(demo.error_both)}",
        f"  after P4's correction computed with joints only: {f(demo.error_after_joint_only_correction)}; "
        f"with joints and links: {f(demo.error_after_full_correction)} ({demo.full_correction.iterations} LM iterations)",
    ])
