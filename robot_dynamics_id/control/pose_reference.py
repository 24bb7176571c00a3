"""A pose reference that moves to each new goal within speed and acceleration bounds, on the robot's clock.

An external pose target (``osc_controller``'s ``~/target_frame``) is a goal, not a set-point: a step
handed straight to the motion law of P2 eq. (2) asks for an acceleration the arm cannot give (the
overspeed guard then stops it), and the tool's own inertia reads as a contact force on the F/T sensor.
:class:`PoseReference` turns goals into a reference the law can follow: position p, orientation R,
twist [v, w] and acceleration [a, alpha] (base axes), recomputed once per control cycle.

Each cycle of length dt (the robot's timestamps, never the wall clock) the translation and the
rotation each follow the time-optimal rule for a point with bounded speed and acceleration
(an online trapezoidal profile in vector form):

    e      = goal - p                                   (rotation: e = log(R^T R_goal) in base axes)
    v_des  = e/|e| * min(v_max, sqrt(2 a_max |e|), |e|/dt)
    v_new  = v + clip(v_des - v, |.| <= a_max dt)
    p_new  = p + (v + v_new)/2 dt,    a = (v_new - v)/dt  (the feed-forward acceleration)

so a step becomes accelerate - cruise - brake, a goal moved while the reference is on its way is
followed without a velocity jump (the acceleration is bounded, not the jerk), and the rotation moves
along the geodesic to the goal, its angular velocity bounded the same way.

A stream of goals (a path published at some rate) would make that rule brake toward each goal and
speed up at the next: the feed-forward acceleration would chatter between +-a_max at the stream's rate.
So a goal that arrives within :data:`STREAM_INTERVAL_S` of the previous one is not jumped to: the goal
the rule follows moves from where it was to the new goal, linearly, over the interval between the two
(one interval of delay, no overshoot of the path), and the reference tracks that moving goal with a
lag of about v^2/(2 a_max) at speed v. A single goal (none in the interval before) is followed at once.

Arrays in, arrays out; the state is the reference itself. Units: m, rad, s.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from .tasks import MotionTarget

__all__ = ["PoseReference"]

#: dt larger than this (a paused stream of states) is integrated as this much: the reference never jumps
MAX_STEP_S = 0.05
#: goals closer together than this (s, robot time) are a stream: the goal moves linearly between them
STREAM_INTERVAL_S = 0.25


def _limited_step(error: np.ndarray, velocity: np.ndarray, speed_max: float, acceleration_max: float,
                  dt: float) -> np.ndarray:
    """The new velocity (module docstring): toward the goal at the braking-limited speed, its change bounded."""
    distance = math.sqrt(float(error @ error))
    if distance == 0.0:
        desired = np.zeros(3)
    else:
        # the braking speed for the distance left AFTER this cycle's step (trapezoidal: (v + v_new) dt / 2),
        # v_new^2 = 2 a (d - (v + v_new) dt / 2), so the discrete reference stops on the goal, not past it
        a_dt = acceleration_max * dt
        left = max(distance - 0.5 * dt * float(velocity @ error) / distance, 0.0)
        braking = 0.5 * (math.sqrt(a_dt * a_dt + 8.0 * acceleration_max * left) - a_dt)
        desired = error * (min(speed_max, braking, distance / dt) / distance)
    change = desired - velocity
    size = math.sqrt(float(change @ change))
    limit = acceleration_max * dt
    if size > limit:
        change *= limit / size
    return velocity + change


class PoseReference:
    """Moves a pose reference to the latest goal within speed/acceleration bounds (see the module docstring).

    Use::

        ref = PoseReference(position_m, rotation, speed_m_s=0.1, acceleration_m_s2=0.5,
                            angular_speed_rad_s=0.5, angular_acceleration_rad_s2=2.0)
        ref.set_goal(goal_position_m, goal_rotation)     # any time; validated by the caller
        target = ref.targets(time_s)                      # once per cycle, robot time
        controller.set_motion_target(target.position_m, target.rotation, twist=target.twist,
                                     acceleration=target.acceleration)

    Starts at rest at the given pose, which is also the first goal. A goal takes effect at the next
    :meth:`targets` call (its time is the goal's time: the caller need not know the robot's clock).
    """

    #: the node's polishing-duration rule asks every task whether it is in its timed phase; this one has none
    sliding = False

    def __init__(self, position_m, rotation, *, speed_m_s: float, acceleration_m_s2: float,
                 angular_speed_rad_s: float, angular_acceleration_rad_s2: float) -> None:
        limits = (speed_m_s, acceleration_m_s2, angular_speed_rad_s, angular_acceleration_rad_s2)
        if not all(math.isfinite(x) and x > 0 for x in limits):
            raise ValueError(f"speed and acceleration bounds must be finite and > 0, got {limits}")
        self.speed_m_s, self.acceleration_m_s2 = float(speed_m_s), float(acceleration_m_s2)
        self.angular_speed_rad_s = float(angular_speed_rad_s)
        self.angular_acceleration_rad_s2 = float(angular_acceleration_rad_s2)
        self.position_m = np.array(position_m, float)
        self.rotation = np.array(rotation, float)
        #: the latest goal (what the user asked for) and the goal the rule follows now (moving along a stream)
        self.goal_position_m, self.goal_rotation = self.position_m.copy(), self.rotation.copy()
        self._follow_p, self._follow_r = self.position_m.copy(), self.rotation.copy()
        #: a stream's goal moving linearly: (from p, from R, to p, to R, log(from R^T to R), start s, length s)
        self._ramp: tuple | None = None
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self._last_goal_s: float | None = None
        self._v, self._w = np.zeros(3), np.zeros(3)
        self._acceleration = np.zeros(6)
        self._time_s: float | None = None
        self._moving = False  # False: at rest on the goal, a cycle has nothing to compute

    def set_goal(self, position_m, rotation=None) -> None:
        """The pose to move to (base frame); ``rotation`` None keeps the goal orientation."""
        p = np.array(position_m, float)
        r = self.goal_rotation.copy() if rotation is None else np.array(rotation, float)
        self._pending = (p, r)
        self.goal_position_m, self.goal_rotation = p, r

    @property
    def overshoot(self) -> tuple[float, float]:
        """(m, rad): how far the way to a goal set now may leave the straight segment (the geodesic) from the
        present reference: |v| 2 v_max / a and |w| 2 w_max / alpha. A goal changed mid-move turns the reference
        from its present velocity; the velocity across the new way decays at least at a |v_across| / (2 v_max)
        (the step toward the desired velocity is at most 2 v_max long), which bounds the integral. At rest: 0."""
        return (float(np.linalg.norm(self._v)) * 2 * self.speed_m_s / self.acceleration_m_s2,
                float(np.linalg.norm(self._w)) * 2 * self.angular_speed_rad_s / self.angular_acceleration_rad_s2)

    def remaining(self) -> tuple[float, float]:
        """Distance (m) and angle (rad) from the reference to the latest goal."""
        return (float(np.linalg.norm(self.goal_position_m - self.position_m)),
                float(np.linalg.norm(pin.log3(self.rotation.T @ self.goal_rotation))))

    @property
    def at_rest(self) -> bool:
        """The reference has reached the latest goal and stopped."""
        return not self._moving and self._pending is None

    def targets(self, time_s: float, stage=None) -> MotionTarget:
        """Advance the reference to ``time_s`` (s, the robot's clock) and return it; ``stage`` is unused (the
        same interface as :class:`~robot_dynamics_id.control.tasks.PolishingTask`)."""
        if self._time_s is not None and time_s < self._time_s:  # a timestamp from the past: hold
            return self._target()
        if self._pending is not None:
            self._take_goal(time_s)
        dt = 0.0 if self._time_s is None else min(time_s - self._time_s, MAX_STEP_S)
        self._time_s = time_s
        if dt > 0.0 and self._moving:
            self._follow_goal(time_s)
            self._advance(dt)
        return self._target()

    def _take_goal(self, time_s: float) -> None:
        """A new goal at ``time_s``: jumped to, or (a stream) reached linearly over the interval since the last."""
        p, r = self._pending
        self._pending = None
        interval = None if self._last_goal_s is None else time_s - self._last_goal_s
        self._last_goal_s = time_s
        if self._ramp is None and np.array_equal(p, self._follow_p) and np.array_equal(r, self._follow_r):
            return  # the goal it follows already (a stream repeating its last pose): nothing new to move to
        if interval is not None and 0.0 < interval <= STREAM_INTERVAL_S:
            self._follow_goal(time_s)  # the ramp starts where the followed goal is now
            self._ramp = (self._follow_p.copy(), self._follow_r.copy(), p, r, pin.log3(self._follow_r.T @ r),
                          time_s, interval)
        else:
            self._ramp = None
            self._follow_p, self._follow_r = p, r
        self._moving = True

    def _follow_goal(self, time_s: float) -> None:
        if self._ramp is None:
            return
        p0, r0, p1, r1, log_r, t0, length_s = self._ramp
        s = (time_s - t0) / length_s
        if s >= 1.0:
            self._ramp = None
            self._follow_p, self._follow_r = p1, r1
            return
        self._follow_p = p0 + s * (p1 - p0)
        self._follow_r = r0 @ pin.exp3(s * log_r)

    def _advance(self, dt: float) -> None:
        v_old, w_old = self._v, self._w
        a_max, alpha_max = self.acceleration_m_s2, self.angular_acceleration_rad_s2
        error = self._follow_p - self.position_m
        # the rotation error as a rotation vector in base axes: R_goal = exp([e]x) R
        e = self.rotation @ pin.log3(self.rotation.T @ self._follow_r)
        # arrived (within what one cycle's bounded braking covers): on the goal, at rest
        arrived = float(error @ error) <= (a_max * dt * dt) ** 2 and float(v_old @ v_old) <= (a_max * dt) ** 2
        if arrived:
            self.position_m, v = self._follow_p.copy(), np.zeros(3)
        else:
            v = _limited_step(error, v_old, self.speed_m_s, a_max, dt)
            self.position_m = self.position_m + 0.5 * (v_old + v) * dt
        turned = float(e @ e) <= (alpha_max * dt * dt) ** 2 and float(w_old @ w_old) <= (alpha_max * dt) ** 2
        if turned:
            self.rotation, w = self._follow_r.copy(), np.zeros(3)
        else:
            w = _limited_step(e, w_old, self.angular_speed_rad_s, alpha_max, dt)
            self.rotation = pin.exp3(0.5 * (w_old + w) * dt) @ self.rotation
        self._acceleration[:3] = (v - v_old) / dt
        self._acceleration[3:] = (w - w_old) / dt
        self._v, self._w = v, w
        # on the goal for a whole cycle (no acceleration left to report): nothing to compute until the next goal
        if arrived and turned and self._ramp is None and not (v_old.any() or w_old.any()):
            self._moving = False

    def _target(self) -> MotionTarget:
        return MotionTarget(self.position_m.copy(), self.rotation.copy(), np.r_[self._v, self._w],
                            self._acceleration.copy())
