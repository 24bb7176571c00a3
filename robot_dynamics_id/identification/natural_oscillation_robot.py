"""Natural-oscillation trials (seeds.md P1) on a robot that streams its state: the procedure a real arm needs.

A simulator can put the arm upright with a push velocity (``reset(q, qd)``);
a real arm cannot. :class:`StreamingVerticalPlaneArm` meets the trial's plant
protocol (:class:`.natural_oscillation.TorqueControlledArm`) on anything that
streams joint states and accepts joint velocity and torque commands (the
``natural_oscillation`` ROS node through ``ur_interface``, or the MuJoCo plant
directly through :class:`SimulatedRobotLink`):

* ``reset(q, qd)``: move to the upright pose in velocity mode (bounded speed),
  wait until the arm is there and at rest, then *push*: a velocity command on
  the pushed joints until the measured velocity reaches the push, after which
  the first torque command takes over (speedJ -> direct_torque);
* ``apply_torque(tau)``: the law's torque on the two pendulum joints plus a PD
  hold of the others, as one torque command;
* ``step()``: wait for the next state and run the :class:`FallGuard`. A fall
  (excursion beyond the bound, the same bound the trial uses) stops the arm at
  once with a zero velocity command (speedJ stop) and the trial ends as
  "falls"; anything else the guard sees (joint limit, speed, lost state)
  stops the arm and aborts the procedure with :class:`ArmStopped`.

No ROS here: the link is a small protocol.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from .natural_oscillation_ur3 import ACTIVE_JOINTS, UR3_UPRIGHT_Q_RAD

__all__ = ["PLAUSIBLE_FACTORS", "ArmStopped", "FallGuard", "RobotLink", "SimulatedRobotLink", "StreamingVerticalPlaneArm",
           "doubtful_search", "doubtful_trials"]


class ArmStopped(RuntimeError):
    """The guard stopped the arm for a reason other than a fall; the procedure must not go on."""


class RobotLink(Protocol):
    """A robot streaming full joint states at ``period_s`` and taking full joint commands."""

    period_s: float

    def next_state(self, timeout_s: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Block until a state newer than the last one returned; (q rad, qd rad/s), None on timeout."""
        ...

    def send_torque(self, torque_nm: np.ndarray) -> None: ...

    def send_velocity(self, qd_rad_s: np.ndarray) -> None: ...


@dataclass(frozen=True)
class FallGuard:
    """What ends a trial early and stops the arm.

    ``max_excursion_rad``: largest distance of any pendulum coordinate (absolute
    link angle) from upright — a fall. ``position_lower_rad``/``position_upper_rad``
    less ``position_margin_rad`` are hard limits: crossing them aborts the procedure.
    ``max_velocity_rad_s`` (every joint) bounds a trial (the arm in torque mode,
    falling or oscillating): a joint that fast ends the trial as a fall, the arm is
    stopped all the same and the search goes on. Outside a trial the arm is under
    speedJ (moves bounded by the approach speed; a stop decelerates it), so speed
    there is the robot's to bound, not a reason to abort.
    """

    max_excursion_rad: float
    position_lower_rad: np.ndarray
    position_upper_rad: np.ndarray
    position_margin_rad: float = 0.1
    max_velocity_rad_s: float = 1.5

    def __post_init__(self) -> None:
        if not self.max_excursion_rad > 0:
            raise ValueError("max_excursion_rad must be > 0")
        if not self.max_velocity_rad_s > 0:
            raise ValueError("max_velocity_rad_s must be > 0")
        object.__setattr__(self, "position_lower_rad", np.asarray(self.position_lower_rad, float))
        object.__setattr__(self, "position_upper_rad", np.asarray(self.position_upper_rad, float))

    def fall(self, coordinates: np.ndarray, upright_coordinates: np.ndarray) -> bool:
        return bool(np.max(np.abs(np.asarray(coordinates) - upright_coordinates)) > self.max_excursion_rad)

    def hard_limit(self, q: np.ndarray, qd: np.ndarray, *, check_speed: bool = True) -> str | None:
        """A message naming the violated hard limit, or None (``check_speed`` False: positions and NaN only)."""
        low = self.position_lower_rad + self.position_margin_rad
        high = self.position_upper_rad - self.position_margin_rad
        bad = np.flatnonzero((q < low) | (q > high))
        if bad.size:
            j = int(bad[0])
            return f"joint {j} at {q[j]:.3f} rad is within {self.position_margin_rad} rad of its position limit"
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            return "joint state contains NaN"
        return self.too_fast(qd) if check_speed else None

    def too_fast(self, qd: np.ndarray) -> str | None:
        """A message naming a joint faster than ``max_velocity_rad_s``, or None."""
        fast = np.flatnonzero(np.abs(qd) > self.max_velocity_rad_s)
        if fast.size:
            j = int(fast[0])
            return f"joint {j} moves at {qd[j]:.3f} rad/s, above the guard's {self.max_velocity_rad_s} rad/s"
        return None


