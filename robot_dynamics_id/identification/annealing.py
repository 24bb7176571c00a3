"""The baseline: simulated annealing on the 66-parameter Newton-Euler model of Cesarino (seeds.md P3).

Parameters per joint i (P3): mass m_i, centre of mass c_i (3), inertia tensor about
the CoM (6: xx, xy, yy, xz, yz, zz) and a viscous coefficient B_i -> 11 x 6 = 66.
Model: recursive Newton-Euler torques + B_i qd_i. Cost (P3): the mean over joints
of each joint's torque mean-square error divided by that joint's mean-square torque,

    f(theta) = 1/n sum_j  mean_k (tau_hat_kj - tau_kj)^2 / mean_k tau_kj^2 .

Search (P3, MATLAB ``simulannealbnd``): temperature T_k = T0 / k with T0 = 10
("fast" schedule); a candidate is a step of length T in a uniformly random
direction (MATLAB ``annealingfast``), taken here in parameters scaled by their
typical size (mass ~ m, CoM ~ 0.1 m, inertia ~ m (0.1 m)^2) so one step length
means the same for every parameter type; acceptance of a worse point with
probability 1 / (1 + exp(delta / T)) (MATLAB ``acceptancesa``); box bounds.
No physical-consistency constraint — as in P3 (whose result had negative inertias).

Implementation note: RNEA is linear in the standard parameters, so the cost is
evaluated exactly from per-joint Gram matrices of the regressor (one evaluation
costs O(66^2), independent of the data length). This makes the baseline *faster*
per evaluation than the paper's, never slower; its time budget is explicit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..progress import ProgressCallback

__all__ = ["AnnealingResult", "anneal", "physical_to_standard", "standard_to_physical"]

#: P3: T = T0 / k with T0 = 10.
INITIAL_TEMPERATURE = 10.0


@dataclass(frozen=True)
class AnnealingResult:
    """Best point found: physical parameters (n, 11): m, c(3), I_c(6: xx, xy, yy, xz, yz, zz), B;
    its standard parameters (10n), viscous coefficients, cost history and budget use."""

    physical: np.ndarray
    standard_parameters: np.ndarray
    viscous_nm_s_per_rad: np.ndarray
    cost: float
    initial_cost: float
    iterations: int
    accepted: int
    elapsed_s: float
    cost_history: np.ndarray


def physical_to_standard(physical: np.ndarray) -> np.ndarray:
    """(n, 10+) physical (m, c, I_c) -> pinocchio standard parameters (n, 10), inertia about the origin
    by the parallel-axis theorem: I_o = I_c + m (|c|^2 1 - c c^T)."""
    p = np.atleast_2d(physical)
    m, c = p[:, 0], p[:, 1:4]
    ixx, ixy, iyy, ixz, iyz, izz = p[:, 4:10].T
    cx, cy, cz = c.T
    out = np.empty((p.shape[0], 10))
    out[:, 0] = m
    out[:, 1:4] = m[:, None] * c
    out[:, 4] = ixx + m * (cy**2 + cz**2)
    out[:, 5] = ixy - m * cx * cy
    out[:, 6] = iyy + m * (cx**2 + cz**2)
    out[:, 7] = ixz - m * cx * cz
    out[:, 8] = iyz - m * cy * cz
    out[:, 9] = izz + m * (cx**2 + cy**2)
    return out


def standard_to_physical(standard: np.ndarray) -> np.ndarray:
    """Inverse of :func:`physical_to_standard` (needs m != 0): (n, 10) -> (n, 10) (m, c, I_c)."""
    s = np.atleast_2d(np.asarray(standard, float)).reshape(-1, 10)
    m = s[:, 0]
    c = s[:, 1:4] / m[:, None]
    shift = physical_to_standard(np.column_stack([m, c, np.zeros((s.shape[0], 6))]))
    return np.column_stack([m, c, s[:, 4:10] - shift[:, 4:10]])


def anneal(rigid_regressor: np.ndarray, qd_rad_s: np.ndarray, torque_nm: np.ndarray, initial_physical: np.ndarray,
           *, max_iterations: int = 200_000, max_time_s: float = 60.0, seed: int = 0,
           initial_temperature: float = INITIAL_TEMPERATURE,
           progress: ProgressCallback | None = None) -> AnnealingResult:
    """Simulated annealing of P3 on data: rigid regressor (N*n, 10n), velocities (N, n), torques (N, n).

    ``initial_physical`` (n, 11) is the start (e.g. the nominal masses/CoMs/inertia priors, B = 0).
    Stops after ``max_iterations`` or ``max_time_s``, whichever comes first; ``progress(fraction, "annealing")``
    every 1000 iterations.
    """
    tau = np.asarray(torque_nm, float)
    n_samples, n = tau.shape
    qd = np.asarray(qd_rad_s, float).reshape(n_samples, n)
    w = np.asarray(rigid_regressor, float).reshape(n_samples, n, 10 * n)
    # Per-joint Gram matrices of [rigid | viscous_j] (the cost is a quadratic in the 66 parameters).
    gram = np.empty((n, 10 * n + 1, 10 * n + 1))
    lin = np.empty((n, 10 * n + 1))
    mean_square = np.mean(tau**2, axis=0)
    if np.any(mean_square <= 0):
        raise ValueError("a joint has zero torque throughout; the P3 cost divides by each joint's mean-square torque")
    for j in range(n):
        a = np.column_stack([w[:, j, :], qd[:, j]])
        gram[j] = a.T @ a / n_samples
        lin[j] = a.T @ tau[:, j] / n_samples

    def cost(phys: np.ndarray) -> float:
        std = physical_to_standard(phys[:, :10]).ravel()
        total = 0.0
        for j in range(n):
            x = np.append(std, phys[j, 10])
            total += (x @ gram[j] @ x - 2 * lin[j] @ x + mean_square[j]) / mean_square[j]
        return total / n

    x0 = np.asarray(initial_physical, float).reshape(n, 11).copy()
    mass0 = np.maximum(x0[:, 0], 0.1)
    scale = np.column_stack([mass0, np.full((n, 3), 0.1), (mass0 * 0.01)[:, None] * np.ones((1, 6)), np.ones(n)])
    lower = np.column_stack([np.zeros(n), np.full((n, 3), -0.5), np.full((n, 6), -1.0), np.zeros(n)])
    upper = np.column_stack([4 * mass0 + 1, np.full((n, 3), 0.5), np.full((n, 6), 1.0), np.full(n, 20.0)])
    rng = np.random.default_rng(seed)
    current = np.clip(x0, lower, upper)
    f_current = cost(current)
    best, f_best = current.copy(), f_current
    f_initial = f_current
    history = [f_current]
    accepted = 0
    start = time.perf_counter()
    k = 0
    for k in range(1, max_iterations + 1):
        temperature = initial_temperature / k  # P3: T = T0 / k
        direction = rng.normal(size=current.shape)
        direction /= np.linalg.norm(direction)
        candidate = np.clip(current + temperature * direction * scale, lower, upper)
        f_candidate = cost(candidate)
        delta = f_candidate - f_current
        if delta <= 0 or rng.random() < 1.0 / (1.0 + np.exp(min(delta / temperature, 700.0))):
            current, f_current = candidate, f_candidate
            accepted += 1
            if f_current < f_best:
                best, f_best = current.copy(), f_current
        if k % 1000 == 0:
            history.append(f_best)
            if progress is not None:
                progress(k / max_iterations, "annealing")
            if time.perf_counter() - start > max_time_s:
                break
    return AnnealingResult(physical=best, standard_parameters=physical_to_standard(best[:, :10]).ravel(),
                           viscous_nm_s_per_rad=best[:, 10].copy(), cost=float(f_best), initial_cost=float(f_initial),
                           iterations=k, accepted=accepted, elapsed_s=time.perf_counter() - start,
                           cost_history=np.asarray(history))
