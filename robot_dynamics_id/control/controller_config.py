"""The options and the output of the operational-space controller (control/controller.py).

:class:`ControllerConfig` holds every option, validated at construction, with the string
options turned into their Enums (a plain string still works: the Enums are ``str``);
:class:`ControlCommand` is one cycle's output; :class:`Payload` the load the controller
knows about (UR's "set payload").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ..io.model_file import DynamicModel
from .contact import ContactStage, StageEvent
from .selection import POLISHING_MOTION_AXES
from .singularity import SingularityMethod

__all__ = [
    "ControlCommand",
    "ControllerConfig",
    "ForceSource",
    "FrictionVelocitySource",
    "HybridLaw",
    "OutputMode",
    "Payload",
    "VelocityIntegrationBase",
]


class OutputMode(str, Enum):
    """What the controller commands: joint torques (direct_torque) or joint velocities (speedJ)."""

    TORQUE = "torque"
    VELOCITY = "velocity"


class ForceSource(str, Enum):
    """Where the contact wrench comes from: the flange F/T sensor or the motor currents."""

    SENSOR = "sensor"
    ESTIMATED = "estimated"


class HybridLaw(str, Enum):
    """The HYBRID stage's law: Jamisola's operational-space law (P2) or Aghili's projected law (P5)."""

    OPERATIONAL_SPACE = "operational_space"
    PROJECTED = "projected"


class FrictionVelocitySource(str, Enum):
    """The joint velocity the friction compensation is evaluated at (ControllerConfig.friction_velocity_source)."""

    MEASURED = "measured"
    DESIRED = "desired"
    SUM = "sum"


class VelocityIntegrationBase(str, Enum):
    """What the velocity output integrates from: the previous command or the measured velocity."""

    COMMAND = "command"
    MEASURED = "measured"


@dataclass(frozen=True)
class Payload:
    """A rigid load on the flange known to the controller (UR's "set payload"): the tool."""

    mass_kg: float = 0.0
    com_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: inertia about the CoM, tool0 axes, kg m^2
    inertia_kgm2: tuple[tuple[float, ...], ...] = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


