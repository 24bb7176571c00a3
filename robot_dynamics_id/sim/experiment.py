"""The identification experiment in simulation, as fast as the computer allows (no ROS).

:func:`run_experiment` plays an excitation on the simulated arm
(:class:`~robot_dynamics_id.sim.plant.SimulatedUR`) through the same closed loop
as the real experiment of ``launch/experiment.launch.py``:

* the excitation node's :class:`~robot_dynamics_id.excitation.streamer.TrajectoryStreamer`
  turns each measured joint state into a velocity command (smooth ramp in/out,
  position feedback), after the trajectory has passed the node's safety check
  (:func:`~robot_dynamics_id.excitation.checker.check_trajectory`, table keep-out
  0.05 m by default);
* ur_interface's robot loop bounds every command with the
  :class:`~robot_dynamics_id.hardware.safety.SafetyGuard` and sends it as speedJ
  at the smallest joint acceleration limit (the guard's default);
* a command computed from the state of cycle k reaches the controller at cycle
  k + 1 (``command_delay_cycles``), as over DDS, where the excitation node
  answers the joint state the robot loop has just published;
* every controller cycle is recorded, from the start pose (the plant is reset
  there, at rest) until ``settle_s`` after the streamer reports "done".

Time is the simulated controller's, so a run takes only computing time (a 60 s
excitation at 500 Hz: ~8 s CPU, ~1.25x the plant alone;
benchmarks/bench_simulate_experiment.py) and is deterministic for given seeds.
The streamer's time warp depends on time only, so every trajectory point it will
ask for is evaluated in one vectorised call beforehand (:func:`_precomputed`).

The result holds a :class:`~robot_dynamics_id.io.recording.Recording` on the
robot clock (RTDE ``timestamp``: 0 at the start pose) with the signals the
real bag carries — ``effort_nm`` being motor current × the *configured* drive
gains (config/ur3.yaml; the nominal ones), as ur_interface publishes it, not the
plant's true gains — plus the plant's truth model.
:func:`~robot_dynamics_id.sim.experiment_bag.write_experiment_bag` writes it as the
torque logger's rosbag2 bag (same topics, types, frames; header stamps = robot clock
+ a constant wall-clock offset) and :func:`run_known_payload_experiment` runs the same
excitation twice on one truth, without and with a known payload at the flange,
for drive-gain identification. The default excitations: :mod:`.excitation_presets`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..excitation.checker import ExcitationLimits, TrajectoryLimitError, check_trajectory
from ..excitation.streamer import TrajectoryStreamer
from ..excitation.trajectory import JointTrajectory
from ..hardware.safety import LimitPolicy, SafetyGuard, SafetyLimits
from ..io.model_file import DynamicModel
from ..io.recording import Recording, RecordingSource
from ..robots.model import RobotModel
from .excitation_presets import builtin_ur

__all__ = [
    "ExperimentResult",
    "KnownPayloadExperiment",
    "PayloadSpec",
    "ProgressMessage",
    "resolve_truth",
    "run_experiment",
    "run_known_payload_experiment",
]

#: Keep-out height of the excitation node's check (config/excitation.yaml default), m.
DEFAULT_TABLE_HEIGHT_M = 0.05
#: The excitation node publishes its progress this often (nodes/excitation.py), s.
_PROGRESS_PERIOD_S = 0.1


# ---------------------------------------------------------------------------------------- data
@dataclass(frozen=True, eq=False)
class PayloadSpec:
    """A payload fixed to the flange: mass, CoM and inertia about the CoM, in the tool0 frame.

    The simulated payload is a point-like mass: a 2 cm solid sphere (sim/mjcf.py), whose
    inertia is given so that a drive-gain estimate can use the exact plant.
    """

    mass_kg: float
    com_m: np.ndarray
    inertia_about_com_kgm2: np.ndarray
    frame: str = "tool0"

    @classmethod
    def point_mass(cls, mass_kg: float, com_m: Sequence[float] = (0.0, 0.0, 0.0)) -> PayloadSpec:
        """The payload :class:`SimulatedUR` builds for ``payload_kg``/``payload_com_m``."""
        from .mjcf import _end_effector_inertial  # the plant's own payload model (single source)

        mass = float(mass_kg)
        com = _payload_com(com_m)
        if not mass > 0 or not np.isfinite(mass):
            raise ValueError(f"payload mass must be > 0 kg, got {mass_kg!r}")
        _, _, inertia = _end_effector_inertial(mass, com, None)
        return cls(mass_kg=mass, com_m=com, inertia_about_com_kgm2=np.asarray(inertia, float))

    def to_dict(self) -> dict[str, Any]:
        return {"mass_kg": float(self.mass_kg), "com_m": [float(v) for v in self.com_m],
                "inertia_about_com_kgm2": np.asarray(self.inertia_about_com_kgm2, float).tolist(),
                "frame": self.frame}


@dataclass(frozen=True)
class ProgressMessage:
    """One ``/excitation/progress`` message: robot time it was published after, and its JSON text."""

    time_s: float
    data: str


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """One simulated experiment: the recording, the plant's truth and what produced them."""

    #: every controller cycle, robot clock (0 at the start pose); see the module docstring
    recording: Recording
    #: the plant's true model (links, rotor, friction, drive gains) in the model-file schema
    truth: DynamicModel
    trajectory: JointTrajectory
    robot: str
    rate_hz: float
    truth_seed: int | None
    noise_seed: int
    #: the payload at the flange (known to the controller, as UR's "set payload"); None = none
    payload: PayloadSpec | None
    #: drive gains ur_interface is configured with: joint_states effort = current × these, Nm/A
    configured_drive_gains_nm_per_a: np.ndarray
    #: velocity commands the excitation published, (M, n) rad/s, and the robot time of the state each answers
    command_rad_s: np.ndarray
    command_time_s: np.ndarray
    progress: tuple[ProgressMessage, ...]
    #: largest |q_ref(tau) - q| the streamer saw, rad
    max_position_error_rad: float
    wall_time_s: float

    @property
    def n_samples(self) -> int:
        return self.recording.n_samples

    @property
    def real_time_factor(self) -> float:
        """Simulated robot time per second of computing (> 1: faster than real time)."""
        return self.recording.duration_s / self.wall_time_s if self.wall_time_s > 0 else float("inf")

    def metadata(self) -> dict[str, str]:
        """String key/values describing the experiment (the bag's ``custom_data``)."""
        out = {
            "recorder": "robot_dynamics_id simulate-experiment",
            "robot": self.robot,
            "rate_hz": repr(float(self.rate_hz)),
            "truth_seed": "nominal" if self.truth_seed is None else str(self.truth_seed),
            "noise_seed": str(self.noise_seed),
            "excitation_kind": self.trajectory.kind,
            "excitation_duration_s": repr(float(self.trajectory.duration_s)),
            "configured_drive_gains_nm_per_a": json.dumps([float(g) for g in self.configured_drive_gains_nm_per_a]),
            "payload": json.dumps(None if self.payload is None else self.payload.to_dict()),
        }
        seed = self.trajectory.parameters.get("seed", self.trajectory.metadata.get("seed"))
        if seed is not None:
            out["excitation_seed"] = str(seed)
        return out

    def describe(self) -> str:
        payload = "no payload" if self.payload is None else \
            f"payload {self.payload.mass_kg:g} kg at {np.round(self.payload.com_m, 4).tolist()} m (tool0)"
        return (f"{self.n_samples} samples over {self.recording.duration_s:.2f} s at {self.rate_hz:g} Hz "
                f"({self.trajectory.kind} excitation, truth {'nominal' if self.truth_seed is None else self.truth_seed}"
                f", {payload}); max tracking error {self.max_position_error_rad:.4f} rad; "
                f"computed in {self.wall_time_s:.2f} s ({self.real_time_factor:.1f}x real time)")


