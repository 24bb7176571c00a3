"""Collisions of the simulated UR during its excitation, detected by the observer inside the robot loop.

Everything runs in-process on the plant's clock, faster than real time, through the same pieces as
ur_interface: the simulated robot backend, the :class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`
(guard, trajectory tracker as cycle controller, collision monitor as cycle monitor, protective stop),
driven by :meth:`RobotLoop.run_cycles`.

* :class:`SimulatedCell` — plant + loop + tracker + monitors, stepped on the plant's clock.
* :func:`reference_run` — one collision-free pass of an excitation: the arm's true path, used to put
  obstacles where a link point will be.
* :func:`plan_collision_cases` — random collisions on the links (2..n; link 1's points lie on joint 1's
  axis, where no force makes a joint torque): a soft obstacle, a hard obstacle in the path of a link
  point (touching it at the planned time, head-on to 40° oblique), or a push on a link (30–60 N,
  10–50 ms rise, sideways to the link).
* :func:`run_collision_case` — one collision, resumed from a snapshot of the reference run (the whole
  plant: state, servo, noise generator) at least ``lead_s`` before the contact, so that the run is the
  reference run until the contact; the reacting monitor stops the arm. Scored against the plant's true
  contact force (:class:`CaseResult`).
* :func:`run_collision_free` — the excitation repeated for a given robot time with monitors reporting
  only: false alarms per hour.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from ..control.collision import CollisionDetector, CollisionEvent, CollisionMonitor
from ..excitation.trajectory import JointTrajectory
from ..hardware.config import TRAJECTORY_PARAMETERS, UrInterfaceConfig, make_tracker
from ..hardware.robot_loop import RobotLoop
from ..hardware.sim_backend import SimBackend
from ..hardware.trajectory_tracking import TrackingPhase, TrajectoryGoal
from ..io.model_file import DynamicModel
from ..sim.contacts import HARD_OBSTACLE, SOFT_OBSTACLE, ExternalLoad, LinkPush, SphereObstacle
from ..sim.plant import SimulatedUR

__all__ = ["CASE_KINDS", "CaseResult", "CollisionCase", "CollisionFreeResult", "ReferenceRun", "SimulatedCell",
           "excitation_goal", "plan_collision_cases", "reference_run", "run_collision_case", "run_collision_free"]

CASE_KINDS = ("soft_obstacle", "hard_obstacle", "push")
#: contact force from which a collision must be detected (the goal of issue 20), N
REQUIRED_FORCE_N = 30.0
#: obstacle sphere radius and the link's half-thickness at the contact point (UR3 links: ~4 cm), m
OBSTACLE_RADIUS_M = 0.05
LINK_RADIUS_M = 0.04


def excitation_goal(trajectory: JointTrajectory, *, start_s: float = 0.0, end_s: float | None = None,
                    point_rate_hz: float = 100.0, approach_s: float = 0.0) -> TrajectoryGoal:
    """The excitation between trajectory times ``start_s`` and ``end_s`` as the goal the excitation node sends
    (points every 1/point_rate_hz with velocities and accelerations; quintic in between). With ``approach_s``
    > 0 the first point comes that long after the goal starts: the arm moves there from where it is."""
    end_s = trajectory.duration_s if end_s is None else min(float(end_s), trajectory.duration_s)
    count = max(2, int(math.ceil((end_s - start_s) * point_rate_hz)) + 1)
    tau = np.linspace(start_s, end_s, count)
    q, qd, qdd = trajectory.evaluate(tau)
    return TrajectoryGoal(tau - tau[0] + approach_s, q, qd, qdd)


class SimulatedCell:
    """The simulated arm with ur_interface's robot loop, stepped in the caller's thread on the plant's clock.

    ``monitors``: name → :class:`CollisionMonitor`; each sees every sample, only the one whose ``react`` is
    set stops the arm. ``loads``: forces on the links on the plant's clock (0 at the start). ``plant``: an
    existing plant to go on with (a snapshot of another run) instead of a new one at ``initial_q_rad``.
    """

    def __init__(self, *, robot: str, truth: DynamicModel, rate_hz: float, noise_seed: int = 0, initial_q_rad=None,
                 loads: tuple[ExternalLoad, ...] = (), monitors: Mapping[str, CollisionMonitor] | None = None,
                 plant: SimulatedUR | None = None) -> None:
        if plant is None:
            plant = SimulatedUR(robot=robot, truth=truth, rate_hz=rate_hz, noise_seed=noise_seed,
                                initial_q_rad=np.asarray(initial_q_rad, float))
        self.plant = plant
        plant.set_external_loads(loads)
        backend = SimBackend(robot=robot, rate_hz=rate_hz)
        backend.plant = self.plant  # this plant (its truth, loads and start) instead of one built from options
        config = UrInterfaceConfig.from_parameters({"robot": robot, "rate_hz": float(rate_hz),
                                                    "effort_source": "target_moment"})
        self.tracker = make_tracker({s.name: s.default for s in TRAJECTORY_PARAMETERS})
        self.monitors = dict(monitors or {})
        self.events: list[tuple[float, str, str]] = []
        self.loop = RobotLoop(backend=backend, guard=config.make_guard(), on_event=self._on_event,
                              cycle_controller=self.tracker, cycle_monitor=self._monitor,
                              clock=lambda: self.plant.time_s)

    def _monitor(self, state) -> str | None:
        reason = None
        for monitor in self.monitors.values():
            reason = monitor(state) or reason
        return reason

    def _on_event(self, level: str, message: str) -> None:
        self.events.append((self.plant.time_s, level, message))
        if level == "error":  # as ur_interface: the loop stopped the arm, a running trajectory ends
            self.tracker.abort(message)

    def run(self, seconds: float, on_cycle: Callable[[SimulatedCell], bool | None] | None = None) -> None:
        """Run for ``seconds`` of robot time; ``on_cycle(cell)`` after each cycle may return True to end early."""
        for _ in range(int(round(seconds * self.plant.rate_hz))):
            self.loop.run_cycles(1)
            if on_cycle is not None and on_cycle(self):
                return


# ------------------------------------------------------------------------------------------ reference
@dataclass(frozen=True, eq=False)
class ReferenceRun:
    """A collision-free pass of the excitation: per cycle the robot time, true q, q̇ and trajectory time, and
    snapshots of the plant (robot time, trajectory time of the next cycle, the plant) to resume from."""

    robot: str
    truth: DynamicModel
    rate_hz: float
    trajectory: JointTrajectory
    time_s: np.ndarray
    q_rad: np.ndarray
    qd_rad_s: np.ndarray
    trajectory_time_s: np.ndarray
    snapshots: tuple = ()

    def snapshot_before(self, time_s: float) -> tuple[float, float, SimulatedUR]:
        """The latest snapshot at or before ``time_s`` (its plant is a copy: resume as often as needed)."""
        usable = [s for s in self.snapshots if s[0] <= time_s + 1e-9]
        if not usable:
            raise ValueError(f"no snapshot of the reference run before t = {time_s:.3f} s")
        t, tau, plant = usable[-1]
        return t, tau, copy.deepcopy(plant)

    def index_at(self, time_s: float) -> int:
        return int(np.clip(np.searchsorted(self.time_s, time_s), 0, self.time_s.size - 1))


def reference_run(trajectory: JointTrajectory, *, robot: str, truth: DynamicModel, rate_hz: float,
                  noise_seed: int = 0, snapshot_period_s: float = 0.25) -> ReferenceRun:
    """Run ``trajectory`` once without contact, recording the arm's true state every cycle and a copy of the
    plant every ``snapshot_period_s``."""
    cell = SimulatedCell(robot=robot, truth=truth, rate_hz=rate_hz, noise_seed=noise_seed,
                         initial_q_rad=trajectory.start_position_rad)
    cell.tracker.submit(excitation_goal(trajectory))
    rows: list[tuple] = []
    snapshots: list[tuple] = []
    period = 1.0 / float(rate_hz)

    def record(c: SimulatedCell) -> bool:
        status = c.tracker.status
        rows.append((c.plant.time_s, c.plant.q_true_rad, c.plant.qd_true_rad_s, status.time_s))
        running = status.phase == TrackingPhase.RUNNING
        if running and (not snapshots or c.plant.time_s >= snapshots[-1][0] + snapshot_period_s - 1e-9):
            # the tracker's trajectory time advances one period per cycle at full speed
            snapshots.append((c.plant.time_s, status.time_s + period, copy.deepcopy(c.plant)))
        return not running and status.phase != TrackingPhase.SETTLING

    cell.run(trajectory.duration_s + 5.0, record)
    if cell.tracker.status.phase != TrackingPhase.SUCCEEDED:
        raise RuntimeError(f"the collision-free reference run did not finish: {cell.tracker.status.phase} "
                           f"({cell.tracker.status.reason})")
    t, q, qd, tau = (np.array(v) for v in zip(*rows))
    return ReferenceRun(robot=robot, truth=truth, rate_hz=float(rate_hz), trajectory=trajectory, time_s=t, q_rad=q,
                        qd_rad_s=qd, trajectory_time_s=tau, snapshots=tuple(snapshots))


# ------------------------------------------------------------------------------------------------ cases
@dataclass(frozen=True, eq=False)
class CollisionCase:
    """One planned collision: where, of which kind, and the load (on the reference run's clock)."""

    kind: str
    link: int
    point_m: tuple[float, float, float]
    #: the contact time on the reference run's clock, s
    contact_time_s: float
    lead_s: float
    load: ExternalLoad
    #: speed of the link point at the contact (obstacles; 0 for pushes), m/s
    point_speed_m_s: float = 0.0

    def describe(self) -> str:
        if isinstance(self.load, LinkPush):
            what = f"push {np.linalg.norm(self.load.force_n):.0f} N rising in {self.load.rise_s * 1e3:.0f} ms"
        else:
            what = f"{self.kind.replace('_', ' ')} hit at {self.point_speed_m_s:.2f} m/s"
        return f"{what} on link {self.link} at t = {self.contact_time_s:.2f} s"


def _link_segment(model: pin.Model, link: int, tool_frame_id: int) -> np.ndarray:
    """The link's axis in its own frame: from its joint to the next joint (the flange for the last link)."""
    if link < model.njoints - 1:
        return np.asarray(model.jointPlacements[link + 1].translation, float)
    return np.asarray(model.frames[tool_frame_id].placement.translation, float)


def _point_state(model: pin.Model, data, q, qd, link: int, point_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pin.forwardKinematics(model, data, q, qd)
    placement = data.oMi[link]
    position = placement.act(point_m)
    velocity = pin.getVelocity(model, data, link, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    lever = position - placement.translation
    return position, np.asarray(velocity.linear) + np.cross(np.asarray(velocity.angular), lever)


def _perpendicular(axis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    while True:
        v = rng.normal(size=3)
        v -= axis * (v @ axis)
        if np.linalg.norm(v) > 1e-3:
            return v / np.linalg.norm(v)


def _touches_earlier(reference: ReferenceRun, model, data, link: int, point, centre, k: int, before_s: float) -> bool:
    """Whether the link point comes into the obstacle in the ``before_s`` before reference cycle ``k``."""
    first = reference.index_at(reference.time_s[k] - before_s)
    reach = OBSTACLE_RADIUS_M + LINK_RADIUS_M - 1e-4
    for i in range(first, k - 1):
        pin.forwardKinematics(model, data, reference.q_rad[i])
        if np.linalg.norm(data.oMi[link].act(point) - centre) < reach:
            return True
    return False


def plan_collision_cases(reference: ReferenceRun, count: int, *, seed: int, kinds=CASE_KINDS, links=None,
                         lead_s: float = 0.5, window_s: float = 1.0, min_point_speed_m_s: float = 0.15
                         ) -> list[CollisionCase]:
    """``count`` random collisions on the reference run, kinds and links drawn in turn (see the module doc)."""
    rng = np.random.default_rng(seed)
    robot = reference.truth.robot_model()
    model, data = robot.model, robot.model.createData()
    n = model.njoints - 1
    links = tuple(range(2, n + 1)) if links is None else tuple(links)
    first = reference.time_s[0] + lead_s + 0.5
    last = reference.time_s[-1] - window_s - 1.0
    if last <= first:
        raise ValueError("the reference run is too short for collisions: use an excitation of at least 5 s")
    cases: list[CollisionCase] = []
    attempts = 0
    while len(cases) < count:
        attempts += 1
        if attempts > 100 * count:
            raise RuntimeError(f"found only {len(cases)} of {count} collision places where a link point moves faster "
                               f"than {min_point_speed_m_s} m/s; lower min_point_speed_m_s")
        kind = kinds[len(cases) % len(kinds)]
        link = links[int(rng.integers(len(links)))]
        t_c = float(rng.uniform(first, last))
        k = reference.index_at(t_c)
        segment = _link_segment(model, link, robot.tool_frame_id)
        point = segment * float(rng.uniform(0.2, 0.9))
        position, velocity = _point_state(model, data, reference.q_rad[k], reference.qd_rad_s[k], link, point)
        placement = data.oMi[link]  # _point_state ran the kinematics at this q
        axis_world = placement.rotation @ (segment if np.linalg.norm(segment) > 1e-6 else np.array([0, 0, 1.0]))
        if kind == "push":
            force = _perpendicular(axis_world, rng) * float(rng.uniform(30.0, 60.0))
            load = LinkPush(link=link, point_m=tuple(point), force_n=tuple(force), start_s=float(reference.time_s[k]),
                            rise_s=float(rng.uniform(0.01, 0.05)), hold_s=window_s + 1.0)
            cases.append(CollisionCase(kind, link, tuple(point), reference.time_s[k], lead_s, load))
            continue
        speed = float(np.linalg.norm(velocity))
        if speed < min_point_speed_m_s:
            continue
        ahead = velocity / speed
        tilt = math.radians(float(rng.uniform(0.0, 40.0)))
        direction = math.cos(tilt) * ahead + math.sin(tilt) * _perpendicular(ahead, rng)
        centre = position + (OBSTACLE_RADIUS_M + LINK_RADIUS_M) * direction
        if _touches_earlier(reference, model, data, link, point, centre, k, lead_s + 0.5):
            continue  # the point passes through this place earlier: not a contact at the planned time
        material = SOFT_OBSTACLE if kind == "soft_obstacle" else HARD_OBSTACLE
        load = SphereObstacle(link=link, point_m=tuple(point), centre_m=tuple(centre), radius_m=OBSTACLE_RADIUS_M,
                              material=material, link_radius_m=LINK_RADIUS_M)
        cases.append(CollisionCase(kind, link, tuple(point), reference.time_s[k], lead_s, load, speed))
    return cases


@dataclass(frozen=True)
class CaseResult:
    """What a collision run measured (times on the reference run's clock, forces the plant's true contact force)."""

    case: CollisionCase
    model: str
    #: first cycle with contact force > 0; None: no contact happened
    touch_s: float | None
    #: first cycle with the force at REQUIRED_FORCE_N or more
    required_force_s: float | None
    detection: CollisionEvent | None
    peak_force_n: float
    force_at_detection_n: float | None
    #: the largest joint speed at the end of the run (the arm stopped: ~0)
    final_speed_rad_s: float

    @property
    def detected(self) -> bool:
        return self.detection is not None and self.touch_s is not None and self.detection.time_s >= self.touch_s

    @property
    def false_alarm_before_contact(self) -> bool:
        return self.detection is not None and (self.touch_s is None or self.detection.time_s < self.touch_s)

    @property
    def missed(self) -> bool:
        """A contact reaching the required force that was not detected."""
        return self.required_force_s is not None and not self.detected

    @property
    def delay_s(self) -> float | None:
        """Detection time after the first touch."""
        return self.detection.time_s - self.touch_s if self.detected else None

    def as_dict(self) -> dict:
        return {"kind": self.case.kind, "link": self.case.link, "model": self.model, "contact": self.case.describe(),
                "touch_s": self.touch_s, "required_force_s": self.required_force_s, "delay_s": self.delay_s,
                "detected_joint": None if self.detection is None else self.detection.joint,
                "contact_link_at_least": None if self.detection is None else self.detection.contact_link_at_least,
                "peak_force_n": self.peak_force_n, "force_at_detection_n": self.force_at_detection_n,
                "missed": self.missed, "false_alarm_before_contact": self.false_alarm_before_contact,
                "final_speed_rad_s": self.final_speed_rad_s}


def run_collision_case(reference: ReferenceRun, case: CollisionCase, detector: CollisionDetector, *, model: str,
                       window_s: float = 1.0, after_detection_s: float = 0.5) -> CaseResult:
    """Play one collision with ``detector`` reacting (protective stop); see the module docstring.

    Times in the result are on the reference run's clock. The run ends ``window_s`` after the planned
    contact, or ``after_detection_s`` after a detection (the arm's stop is scored too)."""
    start_s, tau, plant = reference.snapshot_before(case.contact_time_s - case.lead_s)
    detector.reset()
    monitor = CollisionMonitor(detector, react=True)
    cell = SimulatedCell(robot=reference.robot, truth=reference.truth, rate_hz=reference.rate_hz, plant=plant,
                         loads=(case.load,), monitors={model: monitor})
    span = (case.contact_time_s - start_s) + window_s + after_detection_s + 1.0
    cell.tracker.submit(excitation_goal(reference.trajectory, start_s=tau, end_s=tau + span))
    record = {"touch": None, "required": None, "peak": 0.0, "at_detection": None}
    end_s = case.contact_time_s + window_s

    def observe(c: SimulatedCell) -> bool:
        force = float(c.plant.external_load_peak_n[0])
        t = c.plant.time_s
        if force > 0 and record["touch"] is None:
            record["touch"] = t
        if force >= REQUIRED_FORCE_N and record["required"] is None:
            record["required"] = t
        if record["touch"] is not None:
            record["peak"] = max(record["peak"], force)
        event = detector.event
        if event is not None and record["at_detection"] is None:
            record["at_detection"] = force
        limit = end_s if event is None else min(end_s + after_detection_s, event.time_s + after_detection_s)
        return t >= limit - 1e-9

    cell.run(end_s + after_detection_s + 0.1 - start_s, observe)
    return CaseResult(case=case, model=model, touch_s=record["touch"], required_force_s=record["required"],
                      detection=detector.event, peak_force_n=record["peak"],
                      force_at_detection_n=record["at_detection"],
                      final_speed_rad_s=float(np.max(np.abs(cell.plant.qd_true_rad_s))))


# ------------------------------------------------------------------------------------------ collision-free
@dataclass
class CollisionFreeResult:
    """False alarms of each monitor over ``duration_s`` of collision-free excitation."""

    duration_s: float
    alarms: dict[str, list[CollisionEvent]] = field(default_factory=dict)
    #: per monitor, the largest |r| / threshold per joint over the run
    max_ratio: dict[str, np.ndarray] = field(default_factory=dict)
    passes: int = 0

    def alarms_per_hour(self, name: str) -> float:
        return len(self.alarms[name]) * 3600.0 / self.duration_s if self.duration_s > 0 else float("nan")


def run_collision_free(trajectory: JointTrajectory, detectors: Mapping[str, CollisionDetector], *, robot: str,
                       truth: DynamicModel, rate_hz: float, duration_s: float, noise_seed: int = 0,
                       on_progress: Callable[[float], None] | None = None) -> CollisionFreeResult:
    """The excitation played again and again for ``duration_s`` of robot time, every detector reporting only
    (a false alarm is counted, the detector re-armed, the motion goes on)."""
    result = CollisionFreeResult(duration_s=0.0, alarms={name: [] for name in detectors},
                                 max_ratio={name: np.zeros(d.observer.n_joints) for name, d in detectors.items()})
    monitors = {}
    for name, detector in detectors.items():
        detector.reset()
        monitors[name] = CollisionMonitor(detector, react=False,
                                          on_collision=lambda event, name=name: result.alarms[name].append(event))
    cell = SimulatedCell(robot=robot, truth=truth, rate_hz=rate_hz, noise_seed=noise_seed,
                         initial_q_rad=trajectory.start_position_rad, monitors=monitors)
    # an excitation that does not end where it starts is approached again from its end at each repetition
    gap = float(np.max(np.abs(trajectory.end_position_rad - trajectory.start_position_rad)))
    again = excitation_goal(trajectory, approach_s=0.0 if gap < 1e-3 else max(1.0, 2.0 * gap))
    cell.tracker.submit(excitation_goal(trajectory))
    progress_step = 60.0
    state = {"next_progress": progress_step}

    def observe(c: SimulatedCell) -> bool:
        for name, detector in detectors.items():
            np.maximum(result.max_ratio[name], np.abs(detector.ratio), out=result.max_ratio[name])
            if detector.event is not None:
                monitors[name].rearm()
        phase = c.tracker.status.phase
        if phase not in (TrackingPhase.RUNNING, TrackingPhase.SETTLING):
            if phase != TrackingPhase.SUCCEEDED:
                raise RuntimeError(f"the collision-free excitation stopped: {phase} ({c.tracker.status.reason})")
            result.passes += 1
            c.tracker.submit(again)
        if on_progress is not None and c.plant.time_s >= state["next_progress"]:
            on_progress(c.plant.time_s)
            state["next_progress"] += progress_step
        return False

    cell.run(duration_s, observe)
    result.duration_s = cell.plant.time_s
    return result