@dataclass
class StreamingVerticalPlaneArm:
    """The vertical-plane pendulum (shoulder, elbow) of a streaming robot as a TorqueControlledArm.

    ``coordinates(q_active)`` maps the two active angles to the pendulum
    coordinates the guard watches (the model's ``oscillation_coordinates``).
    ``hold_gains``: (k_p N m/rad, k_d N m s/rad) per held joint. Timings:
    ``approach_speed_rad_s`` and ``approach_gain_per_s`` for the move upright,
    ``settle_tolerance_rad``/``settle_velocity_rad_s`` to call it at rest,
    ``state_timeout_s`` for a silent robot. ``trial_time_s`` accumulates the
    robot time spent in torque mode (the experiment's cost), ``falls`` counts
    guard stops; ``on_event(message)`` reports what the arm does.
    """

    link: RobotLink
    guard: FallGuard
    coordinates: Callable[[np.ndarray], np.ndarray]
    upright_q_rad: np.ndarray = field(default_factory=lambda: UR3_UPRIGHT_Q_RAD.copy())
    active_joints: tuple[int, int] = ACTIVE_JOINTS
    hold_gains: tuple[tuple[float, float], ...] = ((200.0, 6.0), (60.0, 1.5), (20.0, 0.3), (10.0, 0.15))
    approach_speed_rad_s: float = 0.2
    approach_gain_per_s: float = 2.0
    settle_tolerance_rad: float = 0.003
    settle_velocity_rad_s: float = 0.01
    settle_timeout_s: float = 60.0
    push_timeout_s: float = 0.5
    state_timeout_s: float = 0.5
    on_event: Callable[[str], None] | None = None
    on_trial_end: Callable[[dict], None] | None = None

    def __post_init__(self) -> None:
        self.upright_q_rad = np.asarray(self.upright_q_rad, float).copy()
        n = self.upright_q_rad.size
        self.active = list(self.active_joints)
        self.held = [j for j in range(n) if j not in self.active]
        gains = np.asarray(self.hold_gains, float)
        if gains.shape != (len(self.held), 2) or np.any(gains < 0):
            raise ValueError(f"hold_gains needs one (k_p >= 0, k_d >= 0) pair per held joint {self.held}")
        self._kp, self._kd = gains[:, 0], gains[:, 1]
        self.period_s = float(self.link.period_s)
        self._upright_coordinates = np.asarray(self.coordinates(self.upright_q_rad[self.active]), float)
        self._q = self.upright_q_rad.copy()
        self._qd = np.zeros(n)
        self.stopped = False
        self.falls = 0
        self.trial_time_s = 0.0
        self.trials = 0
        self._in_trial = False
        self._trial_start_s = 0.0
        self._trial_fell = False
        self._fall_kind: str | None = None

    @property
    def trial_fell(self) -> bool:
        """The guard ended the running trial as a fall (an excursion or a joint too fast); run_push_trial reads it."""
        return self._in_trial and self._trial_fell

    # ---- helpers -------------------------------------------------------------------------------
    def _event(self, message: str) -> None:
        if self.on_event is not None:
            self.on_event(message)

    def _read(self, *, check_speed: bool = False) -> tuple[np.ndarray, np.ndarray]:
        state = self.link.next_state(self.state_timeout_s)
        if state is None:
            self.stop()
            raise ArmStopped(f"no joint state for {self.state_timeout_s} s: arm stopped")
        self._q, self._qd = np.asarray(state[0], float), np.asarray(state[1], float)
        problem = self.guard.hard_limit(self._q, self._qd, check_speed=check_speed)
        if problem is not None:
            self.stop()
            raise ArmStopped(f"guard: {problem}; arm stopped")
        return self._q, self._qd

    def finish_trial(self) -> None:
        """Stop the arm and report the trial that ran since the last reset (called by the next reset)."""
        if not self._in_trial:
            return
        self.stop()
        self._in_trial = False
        if self.on_trial_end is not None:
            summary = {"trial": self.trials, "fell": self._trial_fell,
                       "duration_s": self.trial_time_s - self._trial_start_s}
            if self._trial_fell:
                summary["fall"] = self._fall_kind
            self.on_trial_end(summary)

    def stop(self) -> None:
        """Zero joint velocity (speedJ stop): the robot decelerates and holds."""
        self.link.send_velocity(np.zeros_like(self.upright_q_rad))
        self.stopped = True

    def gravity_compensation(self, model) -> Callable[[np.ndarray], np.ndarray]:
        """What a robot's ``direct_torque`` adds, as seen on the active joints: ``model``'s (a full
        pinocchio model) gravity with the held joints where they are now (for
        ``PushExperiment.plant_gravity_compensation``)."""
        import pinocchio as pin

        data = model.createData()

        def gravity(q_active: np.ndarray) -> np.ndarray:
            q_full = self._q.copy()
            q_full[self.active] = np.asarray(q_active, float)
            return np.asarray(pin.computeGeneralizedGravity(model, data, q_full))[self.active]

        return gravity

    # ---- TorqueControlledArm ---------------------------------------------------------------------
    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Move to upright (the active joints at ``q``), wait at rest, then push to ``qd``."""
        target = self.upright_q_rad.copy()
        target[self.active] = np.asarray(q, float)
        push = np.zeros_like(target)
        push[self.active] = np.asarray(qd, float)
        self.finish_trial()
        self.stopped = False
        start = time.monotonic()
        settled = 0
        while settled < 10:
            q_now, qd_now = self._read()
            error = target - q_now
            self.link.send_velocity(np.clip(self.approach_gain_per_s * error, -self.approach_speed_rad_s,
                                            self.approach_speed_rad_s))
            at_rest = np.max(np.abs(error)) < self.settle_tolerance_rad and np.max(np.abs(qd_now)) < \
                self.settle_velocity_rad_s
            settled = settled + 1 if at_rest else 0
            if time.monotonic() - start > self.settle_timeout_s:
                self.stop()
                raise ArmStopped(f"the arm did not settle at the upright pose within {self.settle_timeout_s} s "
                                 f"(largest error {np.max(np.abs(error)):.4f} rad); arm stopped")
        if np.any(push != 0):
            # The push: speedJ to the push velocity; torque control takes over from the moving arm.
            start = time.monotonic()
            while True:
                self.link.send_velocity(push)
                q_now, qd_now = self._read()
                reached = np.all(np.abs(qd_now[self.active] - push[self.active]) <= 0.1 * np.abs(push[self.active])
                                 + 1e-3)
                if reached or time.monotonic() - start > self.push_timeout_s:
                    break
        self.trials += 1
        self._in_trial = True
        self._trial_fell = False
        self._fall_kind = None
        self._trial_start_s = self.trial_time_s

    def apply_torque(self, tau_nm: np.ndarray) -> None:
        if self.stopped:
            return  # after a fall the arm stays stopped until the next reset
        tau = np.zeros_like(self.upright_q_rad)
        tau[self.active] = np.asarray(tau_nm, float)
        h = self.held
        tau[h] = self._kp * (self.upright_q_rad[h] - self._q[h]) - self._kd * self._qd[h]
        self.link.send_torque(tau)

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        q, qd = self._read()  # in a trial, too fast is a fall (FallGuard)
        if not self.stopped:
            self.trial_time_s += self.period_s
            fast = self.guard.too_fast(qd)
            if fast is not None or self.guard.fall(self.coordinates(q[self.active]), self._upright_coordinates):
                self.stop()
                self.falls += 1
                self._trial_fell = True
                self._fall_kind = "speed" if fast is not None else "excursion"
                why = fast or f"excursion beyond {self.guard.max_excursion_rad} rad"
                self._event(f"fall: {why}, arm stopped")
        return q[self.active].copy(), qd[self.active].copy()


class SimulatedRobotLink:
    """A :class:`RobotLink` over :class:`robot_dynamics_id.sim.plant.SimulatedUR`, stepped synchronously.

    Each ``next_state`` applies the newest command sent since the previous one,
    ``command_delay_cycles`` periods late (1 = a command answers the previous
    state, as over DDS), then advances the plant one period.
    """

    def __init__(self, plant, *, command_delay_cycles: int = 0, speedj_acceleration_rad_s2: float = 10.0) -> None:
        self.plant = plant
        self.period_s = plant.period_s
        self._pending: collections.deque = collections.deque(maxlen=int(command_delay_cycles) + 1)
        self._latest: tuple[str, np.ndarray] | None = None
        self._acceleration = float(speedj_acceleration_rad_s2)
        self._started = False

    def send_torque(self, torque_nm: np.ndarray) -> None:
        self._latest = ("torque", np.asarray(torque_nm, float).copy())

    def send_velocity(self, qd_rad_s: np.ndarray) -> None:
        self._latest = ("velocity", np.asarray(qd_rad_s, float).copy())

    def next_state(self, timeout_s: float) -> tuple[np.ndarray, np.ndarray]:
        if self._started:
            self._pending.append(self._latest)
            self._latest = None
            command = self._pending[0] if len(self._pending) == self._pending.maxlen else None
            if command is not None:
                kind, values = command
                if kind == "torque":
                    self.plant.direct_torque(values)
                else:
                    self.plant.speed_j(values, self._acceleration)
            self.plant.step()
        self._started = True
        s = self.plant.state()
        return np.asarray(s.q_rad, float), np.asarray(s.qd_rad_s, float)


#: identified factors (first moments / the prior's) outside this range are no real arm's: the search found
#: something else (a friction feed-forward that drives the arm, a wrong prior)
PLAUSIBLE_FACTORS = (0.5, 2.0)


def doubtful_trials(trials: list[dict]) -> list[str]:
    """Why a set of trials cannot be trusted, whatever their factors (empty: they can): most trials ended by the
    speed guard, or trials at the same factors that fell once and not once (the boundary is not repeatable)."""
    problems = []
    speed = sum(t.get("fall") == "speed" for t in trials)
    if trials and speed > len(trials) / 2:
        problems.append(f"{speed} of {len(trials)} trials ended with a joint above the guard's speed, not by falling "
                        "away: the law drives the arm (with compensate_friction, a friction model that overestimates "
                        "the arm's friction pushes it along); try compensate_friction false, or a model identified "
                        "with --friction-model p2 on a slow excitation")
    outcomes: dict[tuple, list[tuple]] = {}
    for t in (t for t in trials if "factors" in t):
        key = tuple(np.round(np.asarray(t["factors"], float), 9).tolist())
        outcomes.setdefault(key, []).append((t.get("trial"), bool(t.get("fell"))))
    for key, seen in outcomes.items():
        if len({fell for _, fell in seen}) > 1:
            fell = [n for n, f in seen if f]
            held = [n for n, f in seen if not f]
            problems.append(f"factors {list(key)} fell in trial(s) {fell} and did not in {held}: the fall boundary "
                            "is not repeatable here (friction that varies, a disturbance, a push that differs)")
    return problems


def doubtful_search(factors, trials: list[dict]) -> list[str]:
    """Why a bisection's result cannot be trusted (empty: it can): factors outside :data:`PLAUSIBLE_FACTORS`, or
    :func:`doubtful_trials` (trial summaries of :class:`StreamingVerticalPlaneArm`: ``fall``, ``fell``)."""
    problems = []
    f = np.asarray(factors, float)
    if np.any(f < PLAUSIBLE_FACTORS[0]) or np.any(f > PLAUSIBLE_FACTORS[1]):
        problems.append(f"the identified factors {np.round(f, 3).tolist()} put the first moments outside "
                        f"{PLAUSIBLE_FACTORS[0]:g}-{PLAUSIBLE_FACTORS[1]:g}x the prior's: no real arm is that far from "
                        "its model")
    return problems + doubtful_trials(trials)