@dataclass(frozen=True, eq=False)
class KnownPayloadExperiment:
    """The same excitation run twice on one truth: without and with a known payload at the flange.

    The torque difference between the runs is the payload's (known) gravity and inertia
    torque, seen in the motor currents through the true drive gains: the data for
    identifying the drive gains (identification/drive_gains.py).
    """

    without_payload: ExperimentResult
    with_payload: ExperimentResult
    payload: PayloadSpec

    @property
    def truth(self) -> DynamicModel:
        return self.without_payload.truth

    @property
    def recordings(self) -> tuple[Recording, Recording]:
        """(without payload, with payload)."""
        return self.without_payload.recording, self.with_payload.recording


# ------------------------------------------------------------------------------------ helpers
def _payload_com(com_m: Sequence[float]) -> np.ndarray:
    com = np.asarray(com_m, float).ravel()
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise ValueError(f"payload CoM must be 3 finite coordinates x,y,z in m (tool0 frame), got {com_m!r}")
    return com


def resolve_truth(robot: str, truth: DynamicModel | str | Path | None = None,
                  truth_seed: int | None = None, *, friction: str = "p2") -> DynamicModel:
    """The plant's truth: ``truth`` (model or file) if given, else make_truth(robot, truth_seed), else nominal;
    ``friction`` (``p2`` or ``real``, sim/truth.FRICTION_KINDS) for the drawn or nominal truth."""
    from .truth import make_truth, nominal_truth

    if truth is not None:
        if truth_seed is not None:
            raise ValueError("give either truth or truth_seed, not both")
        return truth if isinstance(truth, DynamicModel) else DynamicModel.load(truth)
    return (nominal_truth(robot, friction=friction) if truth_seed is None
            else make_truth(robot, int(truth_seed), friction=friction))