@dataclass(frozen=True, kw_only=True)
class ControllerConfig:
    """Every option of :class:`OperationalSpaceController` (all keyword-only, validated)."""

    #: controller period (s): 0.002 for e-Series (500 Hz), 0.008 for CB3 (125 Hz)
    period_s: float = 0.002
    output_mode: OutputMode | str = OutputMode.TORQUE
    #: hybrid-stage law: "operational_space" (Jamisola P2, eqs. (2)-(5)) or "projected"
    #: (Aghili P5: the surface contact as a constraint on the tool, A = n^T J_v at the tip with
    #: n = -tool z; PIDC for the motion in the constraint's tangent space, eqs. (45)-(48), and
    #: constraint-force PI control along the normal, eqs. (51)-(52), with the loop gains
    #: force_loop_gain, force_loop_integral_gain_per_s, kv_force_per_s; torque output only; it
    #: regulates the normal force only, other force-controlled axes are motion-controlled).
    law: HybridLaw | str = HybridLaw.OPERATIONAL_SPACE
    #: UR direct_torque adds the robot's own gravity compensation: subtract it from the command
    robot_adds_gravity: bool = True
    #: the model the robot itself uses for that gravity compensation (None: the nominal one)
    robot_gravity_model: DynamicModel | None = None
    force_source: ForceSource | str = ForceSource.SENSOR
    payload: Payload = field(default_factory=Payload)
    #: F/T sensor frame (motion operational point) relative to tool0: 3-vector (m)
    sensor_offset_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: the point the F/T reading's moments are taken about, relative to tool0 (m)
    wrench_reference_offset_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: tool tip (force operational point) relative to tool0 (m)
    tool_tip_offset_m: tuple[float, float, float] = (0.0, 0.0, 0.11)
    # ---- motion law, P2 eq. (3) -----------------------------------------------------
    kp_position_per_s2: float = 900.0
    kv_position_per_s: float = 60.0
    kp_orientation_per_s2: float = 3600.0
    kv_orientation_per_s: float = 120.0
    #: impact stage damping, P2 eq. (10): F*_motion = -k_v xd
    kv_impact_per_s: float = 40.0
    # ---- force law, P2 eq. (4) (gains map a force error to an acceleration) --------
    #: fixed k_pf, k_if of P2 eq. (4); None (default) = scheduled from the loop gains below
    kp_force_m_s2_per_n: float | None = None
    ki_force_m_s2_per_n_s: float | None = None
    #: loop gains of the force law: k_pf = force_loop_gain / lambda_n and
    #: k_if = force_loop_integral_gain_per_s / lambda_n each cycle, lambda_n = n^T Lambda n the
    #: inertia along the force axis, so the force command is F = f_d + gain (f_d - f) + ...
    #: The defaults suit a tool with a compliant pad (P2's polishing tool; simulated: 3 kN/m,
    #: sim/scene.CompliantPad): the loop then closes through the pad at ~80 rad/s, and the high
    #: gain breaks the joints' static friction at a velocity reversal within < 1 N of force
    #: error. Gains of 15 oscillate with the pad's own 40 Hz mode. On a STIFF tool and surface
    #: the force follows the command within a cycle, f_{k+1} ~ f_d + gain (f_d - f_k), which
    #: oscillates for a gain > 1: use force_loop_gain <= 0.3 and an integral gain of ~30 there.
    force_loop_gain: float = 8.0
    force_loop_integral_gain_per_s: float = 80.0
    #: velocity damping along force-controlled axes (a practical addition to eq. (4)); the pad's
    #: own damper, seen in the measured force and multiplied by the loop gain, damps the rest
    kv_force_per_s: float = 40.0
    kp_moment_rad_s2_per_nm: float = 100.0
    ki_moment_rad_s2_per_nm_s: float = 0.0
    kv_moment_per_s: float = 20.0
    #: force/moment error saturation (N, Nm) before the PI law
    force_error_limit_n: float = 15.0
    moment_error_limit_nm: float = 1.0
    #: anti-windup clamp of the integrated error (N s, Nm s)
    force_integral_limit_n_s: float = 5.0
    moment_integral_limit_nm_s: float = 0.5
    #: motion-controlled axes of the task (tool-tip) frame in the HYBRID stage
    motion_axes: tuple[bool, ...] = tuple(bool(v) for v in POLISHING_MOTION_AXES)
    # ---- contact stages, P2 eq. (10) ------------------------------------------------
    contact_threshold_n: float = 10.0
    min_impact_duration_s: float = 0.02
    # ---- singularity, P2 eqs. (6)-(9) ------------------------------------------------
    singularity_method: SingularityMethod | str = SingularityMethod.PADDING
    singularity_region_enter_sigma: float = 0.03
    singularity_region_full_sigma: float = 0.01
    singularity_damping_max: float = 0.02
    # ---- friction compensation, P2 eqs. (11)-(12) ------------------------------------
    friction_compensation: bool = True
    #: scales the compensated friction (1 = all of the identified model)
    friction_compensation_scale: float = 1.0
    #: smallest velocity over which the compensation's sgn/tanh terms may switch (rad/s).
    #: Compensating a friction whose sign flips faster than the loop can resolve (the
    #: identified model's ~1e-3 rad/s) risks a limit cycle in contact, where the joints
    #: nearly stand still; the friction left uncompensated below this speed is taken up
    #: by the force integrator and the motion PD. 0.01 rad/s (the UR3 model's Coulomb
    #: velocity) is safe through a compliant pad; with a rigid tool on a stiff surface
    #: 0.05 was needed.
    friction_compensation_velocity_rad_s: float = 0.01
    #: which joint velocity the compensation is evaluated at: "measured" (default: through a
    #: compliant pad it compensates as soon as a stuck joint breaks away, which keeps the force
    #: error small through a singularity crossing; benchmarks/RESULTS.md, Control), or "desired" (the
    #: motion target's twist mapped to the joints with the dynamically consistent inverse
    #: M^-1 J^T Lambda; smooth, so no chatter at reversals, but blind to motion the force
    #: loop makes), or "sum" (desired + measured minus their common part: desired where the
    #: target moves, measured along the force-controlled directions; the choice for a rigid
    #: tool on a stiff surface)
    friction_velocity_source: FrictionVelocitySource | str = FrictionVelocitySource.MEASURED
    # ---- sensorless force estimation -------------------------------------------------
    #: momentum-observer bandwidth K_O (1/s); None = 0.5 / period_s (250 at 500 Hz, 62.5 at
    #: 125 Hz; the observer needs K_O * period <= 1). A lower bandwidth lags the contact force
    #: and raises the force error (benchmarks/bench_polishing.py).
    observer_gain_per_s: float | None = None
    # ---- velocity output --------------------------------------------------------------
    #: integrate the commanded velocity from the previous command ("command": the law damps the commanded twist)
    #: or the measured one ("measured": it damps the measured twist); controller_stages.VelocityOutput
    velocity_integration_base: VelocityIntegrationBase | str = VelocityIntegrationBase.COMMAND
    #: velocity output, force-controlled axes: a velocity-servoed arm pressing on a stiff surface
    #: is a stiff spring, so the force loop uses a virtual (admittance) mass instead of Lambda,
    #: xdd_f = F*_force * scale + (f_d - f) / mass (kg), to stay stable at 125 Hz.
    velocity_mode_admittance_mass_kg: float = 60.0
    velocity_mode_force_gain_scale: float = 0.1
    # ---- refusal limits -----------------------------------------------------------------
    max_force_n: float = 60.0
    max_moment_nm: float = 5.0
    #: reach margin: targets farther than (reach - margin) from the shoulder are refused (m)
    reach_margin_m: float = 0.01
    #: lowest height (base-frame z, m) of a motion target's motion point and tool tip; lower targets are refused.
    #: None: no floor (the mount is not known: an arm on a pedestal reaches below its base). Set it below any
    #: surface the tool is to press on: an approach aims beyond the surface (PolishingTask: approach_depth_m).
    #: Every target is checked; the way between two goals by OperationalSpaceController.check_way.
    target_min_z_m: float | None = None
    # ---- compliant joints, Bicchi & Melchiorri (seeds.md P4) ---------------------------
    #: correct the force target for joint deflections (see the module docstring)
    flexible_compensation: bool = False
    #: joint torsional stiffness, one per joint (N m/rad); None = the package's ASSUMED UR3
    #: values (control/flexible.py UR3_JOINT_STIFFNESS_NM_PER_RAD; identify them for a real arm)
    joint_stiffness_nm_per_rad: tuple[float, ...] | None = None
    #: how often the correction is recomputed (Hz); at 500 Hz, 5 Hz = every 100th cycle
    flexible_compensation_rate_hz: float = 5.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_mode", OutputMode(self.output_mode))
        object.__setattr__(self, "force_source", ForceSource(self.force_source))
        object.__setattr__(self, "singularity_method", SingularityMethod(self.singularity_method))
        if not self.period_s > 0:
            raise ValueError(f"period_s must be > 0, got {self.period_s}")
        for name in ("kp_position_per_s2", "kv_position_per_s", "kp_orientation_per_s2", "kv_orientation_per_s",
                     "kv_impact_per_s", "force_loop_gain", "force_loop_integral_gain_per_s", "kv_force_per_s",
                     "kp_moment_rad_s2_per_nm", "ki_moment_rad_s2_per_nm_s", "kv_moment_per_s",
                     "force_error_limit_n", "moment_error_limit_nm", "force_integral_limit_n_s",
                     "moment_integral_limit_nm_s", "friction_compensation_scale",
                     "friction_compensation_velocity_rad_s", "velocity_mode_force_gain_scale",
                     "max_force_n", "max_moment_nm", "reach_margin_m"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"controller option {name} must be finite and >= 0, got {value}")
        for name in ("kp_force_m_s2_per_n", "ki_force_m_s2_per_n_s", "observer_gain_per_s"):
            value = getattr(self, name)
            if value is not None and (not np.isfinite(value) or value < 0):
                raise ValueError(f"controller option {name} must be None or finite and >= 0, got {value}")
        if len(self.motion_axes) != 6:
            raise ValueError("motion_axes needs 6 flags (x, y, z, rx, ry, rz of the tool-tip frame)")
        if self.target_min_z_m is not None and not np.isfinite(self.target_min_z_m):
            raise ValueError(f"target_min_z_m must be None or a finite height in m, got {self.target_min_z_m}")
        if not self.velocity_mode_admittance_mass_kg > 0:
            raise ValueError("velocity_mode_admittance_mass_kg must be > 0")
        if self.friction_velocity_source not in ("measured", "desired", "sum"):
            raise ValueError("friction_velocity_source must be 'measured', 'desired' or 'sum'")
        object.__setattr__(self, "friction_velocity_source", FrictionVelocitySource(self.friction_velocity_source))
        if self.law not in ("operational_space", "projected"):
            raise ValueError(f"law must be 'operational_space' or 'projected', got {self.law!r}")
        object.__setattr__(self, "law", HybridLaw(self.law))
        if self.law is HybridLaw.PROJECTED and self.output_mode is not OutputMode.TORQUE:
            raise ValueError("law='projected' needs output_mode='torque' (it computes joint torques)")
        if self.velocity_integration_base not in ("command", "measured"):
            raise ValueError("velocity_integration_base must be 'command' or 'measured'")
        object.__setattr__(self, "velocity_integration_base", VelocityIntegrationBase(self.velocity_integration_base))
        if not (np.isfinite(self.flexible_compensation_rate_hz) and self.flexible_compensation_rate_hz > 0):
            raise ValueError(f"flexible_compensation_rate_hz must be > 0 Hz, got {self.flexible_compensation_rate_hz}")
        if self.joint_stiffness_nm_per_rad is not None:
            k = np.asarray(self.joint_stiffness_nm_per_rad, float).reshape(-1)
            if k.size == 0 or not np.all(k > 0):
                raise ValueError("joint_stiffness_nm_per_rad must list one stiffness > 0 N m/rad per joint "
                                 f"(inf = rigid), got {self.joint_stiffness_nm_per_rad}")
            object.__setattr__(self, "joint_stiffness_nm_per_rad", tuple(float(v) for v in k))


@dataclass
class ControlCommand:
    """One cycle's output (arrays reused by the next ``step``: copy what you keep).

    ``torque_nm`` is what to send to ``direct_torque`` (robot gravity already subtracted
    when configured); ``joint_torque_nm`` is the full Gamma; ``velocity_rad_s`` is what
    to send to speedJ. ``force_error`` is (f_d - f) at the tool tip in task (tool) axes
    on the force-controlled axes (zero elsewhere and outside the HYBRID stage).
    """

    mode: OutputMode
    torque_nm: np.ndarray
    joint_torque_nm: np.ndarray
    velocity_rad_s: np.ndarray
    joint_acceleration_rad_s2: np.ndarray
    stage: ContactStage
    events: tuple[StageEvent, ...]
    force_error: np.ndarray
    contact_wrench_tip_base: np.ndarray
    position_error_m: np.ndarray
    orientation_error_rad: np.ndarray
    sigma_min: float = 0.0
    singular_weight: float = 0.0
    stopped: bool = False
