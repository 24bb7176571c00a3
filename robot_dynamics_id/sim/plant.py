"""A simulated Universal Robots arm (MuJoCo) that behaves and reports like a UR controller over RTDE.

:class:`SimulatedUR` is the plant behind the simulated robot backend, the RTDE
stand-in controller, the identifier's simulated experiments and the force
controller's polishing task. It is pure numpy + MuJoCo + pinocchio (no ROS).

What is simulated, and how
--------------------------
* **Rigid-body plant** — MuJoCo model generated from the same pinocchio model the
  rest of the package uses (sim/mjcf.py), with the *true* inertials of a
  :class:`~robot_dynamics_id.io.model_file.DynamicModel` (sim/truth.py: nominal or
  seeded-perturbed), rotor inertia as joint armature, optional payload/tool/scene.
* **Joint friction** — the package's model, seeds.md P2 eq. (11) + offset and, when the
  truth has them, load-dependent Coulomb, odd polynomial viscous and Dahl presliding terms
  (dynamics/friction.py; sim/joint_friction.py), applied each physics substep opposing the
  motion (``joint_friction``: another law instead, e.g. sim/measured_friction.py, friction from a
  UR controller's joint calibration that the identifier's families cannot represent exactly).
  The load-dependent term sees the links' true rigid-body torque at the substep's start
  (RNEA of the true links without rotor inertia, with the payload, at the previous
  substep's acceleration); the presliding state advances with each substep's position
  increment. Its slope near zero
  velocity is huge (sgn is smoothed over only 1e-3 rad/s), which an explicit step
  cannot integrate, so the positive part ``D = max(dτ_f/dq̇, 0)`` is integrated
  implicitly through MuJoCo's joint damping (Euler integrator): the friction acting
  over a substep is ``τ_f(q̇_k) + D (q̇_{k+1} − q̇_k)`` — the model evaluated at the
  substep's start velocity plus its first-order change. Away from zero velocity
  ``D`` is the viscous coefficient and the correction is negligible; the force the
  drives apply (the reported currents) is unaffected by it.
* **Joint servo (speedJ)** — the reference velocity approaches the commanded one evenly
  over the control cycle's substeps (the change still left divided by the substeps still
  left, as a controller interpolates each cycle's target for its drives), never faster
  than the commanded acceleration (leading-axis scaling, as UR's ``speedj``: the joint
  with the largest change uses the full acceleration); the reference position integrates
  it. (Taking the whole change in a cycle's first substep kicked the drive torque once per
  cycle, up to ~40 Nm on a UR5e shoulder, and with it the torque the gears transmit, which
  load-dependent friction sees.) The drive torque is a computed-torque PD
  with feed-forward from the controller's NOMINAL model (sim/truth.controller_model):
  ``τ = RNEA_nom(q, q̇, q̈_ref + K_p e + K_d ė + K_i ∫e)``, ``e = q_ref − q``
  (:class:`ServoGains`; default a stiff PD, K_i = 0). Because the feed-forward is nominal and friction is left to the PD, the true plant's
  differences (inertials, friction) show up in the motor currents.
* **Torque mode (direct_torque)** — ``τ = τ_cmd + g_nom(q)``: like UR's
  ``direct_torque`` the controller adds its own (nominal) gravity compensation.
* **Drive** — torques are clipped to the description's torque limits; motor current
  = drive torque / true drive gain (+ noise). ``target_moment`` is the nominal model's
  torque ``RNEA_nom(q, q̇, q̈_ref)`` (friction excluded), ``target_current`` =
  (``target_moment`` + the controller's friction model at ``q̇_ref``) / nominal drive gains: on
  real arms UR's target_current follows the moving joints' currents far better than a
  rigid-body torque can (issue 15's recordings: about as well as an identified model on the
  big joints), and friction is most of a wrist's torque. The controller's friction model is
  the P2 part of ``nominal_model``'s friction when it has one, else of the arm type's nominal
  friction of the truth's kind (sim/truth.controller_friction); a custom arm's controller has
  none. In torque mode both are the drive torque.
* **F/T sensor** — MuJoCo force/torque sensor between flange and the end-effector
  body (payload + tool). ``tcp_wrench_base`` is the wrench the environment exerts on
  the robot through the tool — the sensor wrench minus the static weight of
  payload+tool (as UR does with a correctly set payload) — force in N and moment
  about the flange origin in Nm, both in base-frame axes. Pressing the tool down on
  a surface therefore reads +Fz. (A real CB3 has no F/T sensor and estimates this
  from currents to about ±10 N; the simulator reports the sensor for both generations.)
* **External loads** — forces at points on the links (sim/contacts.py: a push, an obstacle in the
  arm's path), evaluated every substep from the point's world position and velocity and applied as
  ``Jᵀ F``; :attr:`SimulatedUR.external_load_peak_n` is each load's largest force in the last cycle.
* **Rates** — 500 Hz (e-Series) or 125 Hz (CB3) from the description's generation,
  overridable. Physics substep: the control period divided into an integer number
  of substeps of at most :data:`~robot_dynamics_id.sim.mjcf.PHYSICS_TIMESTEP_S`
  (0.5 ms: 4 substeps at 500 Hz, 16 at 125 Hz).
* **Sensing** — positions quantised to an encoder step and noisy; velocities, currents
  and wrench noisy (:class:`SensorNoise`; all seeded by ``noise_seed``).
  ``noise=False`` turns off noise and quantisation.

Timing of one reported sample: ``q``/``q̇`` are the state at the end of the control
period; ``current`` is the drive torque of the period's last substep (computed from the
state at its start and held over it: the current flowing when q is read); the F/T wrench
and contact force are MuJoCo's values for that same last substep.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin

from ..io.model_file import DynamicModel
from ..robot_state import RobotMode, RobotState, SafetyMode
from ..robots.description import ROBOT_NAMES, RobotDescription
from ..robots.model import RobotModel, load_robot
from .joint_friction import JointFriction
from .measured_friction import MeasuredJointFriction
from .mjcf import PHYSICS_TIMESTEP_S, _end_effector_inertial, build_mjcf
from .plant_readout import PlantReadout
from .plant_settings import SensorNoise, ServoGains
from .scene import Scene
from .truth import controller_friction, controller_model, make_truth, nominal_truth, p2_part

__all__ = ["SensorNoise", "ServoGains", "SimulatedUR"]


def _controller_friction(nominal_model: DynamicModel, truth: DynamicModel, robot_name: str,
                         law: JointFriction | MeasuredJointFriction | None = None
                         ) -> JointFriction | MeasuredJointFriction | None:
    """The simulated controller's friction model (target_current): the P2 part of the nominal model's own friction
    when it has one (an identified model passed as ``nominal_model``); else, with a calibrated-curve law
    (``joint_friction``), what the arm's calibration measured (MeasuredJointFriction.controller_view); else, for a
    built-in arm, the arm type's typical joint of the truth's kind (sim/truth.controller_friction: a manufacturer
    knows its joints, not this arm's); else (a custom arm) none."""
    own = nominal_model.friction
    if own is not None and np.any(own.linear_vector() != 0):
        return JointFriction(p2_part(own))
    if isinstance(law, MeasuredJointFriction):
        return law.controller_view()
    if robot_name.strip().lower() not in ROBOT_NAMES:
        return None
    kind = "p2" if truth.friction is None or truth.friction.is_p2 else "real"
    return JointFriction(controller_friction(robot_name, kind))


class SimulatedUR(PlantReadout):
    """A MuJoCo UR arm with a UR-like controller: speedJ servo, direct torque, RTDE-like state.

    ``robot``: a UR name or :class:`RobotDescription` (or URDF path). ``truth``: the plant's
    true :class:`DynamicModel` (or a model-file path); when ``None`` it is
    :func:`~robot_dynamics_id.sim.truth.make_truth` (robot, ``truth_seed``) if a seed is
    given, else the unperturbed :func:`~robot_dynamics_id.sim.truth.nominal_truth`.
    ``payload_kg``/``payload_com_m`` (tool0 frame) are part of the plant *and* known to the
    controller (UR's "set payload"), as is the scene's tool mass. ``nominal_model`` replaces
    the controller's own model (default :func:`~robot_dynamics_id.sim.truth.controller_model`;
    its friction, if any, becomes target_current's). ``joint_friction`` replaces the truth's friction by another
    law with :class:`~robot_dynamics_id.sim.joint_friction.JointFriction`'s interface (e.g.
    :func:`~robot_dynamics_id.sim.measured_friction.measured_friction`); the truth's friction is then unused.
    """

    def __init__(
        self,
        *,
        robot: str | RobotDescription = "ur3",
        truth: DynamicModel | str | Path | None = None,
        truth_seed: int | None = None,
        noise_seed: int = 0,
        rate_hz: float | None = None,
        initial_q_rad=None,
        payload_kg: float = 0.0,
        payload_com_m=(0.0, 0.0, 0.0),
        scene: Scene | None = None,
        realtime: bool = False,
        noise: bool = True,
        sensor_noise: SensorNoise | None = None,
        servo: ServoGains | None = None,
        physics_timestep_s: float = PHYSICS_TIMESTEP_S,
        protective_force_limit_n: float | None = None,
        nominal_model: DynamicModel | None = None,
        external_loads=(),
        joint_friction: JointFriction | MeasuredJointFriction | None = None,
    ) -> None:
        self.robot_model: RobotModel = load_robot(robot)
        description = self.robot_model.description
        robot_name = description.name if description is not None else str(robot)
        if truth is None:
            if description is None:
                raise ValueError("a URDF robot has no built-in truth: pass truth=DynamicModel(...)")
            truth = nominal_truth(robot_name) if truth_seed is None else make_truth(robot_name, truth_seed)
        elif isinstance(truth, (str, Path)):
            truth = DynamicModel.load(truth)
        if not isinstance(truth, DynamicModel):
            raise ValueError(f"truth must be a DynamicModel, a model-file path or None, got {type(truth).__name__}")
        if description is not None and truth.robot.strip().lower() != robot_name:
            raise ValueError(
                f"truth is a model of {truth.robot!r} but the simulator runs {robot_name!r}; "
                f"pass robot={truth.robot!r} or a truth made for {robot_name!r}"
            )
        self.truth: DynamicModel = truth
        # The joints' friction: the truth's (the package's own model family) unless a law is given
        # (sim/measured_friction.py: one the identifier cannot represent exactly).
        self._friction = joint_friction if joint_friction is not None else JointFriction(truth.friction)
        self.n_joints: int = self.robot_model.n_joints
        n = self.n_joints

        if rate_hz is None:
            rate_hz = description.control_rate_hz if description is not None else 500.0
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        if payload_kg < 0:
            raise ValueError(f"payload_kg must be >= 0, got {payload_kg}")
        self.rate_hz: float = float(rate_hz)
        self.period_s: float = 1.0 / self.rate_hz
        self.substeps: int = max(1, int(np.ceil(self.period_s / physics_timestep_s - 1e-9)))
        self.physics_timestep_s: float = self.period_s / self.substeps
        self.realtime = bool(realtime)
        self.noise_enabled = bool(noise)
        self.sensor_noise = sensor_noise or SensorNoise()
        self.servo = servo or ServoGains()
        self.scene = scene
        self.payload_kg = float(payload_kg)
        #: a TCP force above this (N) triggers a protective stop, like UR's force limit; None = off
        self.protective_force_limit_n = protective_force_limit_n
        self.payload_com_m = np.asarray(payload_com_m, float)

        # ---- MuJoCo plant (truth) --------------------------------------------------------
        self._base_motion = None if scene is None else scene.base_motion
        self.mjcf: str = build_mjcf(self.robot_model, truth, timestep_s=self.physics_timestep_s,
                                    payload_kg=self.payload_kg, payload_com_m=self.payload_com_m, scene=scene,
                                    moving_base=self._base_motion is not None)
        self._mj_model = mujoco.MjModel.from_xml_string(self.mjcf)
        self._mj_data = mujoco.MjData(self._mj_model)
        self._scratch_data = mujoco.MjData(self._mj_model)
        m = self._mj_model
        n_base = 3 if self._base_motion is not None else 0
        self._arm = slice(n_base, n_base + self.n_joints)  # arm joints in qpos/qvel/dof arrays
        self._base_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "base")
        self._flange_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "flange")
        self._ft_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "ft_site")
        self._ee_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "end_effector")
        self._ft_force_adr = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, "ft_force")]
        self._ft_torque_adr = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, "ft_torque")]
        self._tool_tip_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "tool_tip")
        self._surface_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "surface")
        ee = _end_effector_inertial(self.payload_kg, self.payload_com_m, scene)
        self._ee_mass_kg = 0.0 if ee is None else ee[0]
        self._ee_com_tool0_m = np.zeros(3) if ee is None else ee[1]
        # The truth's mount: the base frame is the world frame (a moving base only translates).
        m.opt.gravity[:] = truth.gravity_m_s2
        self._gravity = np.array(m.opt.gravity, float)

        # ---- the controller's nominal model (+ the payload/tool it is told about) --------
        if nominal_model is None:
            # A custom URDF has no published nominal: the controller then knows the truth.
            nominal_model = controller_model(robot_name) if description is not None else truth
        if nominal_model.n_joints != truth.n_joints:
            raise ValueError("nominal_model and truth must have the same number of joints")
        #: the model the simulated UR controller believes in (feed-forward, gravity, target_*)
        self.controller_model: DynamicModel = nominal_model
        nominal = self.controller_model.robot_model().model.copy()
        nominal.gravity.linear = truth.gravity_m_s2  # the controller knows how it is mounted (the installation)
        if ee is not None:
            tool0 = self.robot_model.model.frames[self.robot_model.tool_frame_id].placement
            nominal.inertias[n] = nominal.inertias[n] + tool0.act(pin.Inertia(ee[0], ee[1], ee[2]))
        self._nominal = nominal
        self._nominal_data = nominal.createData()
        # The controller's own friction model, for target_current only (feed-forward leaves friction to the PD).
        self._controller_friction = _controller_friction(nominal_model, truth, robot_name, joint_friction)
        # The links' true rigid-body model (no rotor inertia) for load-dependent friction.
        self._links = None
        if self._friction.needs_load_torque:
            links = truth.robot_model().model.copy()
            links.armature = np.zeros(n)
            if ee is not None:
                tool0 = self.robot_model.model.frames[self.robot_model.tool_frame_id].placement
                links.inertias[n] = links.inertias[n] + tool0.act(pin.Inertia(ee[0], ee[1], ee[2]))
            self._links = (links, links.createData())
        self._nominal_gains = np.asarray(self.controller_model.drive_gains_nm_per_a, float)
        self._true_gains = np.asarray(truth.drive_gains_nm_per_a, float)
        if np.any(self._true_gains <= 0) or np.any(self._nominal_gains <= 0):
            raise ValueError("drive gains must be > 0 Nm/A")
        self._torque_limit = np.asarray(self.robot_model.torque_limit_nm, float)
        self._velocity_limit = np.asarray(self.robot_model.velocity_limit_rad_s, float)
        self._stop_deceleration = float(np.min(self.robot_model.acceleration_limit_rad_s2))

        self._rng = np.random.default_rng(int(noise_seed))
        self.set_external_loads(external_loads)
        self._base_origin = np.zeros(3)
        #: simulated controller time (RTDE ``timestamp``), s
        self.time_s: float = 0.0
        q0 = np.zeros(n) if initial_q_rad is None else initial_q_rad
        self.reset(q0)

    # ---- commands --------------------------------------------------------------------------
    def speed_j(self, qd_rad_s, acceleration_rad_s2: float) -> None:
        """speedJ: ramp the joint velocity reference to ``qd_rad_s`` with the given (leading-axis)
        acceleration and hold it until changed. Ignored during a protective stop."""
        qd = np.asarray(qd_rad_s, float)
        if qd.shape != (self.n_joints,) or not np.isfinite(qd).all():
            raise ValueError(f"speed_j needs {self.n_joints} finite joint velocities, got {qd_rad_s!r}")
        a = float(acceleration_rad_s2)
        if not a > 0 or not math.isfinite(a):
            raise ValueError(f"speed_j acceleration must be > 0 rad/s², got {acceleration_rad_s2}")
        if self._protective_stop:
            return
        if self._mode != "velocity":
            self._enter_velocity_mode()
        self._qd_cmd = np.minimum(np.maximum(qd, -self._velocity_limit), self._velocity_limit)  # np.clip's values
        self._acceleration = a

    def speed_stop(self, deceleration_rad_s2: float = 10.0) -> None:
        """Decelerate every joint to rest (speedStop) and hold position."""
        a = float(deceleration_rad_s2)
        if not a > 0:
            raise ValueError(f"speed_stop deceleration must be > 0 rad/s², got {deceleration_rad_s2}")
        if self._mode != "velocity":
            self._enter_velocity_mode()
        self._qd_cmd = np.zeros(self.n_joints)
        self._acceleration = a

    def direct_torque(self, torque_nm) -> None:
        """Torque mode: the drives apply ``torque_nm`` + the controller's nominal gravity torque
        (like UR's ``direct_torque``). Held until changed. Ignored during a protective stop."""
        tau = np.asarray(torque_nm, float)
        if tau.shape != (self.n_joints,) or not np.all(np.isfinite(tau)):
            raise ValueError(f"direct_torque needs {self.n_joints} finite torques (Nm), got {torque_nm!r}")
        if self._protective_stop:
            return
        self._mode = "torque"
        self._torque_cmd = tau.copy()

    def protective_stop(self) -> None:
        """Stop the arm (decelerate at the joint acceleration limit) and refuse motion until cleared.

        Also triggered automatically when a joint leaves its position limits or, if
        ``protective_force_limit_n`` is set, when the TCP force exceeds it."""
        self._protective_stop = True
        self.protective_stop_reason = "requested"
        # The stop ramps the arm's *actual* velocity down from where it is, as UR's stop does; a reference
        # the arm could not follow (blocked by an obstacle) is dropped, not caught up with.
        self._enter_velocity_mode()
        self._qd_cmd = np.zeros(self.n_joints)
        self._acceleration = self._stop_deceleration

    def clear_protective_stop(self) -> None:
        """Leave the protective stop; the arm holds its current position until commanded."""
        self._protective_stop = False
        self.protective_stop_reason = ""
        self._enter_velocity_mode()
        self._qd_cmd = np.zeros(self.n_joints)

    @property
    def in_protective_stop(self) -> bool:
        return self._protective_stop

    def set_external_loads(self, loads) -> None:
        """Replace the external loads (sim/contacts.py) acting from the next substep on."""
        from .contacts import AppliedLoads

        self._loads = AppliedLoads(self._mj_model, tuple(loads), self._arm)

    @property
    def external_loads(self) -> tuple:
        return self._loads.loads

    @property
    def external_load_force_n(self) -> np.ndarray:
        """Per external load, its force (N, world axes) in the last physics substep, shape (L, 3)."""
        return self._loads.force_n.copy()

    @property
    def external_load_peak_n(self) -> np.ndarray:
        """Per external load, its largest force magnitude (N) during the last control cycle."""
        return self._loads.peak_n.copy()

    def reset(self, q_rad, qd_rad_s=None) -> None:
        """Put the arm at ``q_rad`` (velocity ``qd_rad_s``, default rest), holding position in
        velocity mode; clears a protective stop. Time is not reset."""
        n = self.n_joints
        q = np.asarray(q_rad, float)
        qd = np.zeros(n) if qd_rad_s is None else np.asarray(qd_rad_s, float)
        if q.shape != (n,) or qd.shape != (n,):
            raise ValueError(f"reset needs q and qd of shape ({n},), got {q.shape} and {qd.shape}")
        d = self._mj_data
        d.qpos[self._arm] = q
        d.qvel[self._arm] = qd
        d.qacc_warmstart[:] = 0.0
        d.time = self.time_s
        self._set_base(self.time_s)
        mujoco.mj_forward(self._mj_model, d)
        self._protective_stop = False
        self.protective_stop_reason = ""
        self._mode = "velocity"
        self._q_ref = q.copy()
        self._qd_ref = qd.copy()
        self._qdd_ref = np.zeros(n)
        self._error_integral = np.zeros(n)
        self._qd_cmd = qd.copy()
        self._acceleration = self._stop_deceleration
        self._torque_cmd = np.zeros(n)
        self._motor_torque = self._drive_torque(q, qd, update_reference=False)
        self._friction.reset(qd)
        self._qdd_links = np.zeros(n)
        self._friction_applied = self._friction.torque_and_slope(qd, self._load_torque(q, qd))[0]
        self._target_moment = self._nominal_rnea(q, qd, np.zeros(n))
        self._target_friction = self._controller_friction_torque()
        self._wall_deadline = None
        self._last_state = self._measure()

    # ---- stepping ----------------------------------------------------------------------------
    def step(self, n_cycles: int = 1) -> RobotState:
        """Advance by ``n_cycles`` controller periods; returns the state after the last one."""
        if n_cycles < 1:
            raise ValueError(f"n_cycles must be >= 1, got {n_cycles}")
        for _ in range(int(n_cycles)):
            self._cycle()
            if self.realtime:
                self._sleep_to_deadline()
        return self._last_state

    def state(self) -> RobotState:
        """The state reported after the latest cycle (no simulation)."""
        return self._last_state

    def _cycle(self) -> None:
        m, d = self._mj_model, self._mj_data
        friction = self._friction
        h = self.physics_timestep_s
        # Reported current/torque = the drive torque of the cycle's last substep: the current flowing at
        # the tick, when q and q̇ are read. (The mean over the cycle, reported before, is centred over a
        # millisecond earlier than q: that lag biased identified inertias by 2-3 % and presliding
        # distances by ~10 % at 500 Hz. It stood in for a filter against a per-cycle torque kick that the
        # reference spread over the cycle no longer makes: _advance_reference.)
        # Views into MuJoCo's buffers, taken once per cycle (each attribute access builds a new array object).
        arm = self._arm
        qpos, qvel, damping, applied = d.qpos[arm], d.qvel[arm], m.dof_damping[arm], d.qfrc_applied[arm]
        self._loads.start_cycle()
        for k in range(self.substeps):
            q = qpos.copy()
            qd = qvel.copy()
            tau = self._drive_torque(q, qd, update_reference=True, substeps_left=self.substeps - k)
            tau_f, slope = friction.torque_and_slope(qd, self._load_torque(q, qd))
            np.maximum(slope, 0.0, out=slope)
            # Friction = τ_f(q̇_k) + D (q̇_{k+1} − q̇_k): explicit part here, D q̇_{k+1} by MuJoCo's
            # implicit joint damping (see module doc).
            damping[:] = slope
            applied[:] = tau - tau_f + slope * qd
            if self._base_motion is not None:
                self._set_base(self.time_s + k * h)
            if self._loads.loads:
                applied += self._loads.joint_torque_nm(d, self.time_s + k * h)
            mujoco.mj_step(m, d)
            if friction.any_presliding:
                friction.advance(qpos - q)
            if self._links is not None:
                self._qdd_links = d.qacc[arm].copy()
        self._motor_torque = tau.copy()
        self._friction_applied = tau_f + slope * (qvel - qd)
        self.time_s += self.period_s
        d.time = self.time_s
        q, qd = d.qpos[self._arm].copy(), d.qvel[self._arm].copy()
        if self._mode == "velocity":
            self._target_moment = self._nominal_rnea(q, qd, self._qdd_ref)
            self._target_friction = self._controller_friction_torque()
        else:
            self._target_moment = self._motor_torque.copy()
            self._target_friction = np.zeros(self.n_joints)
        self._last_state = self._measure()
        self._check_safety()

    def _check_safety(self) -> None:
        """UR-like automatic protective stops: joint position limits and (optionally) TCP force."""
        if self._protective_stop:
            return
        if np.any(np.abs(self._mj_data.qpos[self._arm]) > self.robot_model.position_limit_rad):
            self.protective_stop()
            self.protective_stop_reason = "joint position limit"
        elif (self.protective_force_limit_n is not None
              and np.linalg.norm(self.tcp_wrench_base_true()[:3]) > self.protective_force_limit_n):
            self.protective_stop()
            self.protective_stop_reason = f"TCP force above {self.protective_force_limit_n} N"

    def _load_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray | None:
        """The torque each joint transmits to its links (true links, previous substep's acceleration)."""
        if self._links is None:
            return None
        model, data = self._links
        return np.array(pin.rnea(model, data, q, qd, self._qdd_links))

    def _controller_friction_torque(self) -> np.ndarray:
        """The controller's friction model at its reference velocity (Nm; zeros without one)."""
        if self._controller_friction is None:
            return np.zeros(self.n_joints)
        return np.array(self._controller_friction.torque_and_slope_lists(self._qd_ref.tolist())[0])

    def _nominal_rnea(self, q, qd, qdd) -> np.ndarray:
        return np.array(pin.rnea(self._nominal, self._nominal_data, q, qd, qdd))

    def _drive_torque(self, q: np.ndarray, qd: np.ndarray, *, update_reference: bool,
                      substeps_left: int = 1) -> np.ndarray:
        """Drive torque of the UR-like controller for the current mode (one physics substep)."""
        if self._mode == "torque" and not self._protective_stop:
            g = np.array(pin.computeGeneralizedGravity(self._nominal, self._nominal_data, q))
            tau = self._torque_cmd + g
        else:
            if update_reference:
                self._advance_reference(substeps_left)
            acc = self._servo_acceleration(q.tolist(), qd.tolist(), integrate=update_reference)
            tau = self._nominal_rnea(q, qd, np.array(acc))
        return np.minimum(np.maximum(tau, -self._torque_limit), self._torque_limit)

    def _advance_reference(self, substeps_left: int = 1) -> None:
        """One substep of the speedJ reference: the velocity moves 1/``substeps_left`` of the way to the
        command (so it arrives at the cycle's end), at most at the commanded acceleration, leading-axis
        scaled (all joints arrive together); the position integrates it.

        Float loops over the joints, not whole-array numpy calls: at six joints each numpy call's
        overhead is larger than its arithmetic, and this runs every physics substep.
        """
        h = self.physics_timestep_s
        delta = [(c - r) / substeps_left for c, r in zip(self._qd_cmd.tolist(), self._qd_ref.tolist())]
        largest = max(map(abs, delta))
        limit = self._acceleration * h
        if largest > limit:
            scale = limit / largest
            delta = [x * scale for x in delta]
        self._q_ref = np.array([p + (v + 0.5 * x) * h
                                for p, v, x in zip(self._q_ref.tolist(), self._qd_ref.tolist(), delta)])
        self._qd_ref = self._qd_ref + np.array(delta)
        self._qdd_ref = np.array([x / h for x in delta])

    def _servo_acceleration(self, q: list[float], qd: list[float], *, integrate: bool) -> list[float]:
        """The servo's commanded acceleration ``q̈_ref + K_p e + K_d ė + K_i ∫e`` (:class:`ServoGains`);
        ``integrate`` advances the clamped error integral by one substep first."""
        s = self.servo
        kp, kd, ki = s.kp, s.kd, s.ki
        error = [r - x for r, x in zip(self._q_ref.tolist(), q)]
        integral = self._error_integral.tolist()
        if integrate:
            h, lim = self.physics_timestep_s, s.integral_limit_rad_s
            integral = [min(max(i + e * h, -lim), lim) for i, e in zip(integral, error)]
            self._error_integral = np.array(integral)
        return [a + kp * e + kd * (v - x) + ki * i
                for a, e, v, x, i in zip(self._qdd_ref.tolist(), error, self._qd_ref.tolist(), qd, integral)]

    def _enter_velocity_mode(self) -> None:
        d = self._mj_data
        self._mode = "velocity"
        self._q_ref = d.qpos[self._arm].copy()
        self._qd_ref = d.qvel[self._arm].copy()
        self._qdd_ref = np.zeros(self.n_joints)
        self._error_integral = np.zeros(self.n_joints)

    def _set_base(self, t_s: float) -> None:
        """Prescribe the base's position and velocity (central difference of the motion) at ``t_s``."""
        motion = self._base_motion
        if motion is None:
            return
        dt = 1e-4
        d = self._mj_data
        d.qpos[:3] = self._base_origin + np.asarray(motion(t_s), float)
        d.qvel[:3] = (np.asarray(motion(t_s + dt), float) - np.asarray(motion(t_s - dt), float)) / (2 * dt)

    def _sleep_to_deadline(self) -> None:
        now = time.perf_counter()
        if self._wall_deadline is None:
            self._wall_deadline = now
        self._wall_deadline += self.period_s
        delay = self._wall_deadline - now
        if delay > 0:
            time.sleep(delay)
        elif delay < -10 * self.period_s:
            self._wall_deadline = now  # fell far behind: do not try to catch up in a burst

    # ---- measurements --------------------------------------------------------------------------
    def _measure(self) -> RobotState:
        d = self._mj_data
        q = d.qpos[self._arm].copy()
        qd = d.qvel[self._arm].copy()
        current = self._motor_torque / self._true_gains
        wrench = true_wrench = self.tcp_wrench_base_true()
        if self.noise_enabled:
            sn = self.sensor_noise
            n = self.n_joints
            q = q + self._rng.normal(0.0, sn.position_noise_rad, n)
            q = np.round(q / sn.position_resolution_rad) * sn.position_resolution_rad
            qd = qd + self._rng.normal(0.0, sn.velocity_noise_rad_s, n)
            current = current + self._rng.normal(0.0, sn.current_noise_a, n)
            wrench = wrench + np.concatenate([self._rng.normal(0.0, sn.force_noise_n, 3),
                                              self._rng.normal(0.0, sn.torque_noise_nm, 3)])
        safety = SafetyMode.PROTECTIVE_STOP if self._protective_stop else SafetyMode.NORMAL
        return RobotState(
            timestamp_s=self.time_s,
            q_rad=q,
            qd_rad_s=qd,
            current_a=current,
            target_current_a=(self._target_moment + self._target_friction) / self._nominal_gains,
            target_moment_nm=self._target_moment.copy(),
            tcp_wrench_base=wrench,
            tcp_wrench_base_true=true_wrench,
            robot_mode=int(RobotMode.RUNNING),
            safety_mode=int(safety),
            program_running=not self._protective_stop,
        )