def _safety_guard(model: RobotModel) -> SafetyGuard:
    """ur_interface's guard with the robot model's limits (config/ur3.yaml: clamp, velocity_scale 1)."""
    limits = SafetyLimits(position_lower_rad=-np.asarray(model.position_limit_rad, float),
                          position_upper_rad=np.asarray(model.position_limit_rad, float),
                          velocity_rad_s=np.asarray(model.velocity_limit_rad_s, float),
                          acceleration_rad_s2=np.asarray(model.acceleration_limit_rad_s2, float),
                          torque_nm=np.asarray(model.torque_limit_nm, float))
    return SafetyGuard(limits=limits, policy=LimitPolicy.CLAMP)


class _TauRecorder:
    """Stands in for a trajectory in a dry-run streamer: records the times asked for, returns zeros."""

    def __init__(self, trajectory: JointTrajectory) -> None:
        self._trajectory = trajectory
        self._zeros = np.zeros(trajectory.n_joints)
        self.taus: list[float] = []

    def evaluate(self, t_s):
        self.taus.append(float(t_s))
        return self._zeros, self._zeros, self._zeros

    def __getattr__(self, name: str):  # duration_s, start_position_rad, ... of the real trajectory
        return getattr(self._trajectory, name)


class _BatchedTrajectory:
    """A trajectory whose values at a known set of times were evaluated in one vectorised call.

    :meth:`evaluate` of a time in the set returns the stored (q, qd, qdd) — what
    ``trajectory.evaluate`` gives for it, up to rounding of a vectorised evaluation — and
    evaluates any other time directly. Everything else is the wrapped trajectory's.
    """

    def __init__(self, trajectory: JointTrajectory, times_s: np.ndarray) -> None:
        self._trajectory = trajectory
        times = np.unique(np.asarray(times_s, float))
        self._q, self._qd, self._qdd = trajectory.evaluate(times) if times.size else (None, None, None)
        self._row = {float(t): k for k, t in enumerate(times)}
        self.misses = 0

    def evaluate(self, t_s):
        if np.ndim(t_s) == 0:
            k = self._row.get(float(t_s))
            if k is not None:
                return self._q[k], self._qd[k], self._qdd[k]
        self.misses += 1
        return self._trajectory.evaluate(t_s)

    def __getattr__(self, name: str):
        return getattr(self._trajectory, name)


def _precomputed(trajectory: JointTrajectory, ramp_s: float, start_s: float, period_s: float
                 ) -> _BatchedTrajectory:
    """``trajectory`` with every point the streamer will ask for evaluated in one vectorised call.

    The streamer's time warp tau(t) depends on time only (not on the measured pose), so a
    dry run of a streamer on the controller's cycle times yields exactly the taus the real
    one will ask for; evaluating them in one batch is far cheaper than one call per cycle
    (an analytic PRBS evaluation costs more than a plant cycle).
    """
    recorder = _TauRecorder(trajectory)
    dry = TrajectoryStreamer(trajectory=recorder, ramp_s=ramp_s)  # type: ignore[arg-type]
    zero_q = np.zeros(trajectory.n_joints)
    now = start_s
    limit = int(np.ceil((trajectory.duration_s + 4 * ramp_s + 5.0) / period_s))
    for _ in range(limit):
        if dry.command(now, zero_q).phase == "done":
            break
        now += period_s  # the plant's own clock arithmetic (SimulatedUR.time_s += period_s)
    return _BatchedTrajectory(trajectory, np.asarray(recorder.taus, float))


