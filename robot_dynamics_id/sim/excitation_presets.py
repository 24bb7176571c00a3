"""The excitations the simulated experiments run by default (seeded, built-in UR arms).

* :func:`paper_prbs_excitation` — seeds.md P3's PRBS + sinusoid schedule (excitation/prbs.py);
* :func:`planned_fourier_excitation` — an optimised Fourier excitation with a fast setting
  (excitation/optimise.py).

Both return a :class:`~robot_dynamics_id.excitation.trajectory.JointTrajectory` for
:func:`robot_dynamics_id.sim.experiment.run_experiment` (or a real arm).
"""

from __future__ import annotations

from typing import Any

from ..excitation.trajectory import JointTrajectory
from ..robots.model import RobotModel, load_robot

__all__ = ["builtin_ur", "paper_prbs_excitation", "planned_fourier_excitation"]


def builtin_ur(robot: str | RobotModel) -> tuple[str, RobotModel]:
    """(name, model) of a built-in UR arm; a URDF-only model is refused (the simulator needs the description)."""
    model = robot if isinstance(robot, RobotModel) else load_robot(robot)
    if model.description is None:
        raise ValueError("the simulated experiment needs a built-in UR robot (ur3, ur3e, ur5, ur5e, ur10, ur10e, "
                         "ur16e), not a URDF")
    return model.description.name, model


def paper_prbs_excitation(robot: str | RobotModel = "ur3", *, duration_s: float = 60.0, seed: int = 0,
                          rate_hz: float = 500.0) -> JointTrajectory:
    """The PRBS + sinusoid schedule of seeds.md P3 (Cesarino: ±0.5 rad/s at 7.5 rad/s², one joint
    at a time, the others on sinusoids) from the UR upright pose, seeded.

    The PRBS register is the longest (≤ 6 bits) whose one period fits a joint's turn with
    the full velocity swing in every clock; for short runs the clock is set to the full
    swing 2v/a and the turn holds as many bits as fit.
    """
    from ..excitation.prbs import PrbsSinusoidSchedule

    name, model = builtin_ur(robot)
    if not duration_s > 0:
        raise ValueError(f"duration must be > 0 s, got {duration_s}")
    attempts: list[dict[str, Any]] = [{"prbs_register_bits": bits} for bits in (6, 5, 4, 3)]
    attempts.append({"prbs_register_bits": 3, "prbs_clock_s": 2 * 0.5 / 7.5})  # Cesarino P3: v = 0.5, a = 7.5
    last: Exception | None = None
    for options in attempts:
        try:
            schedule = PrbsSinusoidSchedule(duration_s=float(duration_s), seed=int(seed), **options)
            break
        except ValueError as exc:
            last = exc
    else:
        raise ValueError(f"a PRBS excitation of {duration_s:g} s is too short for one bit per joint ({last}); "
                         "use --duration of at least 2 s") from last
    return schedule.to_trajectory(rate_hz=rate_hz, joint_names=model.joint_names, robot=name)


def planned_fourier_excitation(robot: str | RobotModel = "ur3", *, duration_s: float = 60.0, seed: int = 0,
                               rate_hz: float = 500.0, max_iterations: int = 30, n_starts: int = 1,
                               period_s: float = 10.0, velocity_scale: float | None = None) -> JointTrajectory:
    """An optimised Fourier excitation (excitation/optimise.py) with a fast setting: one start,
    ``max_iterations`` SLSQP iterations (~6 s for a 10 s period), a period near ``period_s``
    that divides ``duration_s``; ``velocity_scale``: of the velocity limits (default the optimiser's)."""
    from ..excitation.optimise import FourierOptimisationSettings, optimise_fourier_excitation

    _, model = builtin_ur(robot)
    if not duration_s > 0:
        raise ValueError(f"duration must be > 0 s, got {duration_s}")
    n_periods = max(1, int(round(duration_s / period_s)))
    settings = FourierOptimisationSettings(duration_s=float(duration_s), period_s=float(duration_s) / n_periods,
                                           n_starts=int(n_starts), max_iterations=int(max_iterations),
                                           seed=int(seed),
                                           **({} if velocity_scale is None else {"velocity_scale": velocity_scale}))
    result = optimise_fourier_excitation(model, settings)
    trajectory = result.to_trajectory(rate_hz=rate_hz, joint_names=model.joint_names)
    trajectory.metadata["seed"] = int(seed)
    return trajectory
