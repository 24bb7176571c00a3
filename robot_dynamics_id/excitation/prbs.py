"""The excitation schedule of seeds.md P3: one joint at a time runs a PRBS, the others sinusoids.

Cesarino (P3, "Excitation") drove a UR3 — which accepts only joint velocity or
acceleration commands — with a pseudo-random binary sequence (PRBS) of joint
velocity between +0.5 and −0.5 rad/s at an acceleration of 7.5 rad/s² on one
joint while all other joints ran sinusoids, so that the pose keeps changing; the
joints took turns. A PRBS on all joints at once was rejected as too harsh.

This module builds that schedule as an analytic trajectory:

* The run of ``duration_s`` is split into one *turn* per joint. In its turn a
  joint follows the velocity command of a maximal-length LFSR sequence (bit 1 →
  +v, bit 0 → −v) that switches at the clock edges; as the robot's ``speedJ``
  does, each switch is an acceleration-limited ramp starting at the edge. The
  turn starts and ends at zero velocity.
* Outside its turn a joint moves as ``A_j e_j(t) sin(2π f_j t + φ_j)`` about
  where its PRBS left it; the envelope ``e_j`` (quintic smooth step, C²) fades
  the sinusoid out before the joint's own turn and in after it, and fades every
  joint in at the start and out at the end, so the whole run starts and ends at
  rest.

Position, velocity and acceleration are all closed-form (the PRBS position is
the exact integral of its ramped velocity), so :meth:`PrbsSinusoidSchedule.evaluate`
is exact at any time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .trajectory import JointTrajectory

__all__ = [
    "MAXIMAL_LENGTH_TAPS",
    "PrbsSinusoidSchedule",
    "UR_HOME_POSITION_RAD",
    "maximal_length_sequence",
    "ramped_binary_velocity",
]

#: Upright UR pose (arm pointing up, wrist straight): far from the table for any sinusoid of moderate size.
UR_HOME_POSITION_RAD = (0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0)

#: Feedback taps (1-based bit positions) of Fibonacci LFSRs that give maximal-length
#: sequences (period 2^m − 1), one per register length m; from the table of primitive
#: trinomials/pentanomials in Xilinx XAPP052 (Alfke, "Efficient shift registers, LFSR
#: counters, and long pseudo-random sequence generators", 1996). The test checks each period.
MAXIMAL_LENGTH_TAPS: dict[int, tuple[int, ...]] = {
    3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4), 9: (9, 5), 10: (10, 7),
    11: (11, 9), 12: (12, 6, 4, 1), 13: (13, 4, 3, 1), 14: (14, 5, 3, 1), 15: (15, 14), 16: (16, 15, 13, 4),
}


def maximal_length_sequence(register_bits: int, *, initial_state: int = 1, length: int | None = None) -> np.ndarray:
    """Output bits (0/1) of a maximal-length Fibonacci LFSR of ``register_bits`` stages.

    One period is ``2**register_bits - 1`` bits and holds one more 1 than 0s;
    ``length`` (default: one period) cycles on. ``initial_state`` (1 … 2^m − 1)
    picks the phase of the sequence.
    """
    if register_bits not in MAXIMAL_LENGTH_TAPS:
        raise ValueError(f"register_bits must be one of {sorted(MAXIMAL_LENGTH_TAPS)}, got {register_bits}")
    period = (1 << register_bits) - 1
    if not 1 <= int(initial_state) <= period:
        raise ValueError(f"initial_state must be in 1..{period} (the all-zero state locks the register)")
    length = period if length is None else int(length)
    if length < 0:
        raise ValueError("length must be >= 0")
    taps = MAXIMAL_LENGTH_TAPS[register_bits]
    state = int(initial_state)
    out = np.empty(length, dtype=np.int8)
    for k in range(length):
        out[k] = state & 1
        feedback = 0
        for tap in taps:
            feedback ^= (state >> (register_bits - tap)) & 1
        state = (state >> 1) | (feedback << (register_bits - 1))
    return out


def ramped_binary_velocity(
    t_s: np.ndarray,
    bits: np.ndarray,
    *,
    start_s: float,
    clock_s: float,
    level_rad_s: float,
    acceleration_rad_s2: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Displacement, velocity and acceleration of one joint driven by a PRBS velocity command.

    Edge ``k`` (time ``start_s + k clock_s``) sets the target to ``+level`` (bit 1)
    or ``-level`` (bit 0); edge ``len(bits)`` sets it back to 0. After each edge the
    velocity ramps at ``acceleration_rad_s2`` to the target (seeds.md P3: 0.5 rad/s,
    7.5 rad/s²); the clock must leave time to finish a full swing. Displacement is
    relative to the position at ``start_s`` (0 before it) and is the exact integral.
    """
    t = np.asarray(t_s, dtype=float)
    bits = np.asarray(bits).ravel()
    v, a = float(level_rad_s), float(acceleration_rad_s2)
    if 2 * v / a > clock_s * (1 + 1e-12):
        raise ValueError(f"PRBS clock {clock_s:.4g} s is shorter than a full swing 2v/a = {2 * v / a:.4g} s")
    n_bits = bits.size
    targets = np.concatenate([[0.0], np.where(bits > 0, v, -v), [0.0]])  # targets[k+1] set at edge k
    previous, target = targets[:-1], targets[1:]  # per segment k = 0..n_bits
    ramp_s = np.abs(target - previous) / a
    direction = np.sign(target - previous)
    # Displacement over a full segment k < n_bits (ramp then hold until the next edge).
    full = previous * ramp_s + 0.5 * direction * a * ramp_s**2 + target * (clock_s - ramp_s)
    full[-1] = previous[-1] * ramp_s[-1] + 0.5 * direction[-1] * a * ramp_s[-1] ** 2  # last: ramp to 0, then rest
    displacement_at_edge = np.concatenate([[0.0], np.cumsum(full[:-1])])

    tau_all = t - start_s
    k = np.clip(np.floor(tau_all / clock_s).astype(int), 0, n_bits)
    tau = tau_all - k * clock_s
    in_ramp = tau < ramp_s[k]
    tau_r = np.minimum(tau, ramp_s[k])
    qd = np.where(in_ramp, previous[k] + direction[k] * a * tau, target[k])
    qdd = np.where(in_ramp, direction[k] * a, 0.0)
    dq = displacement_at_edge[k] + previous[k] * tau_r + 0.5 * direction[k] * a * tau_r**2 \
        + target[k] * (tau - tau_r)
    before = tau_all < 0
    return np.where(before, 0.0, dq), np.where(before, 0.0, qd), np.where(before, 0.0, qdd)