# ----------------------------------------------------------------------------------- the run
def run_experiment(
    trajectory: JointTrajectory,
    *,
    robot: str = "ur3",
    truth: DynamicModel | str | Path | None = None,
    truth_seed: int | None = None,
    noise_seed: int = 0,
    rate_hz: float = 500.0,
    payload_kg: float = 0.0,
    payload_com_m: Sequence[float] = (0.0, 0.0, 0.0),
    configured_drive_gains_nm_per_a: Sequence[float] | None = None,
    ramp_s: float = 1.0,
    position_gain_per_s: float = 2.0,
    command_delay_cycles: int = 1,
    settle_s: float = 0.1,
    table_height_m: float | None = DEFAULT_TABLE_HEIGHT_M,
    check: bool = True,
    noise: bool = True,
    on_progress: Callable[[float, float], None] | None = None,
    progress_period_s: float = 1.0,
    joint_friction=None,
) -> ExperimentResult:
    """Play ``trajectory`` on a simulated arm as fast as possible and record every cycle.

    Args:
        trajectory: the excitation (its start pose is where the plant is reset, at rest).
        robot: a built-in UR name; ``truth`` (model or file) or ``truth_seed`` (sim/truth.make_truth;
            None = the nominal truth) pick the plant.
        noise_seed: seed of the measurement noise; rate_hz: controller rate.
        payload_kg, payload_com_m: payload at the flange (tool0 frame), known to the controller.
        configured_drive_gains_nm_per_a: the gains ur_interface turns currents into the
            /joint_states effort with (default: the nominal gains of config/ur3.yaml).
        ramp_s, position_gain_per_s: the excitation node's streamer parameters (config defaults).
        command_delay_cycles: 1 (a command answers the previous cycle's state, as over DDS) or 0.
        settle_s: robot time recorded after the streamer reports "done".
        table_height_m, check: the excitation node's limit check (None: no keep-out).
        noise: measurement noise and encoder quantisation on/off.
        on_progress: called with (robot time s, fraction of the trajectory) every ``progress_period_s``
            of robot time.
        joint_friction: a friction law for the plant instead of the truth's (sim/plant.py ``joint_friction``;
            e.g. sim/measured_friction.measured_friction). Stateful: give each run its own.

    Raises:
        ValueError: bad arguments, or the trajectory fails the check (named limit and time).
        RuntimeError: the simulated controller made a protective stop.
    """
    from .plant import SimulatedUR
    from .truth import nominal_drive_gains

    started = time.perf_counter()
    name, model = builtin_ur(robot)
    if not rate_hz > 0 or not np.isfinite(rate_hz):
        raise ValueError(f"rate must be > 0 Hz, got {rate_hz}")
    if command_delay_cycles not in (0, 1):
        raise ValueError(f"command_delay_cycles must be 0 or 1, got {command_delay_cycles}")
    if settle_s < 0:
        raise ValueError(f"settle_s must be >= 0, got {settle_s}")
    if trajectory.n_joints != model.n_joints:
        raise ValueError(f"the excitation has {trajectory.n_joints} joints but {name} has {model.n_joints}")
    if trajectory.robot and str(trajectory.robot).strip().lower() != name:
        raise ValueError(f"the excitation was planned for {trajectory.robot!r}, not {name!r}; plan one for {name}")
    if payload_kg < 0 or not np.isfinite(payload_kg):
        raise ValueError(f"payload mass must be >= 0 kg, got {payload_kg}")
    limit = model.description.payload_kg
    if payload_kg > limit:
        raise ValueError(f"payload {payload_kg:g} kg exceeds the {name}'s rated payload {limit:g} kg")
    com = _payload_com(payload_com_m)
    gains = nominal_drive_gains(name) if configured_drive_gains_nm_per_a is None else \
        np.asarray(configured_drive_gains_nm_per_a, float).ravel()
    if gains.shape != (model.n_joints,) or np.any(~np.isfinite(gains)) or np.any(gains <= 0):
        raise ValueError(f"configured drive gains must be {model.n_joints} positive values in Nm/A, "
                         f"got {configured_drive_gains_nm_per_a!r}")
    if check:
        limits = ExcitationLimits.from_robot(model, table_height_m=table_height_m)
        try:
            check_trajectory(trajectory, model, limits)
        except TrajectoryLimitError as exc:
            raise ValueError(f"the excitation is refused by the safety check (as the excitation node would): "
                             f"{exc}") from None
    truth_model = resolve_truth(name, truth, truth_seed)

    plant = SimulatedUR(robot=name, truth=truth_model, noise_seed=int(noise_seed), rate_hz=float(rate_hz),
                        initial_q_rad=trajectory.start_position_rad, payload_kg=float(payload_kg),
                        payload_com_m=com, noise=noise, joint_friction=joint_friction)
    batched = _precomputed(trajectory, ramp_s, plant.state().timestamp_s, plant.period_s)
    streamer = TrajectoryStreamer(trajectory=batched, ramp_s=ramp_s,  # type: ignore[arg-type]
                                  position_gain_per_s=position_gain_per_s)
    guard = _safety_guard(model)
    state = plant.state()
    streamer.check_start(state.q_rad)

    # Longest plausible run: the time warp covers the trajectory once the ramps are done.
    max_cycles = int(np.ceil((trajectory.duration_s + 4 * ramp_s + settle_s + 5.0) * plant.rate_hz))
    states = [state]
    commands: list[np.ndarray] = []
    command_times: list[float] = []
    progress: list[ProgressMessage] = []
    next_progress_s = state.timestamp_s
    next_report_s = state.timestamp_s
    active: np.ndarray | None = None  # the command the robot loop holds
    done_at: float | None = None
    max_error = 0.0
    for _ in range(max_cycles):
        t = state.timestamp_s
        new_command = None
        if done_at is None:
            out = streamer.command(t, state.q_rad)
            new_command = out.velocity_rad_s
            commands.append(new_command)
            command_times.append(t)
            max_error = max(max_error, out.position_error_rad)
            if t >= next_progress_s - 1e-9 or out.phase == "done":
                progress.append(ProgressMessage(t, json.dumps({
                    "stage": "excitation", "phase": out.phase, "fraction": round(out.fraction, 4),
                    "trajectory_time_s": round(out.trajectory_time_s, 4),
                    "position_error_rad": round(out.position_error_rad, 5)})))
                next_progress_s = t + _PROGRESS_PERIOD_S
            if on_progress is not None and t >= next_report_s:
                on_progress(t, out.fraction)
                next_report_s = t + progress_period_s
            if out.phase == "done":
                done_at = t
        elif t >= done_at + settle_s - 1e-9:
            break
        if command_delay_cycles == 0 and new_command is not None:
            active = new_command
        if active is not None:
            # ur_interface's robot loop: re-guarded every cycle, speedJ at the guard's acceleration.
            guarded = guard.guard_velocity(active, q_rad=state.q_rad)
            plant.speed_j(guarded.values, guarded.acceleration_rad_s2)
        if command_delay_cycles == 1 and new_command is not None:
            active = new_command
        state = plant.step()
        if plant.in_protective_stop:
            raise RuntimeError(f"the simulated controller made a protective stop ({plant.protective_stop_reason}) at "
                               f"t = {state.timestamp_s:.3f} s; the excitation leaves the robot's limits")
        states.append(state)
    else:
        raise RuntimeError(f"the excitation did not finish within {max_cycles} cycles; report this as a bug")
    if on_progress is not None:
        on_progress(state.timestamp_s, 1.0)

    command_rad_s = np.asarray(commands, float)
    command_time_s = np.asarray(command_times, float)
    recording = _recording(states, model.joint_names, gains, command_rad_s, command_time_s, name,
                           payload_kg=float(payload_kg), payload_com_m=com)
    payload = PayloadSpec.point_mass(payload_kg, com) if payload_kg > 0 else None
    return ExperimentResult(
        recording=recording, truth=plant.truth, trajectory=trajectory, robot=name, rate_hz=plant.rate_hz,
        truth_seed=None if truth is not None or truth_seed is None else int(truth_seed), noise_seed=int(noise_seed),
        payload=payload, configured_drive_gains_nm_per_a=gains, command_rad_s=command_rad_s,
        command_time_s=command_time_s, progress=tuple(progress), max_position_error_rad=float(max_error),
        wall_time_s=time.perf_counter() - started,
    )


