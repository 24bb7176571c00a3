"""Contact through the UR3's wrist singularity (q5 = 0): padding vs truncation vs damped least squares.

Jamisola et al. (seeds.md P2, eqs. (6)-(9)) pad the operational-space inertia near the
wrist singularity instead of truncating the Jacobian, because truncation "jerks the arm
on entry and exit". This scenario makes the comparison on a path that really crosses
the singularity in contact.

Why a post. On a UR the wrist is singular when the axes of joints 4 and 6 are parallel
(q5 = 0); joints 2-4 are horizontal, so this needs the tool axis horizontal and
perpendicular to the arm's vertical plane. The twist the arm loses there is the tool
pitching about the horizontal axis in that plane; joint 5 itself turns the tool about
the (vertical) axis 5. So q5 crosses zero TRANSVERSALLY when the tool yaws through the
plane's normal: the tool presses horizontally on a vertical post (a capsule of
``post_radius_m``) and slides round it, its axis kept on the post's normal, so its yaw
sweeps from ``yaw_start_rad`` to ``yaw_end_rad`` through the singular pose
:data:`SINGULAR_Q_RAD`. Sliding along a flat or large wall with the tool orientation held
(the first version of this run) moves the tip in the arm's own plane at the singular
pose, i.e. along the singular set instead of across it: q5 only approached zero.

Controller: the P2 hybrid law (control/controller.py) in torque output at 500 Hz, force
along tool z (10 N through the compliant pad), motion on tool x, y and the three
rotations. The singularity treatment is the only difference between the runs.

Measured on the simulator's truth: the contact force along the tool axis, the joint
acceleration and jerk (finite differences of the true joint velocity at the control
rate) and the commanded torque rate, over the whole crossing, inside the singular region
(sigma_min(J) < ``singularity_region_enter_sigma``) and in windows around entering and
leaving it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..control.contact import ContactStage
from ..control.controller import OperationalSpaceController
from ..control.controller_config import ControllerConfig
from ..io.model_file import DynamicModel
from ..robots.kinematics import solve_ik
from ..sim.plant import SimulatedUR
from ..sim.scene import POLISHING_PAD_CONTACT, ContactModel, CurvedSurface, Scene, Tool
from ..sim.truth import nominal_truth
from .polishing import POLISHING_TOOL, quintic_ramp, tool_payload

__all__ = ["SINGULAR_Q_RAD", "PostPath", "SingularityResult", "post_path", "run_singularity_crossing"]

#: A UR3 configuration with the wrist singular (q5 = 0): tool axis horizontal (-y), axis 5 vertical.
#: q2 + q3 + q4 = -pi puts axis 5 exactly vertical.
SINGULAR_Q_RAD = np.array([0.0, -1.2, -1.9, 3.1 - np.pi, 0.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])


def _rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class PostPath:
    """The desired motion round the post as a function of the yaw ``psi`` (rad).

    Tool-tip point ``centre + R u(psi)``, ``u(psi) = cos(psi) n0 + sin(psi) (z x n0)``, tool
    rotation ``Rz(psi) R_singular`` (tool z = -u: along the post's normal). ``psi = 0`` is
    the singular pose. Poses are of the controller's motion point (tool0 / flange).
    """

    centre_m: np.ndarray
    radius_m: float
    normal0: np.ndarray
    rotation0: np.ndarray
    tip_offset_m: np.ndarray

    def u(self, psi: float) -> np.ndarray:
        return np.cos(psi) * self.normal0 + np.sin(psi) * np.cross(_Z, self.normal0)

    def rotation(self, psi: float) -> np.ndarray:
        return _rot_z(psi) @ self.rotation0

    def tip(self, psi: float, clearance_m: float = 0.0) -> np.ndarray:
        return self.centre_m + (self.radius_m + clearance_m) * self.u(psi)

    def motion_point(self, psi: float, psi_d: float = 0.0, psi_dd: float = 0.0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(position, rotation, twist, acceleration) of the motion point for yaw psi and its rates."""
        rot = self.rotation(psi)
        arm = rot @ self.tip_offset_m  # tip - motion point
        p = self.tip(psi) - arm
        du = np.cross(_Z, self.u(psi))  # du/dpsi
        dp = self.radius_m * du - np.cross(_Z, arm)
        ddp = -self.radius_m * self.u(psi) - np.cross(_Z, np.cross(_Z, arm))
        v = dp * psi_d
        a = ddp * psi_d**2 + dp * psi_dd
        return p, rot, np.r_[v, _Z * psi_d], np.r_[a, _Z * psi_dd]


def post_path(robot_model, tool: Tool, *, post_radius_m: float = 0.10,
              singular_q_rad: np.ndarray = SINGULAR_Q_RAD) -> PostPath:
    """The post placed so the tool tip touches it at ``singular_q_rad`` with the tool on its normal."""
    import pinocchio as pin

    model, data = robot_model.model, robot_model.model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(singular_q_rad, float))
    flange = data.oMf[robot_model.tool_frame_id]
    tip_local = np.asarray(tool.tip_point_tool0_m, float)
    rot0 = np.asarray(flange.rotation)
    normal0 = -rot0[:, 2]
    if abs(normal0 @ _Z) > 1e-9:
        raise ValueError("the singular pose must hold the tool axis horizontal (a vertical post)")
    tip = np.asarray(flange.translation) + rot0 @ tip_local
    return PostPath(tip - post_radius_m * normal0, float(post_radius_m), normal0, rot0, tip_local)