def _smooth_step(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quintic smooth step S(x) = 10x³ − 15x⁴ + 6x⁵ on [0, 1] (0 below, 1 above) and S', S''."""
    x = np.clip(x, 0.0, 1.0)
    s = x**3 * (10 - 15 * x + 6 * x**2)
    ds = 30 * x**2 * (1 - x) ** 2
    dds = 60 * x * (1 - x) * (1 - 2 * x)
    return s, ds, dds


def _vector(name: str, value, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have {n} entries, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


@dataclass(frozen=True, kw_only=True)
class PrbsSinusoidSchedule:
    """Parameters of the P3 schedule (see the module docstring); build samples with :meth:`to_trajectory`.

    ``start_position_rad`` also fixes the number of joints. Per-joint values
    (amplitudes, frequencies) may be scalars. ``prbs_clock_s=None`` chooses the
    clock so that each turn holds exactly one period (2^m − 1 bits) of the
    sequence, whose net displacement is then one clock of +v.
    """

    duration_s: float = 60.0
    start_position_rad: Sequence[float] = UR_HOME_POSITION_RAD
    prbs_velocity_rad_s: float = 0.5
    prbs_acceleration_rad_s2: float = 7.5
    prbs_register_bits: int = 6
    prbs_clock_s: float | None = None
    sinusoid_amplitude_rad: Sequence[float] | float = 0.5
    sinusoid_frequency_hz: Sequence[float] | float | None = None
    blend_s: float = 1.0
    turn_order: Sequence[int] | None = None
    seed: int = 0
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        q0 = np.asarray(self.start_position_rad, float).ravel()
        n = q0.size
        if n < 1 or not np.all(np.isfinite(q0)):
            raise ValueError("start_position_rad must be finite joint angles")
        if not self.duration_s > 0:
            raise ValueError(f"duration_s must be > 0, got {self.duration_s}")
        if not (self.prbs_velocity_rad_s > 0 and self.prbs_acceleration_rad_s2 > 0):
            raise ValueError("prbs_velocity_rad_s and prbs_acceleration_rad_s2 must be > 0")
        if self.blend_s <= 0:
            raise ValueError("blend_s must be > 0")
        amplitude = _vector("sinusoid_amplitude_rad", self.sinusoid_amplitude_rad, n)
        freq = self.sinusoid_frequency_hz
        # Default: distinct, non-harmonic frequencies 0.10, 0.13, 0.16, ... Hz so joints do not move in lock-step.
        frequency = 0.10 + 0.03 * np.arange(n) if freq is None else _vector("sinusoid_frequency_hz", freq, n)
        if np.any(frequency <= 0):
            raise ValueError("sinusoid frequencies must be > 0 Hz")
        order = np.arange(n) if self.turn_order is None else np.asarray(self.turn_order, int).ravel()
        if order.size < 1 or np.any((order < 0) | (order >= n)) or np.unique(order).size != order.size:
            raise ValueError(f"turn_order must list distinct joint indices in 0..{n - 1}, got {list(order)}")
        turn_s = self.duration_s / order.size
        ramp_s = self.prbs_velocity_rad_s / self.prbs_acceleration_rad_s2
        usable_s = turn_s - ramp_s  # the last ramp back to rest must end inside the turn
        period_bits = (1 << int(self.prbs_register_bits)) - 1
        if int(self.prbs_register_bits) not in MAXIMAL_LENGTH_TAPS:
            raise ValueError(f"prbs_register_bits must be one of {sorted(MAXIMAL_LENGTH_TAPS)}")
        if self.prbs_clock_s is None:
            clock_s, n_bits = usable_s / period_bits, period_bits
        else:
            clock_s = float(self.prbs_clock_s)
            n_bits = int(np.floor(usable_s / clock_s + 1e-9))
        full_swing_s = 2 * ramp_s
        if n_bits < 1 and clock_s >= full_swing_s * (1 - 1e-9):
            raise ValueError(f"PRBS clock {clock_s:.4g} s is longer than a joint's turn ({usable_s:.3g} s of motion "
                             "per joint): lengthen duration_s or shorten prbs_clock_s")
        if n_bits < 1 or clock_s < full_swing_s * (1 - 1e-9):
            raise ValueError(
                f"PRBS clock {clock_s:.4g} s is shorter than a full velocity swing 2v/a = {full_swing_s:.4g} s "
                f"(turn {turn_s:.3g} s per joint): lengthen duration_s, lower prbs_register_bits or set prbs_clock_s"
            )
        rng = np.random.default_rng(self.seed)
        initial_states = rng.integers(1, period_bits + 1, size=n)
        phase = rng.uniform(0.0, 2 * np.pi, size=n)
        bits = {int(j): maximal_length_sequence(int(self.prbs_register_bits), initial_state=int(initial_states[j]),
                                                length=n_bits) for j in order}
        turn_start = {int(j): i * turn_s for i, j in enumerate(order)}
        self._derived.update(
            n=n, q0=q0, amplitude=amplitude, frequency=frequency, phase=phase, order=order, turn_s=turn_s,
            clock_s=clock_s, n_bits=n_bits, bits=bits, turn_start=turn_start,
        )

    # ---- derived facts -------------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        return self._derived["n"]

    @property
    def turn_duration_s(self) -> float:
        return self._derived["turn_s"]

    @property
    def effective_clock_s(self) -> float:
        """The PRBS clock actually used (derived when ``prbs_clock_s`` is None)."""
        return self._derived["clock_s"]

    def prbs_bits(self, joint: int) -> np.ndarray:
        """The bits joint ``joint`` plays in its turn (empty if it has no turn)."""
        return self._derived["bits"].get(int(joint), np.zeros(0, np.int8)).copy()

    def turn_start_s(self, joint: int) -> float | None:
        return self._derived["turn_start"].get(int(joint))

    # ---- evaluation ----------------------------------------------------------------------
    def evaluate(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact (q, qd, qdd), each (M, n), at times ``t_s`` (M,) in [0, duration_s]."""
        d = self._derived
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        n, T, tb = d["n"], float(self.duration_s), float(self.blend_s)
        q = np.tile(d["q0"], (t.size, 1))
        qd = np.zeros((t.size, n))
        qdd = np.zeros((t.size, n))
        # Global fade-in/out shared by all sinusoids: g(t) = S(t/tb) S((T - t)/tb).
        s1, ds1, dds1 = _smooth_step(t / tb)
        s2, ds2, dds2 = _smooth_step((T - t) / tb)
        g = s1 * s2
        dg = (ds1 * s2 - s1 * ds2) / tb
        ddg = (dds1 * s2 - 2 * ds1 * ds2 + s1 * dds2) / tb**2
        for j in range(n):
            start = d["turn_start"].get(j)
            if start is None:  # no PRBS turn: sinusoid throughout
                w, dw, ddw = np.ones_like(t), np.zeros_like(t), np.zeros_like(t)
            else:
                end = start + d["turn_s"]
                dq, v, acc = ramped_binary_velocity(
                    t, d["bits"][j], start_s=start, clock_s=d["clock_s"],
                    level_rad_s=self.prbs_velocity_rad_s, acceleration_rad_s2=self.prbs_acceleration_rad_s2)
                q[:, j] += dq
                qd[:, j] += v
                qdd[:, j] += acc
                # Sinusoid envelope: 0 inside the turn, smooth step with the distance from it outside.
                dist = np.maximum(np.maximum(start - t, t - end), 0.0)
                slope = np.where(t < start, -1.0, np.where(t > end, 1.0, 0.0))
                sw, dsw, ddsw = _smooth_step(dist / tb)
                w, dw, ddw = sw, dsw * slope / tb, ddsw * slope**2 / tb**2
            e = g * w
            de = dg * w + g * dw
            dde = ddg * w + 2 * dg * dw + g * ddw
            omega = 2 * np.pi * d["frequency"][j]
            arg = omega * t + d["phase"][j]
            sin, cos = np.sin(arg), np.cos(arg)
            amp = d["amplitude"][j]
            q[:, j] += amp * e * sin
            qd[:, j] += amp * (de * sin + e * omega * cos)
            qdd[:, j] += amp * (dde * sin + 2 * de * omega * cos - e * omega**2 * sin)
        return q, qd, qdd

    def to_trajectory(self, *, rate_hz: float = 125.0, joint_names: Sequence[str] | None = None,
                      robot: str | None = None) -> JointTrajectory:
        """Samples at ``rate_hz`` (the robot rate) with exact evaluation in between."""
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        n_samples = int(round(self.duration_s * rate_hz)) + 1
        t = np.linspace(0.0, float(self.duration_s), n_samples)
        q, qd, qdd = self.evaluate(t)
        return JointTrajectory(
            time_s=t, position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd, joint_names=joint_names,
            kind="prbs_sinusoid", parameters=self.to_dict(), robot=robot,
            metadata={"effective_clock_s": self.effective_clock_s, "bits_per_turn": self._derived["n_bits"]},
            evaluator=self.evaluate,
        )

    # ---- YAML ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        for key in ("start_position_rad", "sinusoid_amplitude_rad", "sinusoid_frequency_hz", "turn_order"):
            value = out[key]
            if value is not None:
                out[key] = np.asarray(value).tolist()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrbsSinusoidSchedule:
        known = {f for f in cls.__dataclass_fields__ if not f.startswith("_")}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown prbs_sinusoid parameters {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)