def _current_as_torque(robot: str, q_rad: np.ndarray, current_a: np.ndarray, payload_kg: float,
                       payload_com_m: np.ndarray) -> np.ndarray:
    """UR's ``actual_current_as_torque`` as the simulated controller would report it: current x the gains
    it believes in, minus the gravity of its own model with the payload it was told about (gravity-compensated,
    ur.md: 0 for a joint at rest without external load)."""
    import pinocchio as pin

    from ..dynamics.drive import torque_from_current
    from .truth import controller_model

    believed = controller_model(robot)
    rm = believed.robot_model()
    if payload_kg > 0:
        rm = rm.with_flange_payload(payload_kg, payload_com_m)
    model = rm.model
    data = model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model, data, q) for q in q_rad])
    return torque_from_current(current_a, believed.drive_gains_nm_per_a) - gravity


def _tcp_pose(robot: str, q_rad: np.ndarray) -> np.ndarray:
    """RTDE's ``actual_TCP_pose`` (no TCP offset): the flange pose, position and rotation vector, base frame."""
    from scipy.spatial.transform import Rotation

    from .truth import controller_model

    rotations, positions = controller_model(robot).kinematics().tool_poses(q_rad)
    return np.hstack([positions, Rotation.from_matrix(rotations).as_rotvec()])