@dataclass
class SingularityResult:
    """Contact through the wrist singularity: true force, true joint motion, commanded torque."""

    method: str
    time_s: np.ndarray
    q_rad: np.ndarray                    # (N, 6) true joint angles
    qd_rad_s: np.ndarray                 # (N, 6) true joint velocities
    normal_force_true_n: np.ndarray
    commanded_torque_nm: np.ndarray      # (N, 6) Gamma (before the robot's gravity is subtracted)
    sigma_min: np.ndarray                # smallest singular value of J (controller's view)
    desired_force_n: float
    crossing_start_s: float
    crossing_end_s: float
    region_enter_sigma: float
    contact_lost_s: float = float("nan")  # first time the true force fell to 0 after contact
    events: list = field(default_factory=list)

    @property
    def period_s(self) -> float:
        return float(self.time_s[1] - self.time_s[0])

    @property
    def joint_acceleration_rad_s2(self) -> np.ndarray:
        """(N, 6) true joint acceleration, backward differences of the true velocity (first row 0)."""
        return np.vstack([np.zeros((1, 6)), np.diff(self.qd_rad_s, axis=0) / self.period_s])

    @property
    def joint_jerk_rad_s3(self) -> np.ndarray:
        return np.vstack([np.zeros((1, 6)), np.diff(self.joint_acceleration_rad_s2, axis=0) / self.period_s])

    @property
    def torque_rate_nm_s(self) -> np.ndarray:
        return np.vstack([np.zeros((1, 6)), np.diff(self.commanded_torque_nm, axis=0) / self.period_s])

    @property
    def crossing(self) -> np.ndarray:
        """Cycles from the start of the slide to 0.5 s after its end."""
        return (self.time_s >= self.crossing_start_s) & (self.time_s <= self.crossing_end_s + 0.5)

    @property
    def in_region(self) -> np.ndarray:
        return self.crossing & (self.sigma_min < self.region_enter_sigma)

    def border_windows(self, half_width_s: float = 0.1) -> np.ndarray:
        """Cycles within ``half_width_s`` of a time sigma_min crossed region_enter_sigma (entry and exit)."""
        inside = self.sigma_min < self.region_enter_sigma
        edges = np.nonzero(np.diff(inside.astype(int)) != 0)[0] + 1
        edges = edges[self.crossing[edges]]
        sel = np.zeros(self.time_s.size, bool)
        for k in edges:
            sel |= np.abs(self.time_s - self.time_s[k]) <= half_width_s
        return sel & self.crossing

    @property
    def q5_changed_sign(self) -> bool:
        q5 = self.q_rad[self.crossing, 4]
        return bool(q5.size and np.sign(q5[0]) != np.sign(q5[-1]))

    @property
    def min_abs_q5_rad(self) -> float:
        return float(np.min(np.abs(self.q_rad[self.crossing, 4])))

    @property
    def min_sigma(self) -> float:
        return float(np.min(self.sigma_min[self.crossing]))

    @property
    def time_in_region_s(self) -> float:
        return float(np.sum(self.in_region) * self.period_s)

    def max_force_error_n(self, where: np.ndarray | None = None) -> float:
        sel = self.crossing if where is None else where
        return float(np.max(np.abs(self.desired_force_n - self.normal_force_true_n[sel]))) if sel.any() else 0.0

    def peak(self, series: np.ndarray, where: np.ndarray | None = None) -> float:
        """max |series| over the selected cycles (crossing by default), all joints."""
        sel = self.crossing if where is None else where
        return float(np.max(np.abs(series[sel]))) if sel.any() else 0.0