def _recording(states, joint_names, gains: np.ndarray, command_rad_s: np.ndarray, command_time_s: np.ndarray,
               robot: str, *, payload_kg: float = 0.0, payload_com_m=(0.0, 0.0, 0.0)) -> Recording:
    """Stack the controller's states into a Recording (signals as ur_interface publishes them, plus UR's
    gravity-compensated ``actual_current_as_torque`` for the CSV)."""
    from ..dynamics.drive import torque_from_current

    t = np.array([s.timestamp_s for s in states])
    q = np.array([s.q_rad for s in states])
    current = np.array([s.current_a for s in states])
    # Sample k holds the last command published before it: the one answering an earlier state
    # (bag_reader holds commands on the receive-time axis the same way).
    k = np.searchsorted(command_time_s, t, side="left") - 1
    held = np.full((t.size, len(joint_names)), np.nan)
    ok = k >= 0
    held[ok] = command_rad_s[k[ok]]
    return Recording(
        joint_names=tuple(joint_names),
        time_s=t,
        q_rad=q,
        qd_rad_s=np.array([s.qd_rad_s for s in states]),
        current_a=current,
        target_current_a=np.array([s.target_current_a for s in states]),
        target_moment_nm=np.array([s.target_moment_nm for s in states]),
        effort_nm=torque_from_current(current, gains),
        current_as_torque_nm=_current_as_torque(robot, q, current, payload_kg, np.asarray(payload_com_m, float)),
        tcp_wrench=np.array([s.tcp_wrench_base for s in states]),
        tcp_pose=_tcp_pose(robot, q),
        velocity_command_rad_s=held,
        source=RecordingSource(f"simulated {robot}", "simulated",
                               {"current_a": "SimulatedUR actual_current",
                                "effort_nm": "actual_current x configured drive gains"}),
    )


def run_known_payload_experiment(
    trajectory: JointTrajectory,
    *,
    payload_kg: float,
    payload_com_m: Sequence[float] = (0.0, 0.0, 0.0),
    robot: str = "ur3",
    truth: DynamicModel | str | Path | None = None,
    truth_seed: int | None = None,
    noise_seed: int = 0,
    **options: Any,
) -> KnownPayloadExperiment:
    """Run ``trajectory`` twice on the same truth: without payload, then with the known payload.

    The second run's measurement noise uses ``noise_seed + 1`` (independent noise, as two
    real runs). Other keyword arguments go to :func:`run_experiment` for both runs.
    """
    if not payload_kg > 0:
        raise ValueError(f"the known payload must have a mass > 0 kg, got {payload_kg}")
    if "payload_kg" in options or "payload_com_m" in options:
        raise ValueError("the known-payload experiment sets the payload itself")
    name, _ = builtin_ur(robot)
    truth_model = resolve_truth(name, truth, truth_seed)
    without = run_experiment(trajectory, robot=name, truth=truth_model, noise_seed=noise_seed, **options)
    with_payload = run_experiment(trajectory, robot=name, truth=truth_model, noise_seed=noise_seed + 1,
                                  payload_kg=payload_kg, payload_com_m=payload_com_m, **options)
    if truth is None and truth_seed is not None:  # record the seed the truth was made from
        without = _with_truth_seed(without, truth_seed)
        with_payload = _with_truth_seed(with_payload, truth_seed)
    return KnownPayloadExperiment(without_payload=without, with_payload=with_payload,
                                  payload=PayloadSpec.point_mass(payload_kg, payload_com_m))


def _with_truth_seed(result: ExperimentResult, seed: int) -> ExperimentResult:
    return replace(result, truth_seed=int(seed))