def run_singularity_crossing(
    *,
    method: str = "padding",
    controller_model: DynamicModel | None = None,
    truth: DynamicModel | None = None,
    normal_force_n: float = 10.0,
    post_radius_m: float = 0.10,
    yaw_start_rad: float = 0.35,
    yaw_end_rad: float = -0.35,
    travel_time_s: float = 3.0,
    rate_hz: float = 500.0,
    noise: bool = True,
    config_overrides: dict | None = None,
    tool: Tool | None = None,
    contact: ContactModel | None = None,
) -> SingularityResult:
    """Press on the post, then slide round it so the wrist crosses q5 = 0; see the module docstring.

    The arm starts with the tip 3 mm off the post at yaw ``yaw_start_rad`` and approaches
    through the three contact stages of P2 eq. (10); 0.5 s after the hybrid stage begins the
    yaw follows a quintic ramp to ``yaw_end_rad`` over ``travel_time_s``, then holds 1 s.
    """
    truth = truth or nominal_truth("ur3")
    controller_model = controller_model or truth
    tool = POLISHING_TOOL if tool is None else tool
    contact = POLISHING_PAD_CONTACT if contact is None else contact
    robot = controller_model.robot_model()
    path = post_path(robot, tool, post_radius_m=post_radius_m)
    import pinocchio as pin

    start_pose = pin.SE3(path.rotation(yaw_start_rad), path.tip(yaw_start_rad, clearance_m=0.003))
    seed = SINGULAR_Q_RAD + np.array([0.0, 0.0, 0.0, 0.0, yaw_start_rad, 0.0])
    q_start = solve_ik(robot, start_pose, seed, local_offset_m=path.tip_offset_m)
    surface = CurvedSurface(kind="cylinder", centre_m=tuple(path.centre_m), radius_m=post_radius_m,
                            axis=(0.0, 0.0, 1.0), half_length_m=0.3)
    sim = SimulatedUR(robot=controller_model.robot, truth=truth, rate_hz=rate_hz, initial_q_rad=q_start,
                      scene=Scene(tool=tool, surface=surface, contact=contact), noise=noise)
    period = 1.0 / rate_hz
    options = dict(period_s=period, output_mode="torque", payload=tool_payload(tool),
                   tool_tip_offset_m=tuple(tool.tip_point_tool0_m), singularity_method=method,
                   motion_axes=(True, True, False, True, True, True))
    options.update(config_overrides or {})
    ctl = OperationalSpaceController(controller_model, config=ControllerConfig(**options))
    state = sim.state()
    t0 = state.timestamp_s
    p0, r0, _, _ = path.motion_point(yaw_start_rad)
    ctl.set_force_target(normal_force_n)
    ctl.set_motion_target(p0 - path.u(yaw_start_rad) * 0.01, r0)  # aim 1 cm into the post
    ctl.start_approach(t0)
    rec: dict[str, list] = {k: [] for k in ("t", "q", "qd", "f", "tau", "sig")}
    crossing_start = np.inf
    contact_lost = np.nan
    touched = False
    total = 2.0 + travel_time_s + 1.0
    for _ in range(int(round(total / period))):
        t = state.timestamp_s - t0
        if ctl.stage is ContactStage.HYBRID:
            if not np.isfinite(crossing_start):
                crossing_start = t + 0.5
            u, du, ddu = quintic_ramp((t - crossing_start) / travel_time_s)
            span = yaw_end_rad - yaw_start_rad
            p, rot, twist, acc = path.motion_point(yaw_start_rad + span * u, span * du / travel_time_s,
                                                   span * ddu / travel_time_s**2)
            ctl.set_motion_target(p, rot, twist=twist, acceleration=acc)
        cmd = ctl.step_state(state)
        sim.direct_torque(cmd.torque_nm)
        state = sim.step()
        force = float(-sim.flange_pose_base()[:3, 2] @ sim.contact_force_world())
        touched = touched or force > 1.0
        if touched and force <= 0.0 and np.isnan(contact_lost):
            contact_lost = t + period
        rec["t"].append(t + period)
        rec["q"].append(sim.q_true_rad.copy())
        rec["qd"].append(sim.qd_true_rad_s.copy())
        rec["f"].append(force)
        rec["tau"].append(cmd.joint_torque_nm.copy())
        rec["sig"].append(cmd.sigma_min)
    if not np.isfinite(crossing_start):
        raise RuntimeError(f"the tool never reached the hybrid stage on the post (events: {ctl.events})")
    return SingularityResult(
        method=str(method), time_s=np.array(rec["t"]), q_rad=np.array(rec["q"]), qd_rad_s=np.array(rec["qd"]),
        normal_force_true_n=np.array(rec["f"]), commanded_torque_nm=np.array(rec["tau"]),
        sigma_min=np.array(rec["sig"]), desired_force_n=normal_force_n, crossing_start_s=float(crossing_start),
        crossing_end_s=float(crossing_start + travel_time_s), region_enter_sigma=ctl.config.singularity_region_enter_sigma,
        contact_lost_s=float(contact_lost), events=list(ctl.events))
