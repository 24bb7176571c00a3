"""Descriptions of the Universal Robots arms the package supports.

A :class:`RobotDescription` holds everything the rest of the package needs to
know about one arm: its standard Denavit–Hartenberg (DH) parameters, the mass,
centre of mass and an inertia prior of each link (expressed in the link's DH
frame), the joint names of the official UR ROS 2 driver and per-joint limits.

Sources (see ../shared/reference/ur.md, which quotes each one):

* DH parameters — Universal Robots, "DH parameters for calculations of
  kinematics and dynamics" (UR3, UR3e, UR5, UR10, UR16e); Universal_Robots_ROS2_Description
  ``config/<robot>/default_kinematics.yaml`` (UR5e, UR10e).
* Masses and centres of mass — the same UR page (UR3, UR3e; the CoMs of the
  UR5e and UR10e are also from that page); link masses of UR5, UR5e, UR10,
  UR10e, UR16e from Universal_Robots_ROS2_Description ``physical_parameters.yaml``,
  whose CoMs (URDF link frames) are mapped back to the DH frames as its comments
  state ("model.x - upper_arm_length" etc.) for UR5, UR10 and UR16e.
* Inertia priors — UR publishes none ("negligible"). For the UR3/UR3e the
  cylinder approximations of Universal_Robots_ROS2_Description
  ``physical_parameters.yaml`` are used, mapped onto each link's long axis in
  its DH frame; for UR5e/UR10e a solid cylinder of the link's mass is used.
  These are priors, not truth: identification exists because they are rough.
* Limits — UR data sheets via ur.md (position ±360°, speeds 180°/s or 360°/s,
  UR3 torques 56/56/28/12/12/12 Nm); UR5, UR10, UR16e speeds and torques from
  Universal_Robots_ROS2_Description ``config/<robot>/joint_limits.yaml`` (user
  manuals and UR's "Max. joint torques" article). Rated payloads: data sheets. Acceleration limits are not published;
  the defaults here are conservative choices of this package.

Units: metres, kilograms, kg·m², radians, seconds, newton-metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import pi

import numpy as np

__all__ = [
    "JOINT_NAMES",
    "ROBOT_NAMES",
    "RobotDescription",
    "get_robot",
]

#: Joint names of the official UR ROS 2 driver (ur.md, "Joint names").
JOINT_NAMES: tuple[str, ...] = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)

#: DH link twists α, identical for every UR arm (ur.md, "Kinematics").
_UR_ALPHA = (pi / 2, 0.0, 0.0, pi / 2, -pi / 2, 0.0)

_DEG = pi / 180.0


@dataclass(frozen=True)
class RobotDescription:
    """Kinematic and inertial description of a 6-axis serial arm in standard DH form.

    The DH convention is the standard (distal) one used by Universal Robots:
    ``T_i = Rz(q_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; link ``i`` is rigidly attached
    to DH frame ``i``. All inertial quantities are expressed in that frame.
    """

    name: str
    dh_a_m: np.ndarray
    dh_d_m: np.ndarray
    dh_alpha_rad: np.ndarray
    link_mass_kg: np.ndarray
    #: centre of mass of each link in its DH frame, shape (6, 3)
    link_com_m: np.ndarray
    #: rotational inertia of each link about its CoM, axes of its DH frame, (6, 3, 3)
    link_inertia_kgm2: np.ndarray
    joint_names: tuple[str, ...] = JOINT_NAMES
    position_limit_rad: np.ndarray = field(default_factory=lambda: np.full(6, 2 * pi))
    velocity_limit_rad_s: np.ndarray = field(default_factory=lambda: np.full(6, pi))
    acceleration_limit_rad_s2: np.ndarray = field(default_factory=lambda: np.full(6, 10.0))
    torque_limit_nm: np.ndarray = field(default_factory=lambda: np.full(6, 56.0))
    #: rotor (armature) inertia reflected to the joint side, kg·m²; a prior only
    rotor_inertia_kgm2: np.ndarray = field(default_factory=lambda: np.zeros(6))
    #: controller generation: "cb3" (125 Hz, velocity/position only) or "e-series" (500 Hz)
    generation: str = "cb3"
    payload_kg: float = 3.0

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        for attr, shape in (
            ("dh_a_m", (n,)),
            ("dh_d_m", (n,)),
            ("dh_alpha_rad", (n,)),
            ("link_mass_kg", (n,)),
            ("link_com_m", (n, 3)),
            ("link_inertia_kgm2", (n, 3, 3)),
            ("position_limit_rad", (n,)),
            ("velocity_limit_rad_s", (n,)),
            ("acceleration_limit_rad_s2", (n,)),
            ("torque_limit_nm", (n,)),
            ("rotor_inertia_kgm2", (n,)),
        ):
            value = np.asarray(getattr(self, attr), dtype=float)
            if value.shape != shape:
                raise ValueError(
                    f"RobotDescription {self.name!r}: {attr} has shape {value.shape}, expected {shape}"
                )
            if not np.all(np.isfinite(value)):
                raise ValueError(f"RobotDescription {self.name!r}: {attr} contains NaN or inf")
            value.setflags(write=False)
            object.__setattr__(self, attr, value)
        if np.any(self.link_mass_kg <= 0):
            raise ValueError(f"RobotDescription {self.name!r}: every link mass must be > 0 kg")
        for attr in (
            "position_limit_rad",
            "velocity_limit_rad_s",
            "acceleration_limit_rad_s2",
            "torque_limit_nm",
        ):
            if np.any(getattr(self, attr) <= 0):
                raise ValueError(f"RobotDescription {self.name!r}: every entry of {attr} must be > 0")
        if self.generation not in ("cb3", "e-series"):
            raise ValueError(
                f"RobotDescription {self.name!r}: generation must be 'cb3' or 'e-series', "
                f"got {self.generation!r}"
            )

    @property
    def n_joints(self) -> int:
        """Number of actuated joints."""
        return len(self.joint_names)

    @property
    def control_rate_hz(self) -> float:
        """The controller's RTDE rate: 125 Hz for CB3, 500 Hz for e-Series (ur.md)."""
        return 125.0 if self.generation == "cb3" else 500.0

    def with_tf_prefix(self, tf_prefix: str) -> RobotDescription:
        """Return a copy whose joint names carry ``tf_prefix`` (as the UR driver does)."""
        return replace(self, joint_names=tuple(tf_prefix + j for j in JOINT_NAMES[: self.n_joints]))

    def with_inertials(
        self,
        *,
        link_mass_kg: np.ndarray,
        link_com_m: np.ndarray,
        link_inertia_kgm2: np.ndarray,
        rotor_inertia_kgm2: np.ndarray | None = None,
        name: str | None = None,
    ) -> RobotDescription:
        """Return a copy with other inertial parameters (e.g. identified or perturbed ones)."""
        return replace(
            self,
            name=name or self.name,
            link_mass_kg=np.asarray(link_mass_kg, float),
            link_com_m=np.asarray(link_com_m, float),
            link_inertia_kgm2=np.asarray(link_inertia_kgm2, float),
            rotor_inertia_kgm2=(
                self.rotor_inertia_kgm2 if rotor_inertia_kgm2 is None else np.asarray(rotor_inertia_kgm2, float)
            ),
        )


def _axis_inertia(ixx_transverse: float, izz_axial: float, axis: str) -> np.ndarray:
    """Diagonal inertia of a cylinder whose long axis is ``axis`` ('x', 'y' or 'z')."""
    diag = {"x": (izz_axial, ixx_transverse, ixx_transverse),
            "y": (ixx_transverse, izz_axial, ixx_transverse),
            "z": (ixx_transverse, ixx_transverse, izz_axial)}[axis]
    return np.diag(diag)


def _cylinder(mass_kg: float, radius_m: float, length_m: float, axis: str) -> np.ndarray:
    """Solid cylinder inertia about its CoM."""
    transverse = mass_kg * (3 * radius_m**2 + length_m**2) / 12.0
    axial = mass_kg * radius_m**2 / 2.0
    return _axis_inertia(transverse, axial, axis)


# Long axis of each link expressed in its own DH frame (UR geometry: the shoulder
# body is vertical = y1, upper arm and forearm run along x2, x3, wrists along z).
_LINK_AXES = ("y", "x", "x", "z", "z", "z")

# UR3 cylinder priors (ixx = iyy, izz) from Universal_Robots_ROS2_Description
# physical_parameters.yaml, quoted in ur.md.
_UR3_CYLINDER_PRIORS = (
    (0.0080932, 0.005625),
    (0.0217285, 0.00961875),
    (0.0065468, 0.00354375),
    (0.0016106, 0.00225),
    (0.0015722, 0.00225),
    (0.00013627, 0.0001792),
)

# UR3 / UR3e CoMs in DH frames (UR's published values, ur.md).
_UR3_COM = ((0, -0.02, 0), (0.13, 0, 0.1157), (0.05, 0, 0.0238), (0, 0, 0.01), (0, 0, 0.01), (0, 0, -0.02))
# UR5e / UR10e CoMs in DH frames: UR "DH parameters for calculations of
# kinematics and dynamics" (same page as the UR3 values).
_UR5E_COM = (
    (0.0, -0.02561, 0.00193), (0.2125, 0.0, 0.11336), (0.15, 0.0, 0.0265),
    (0.0, -0.0018, 0.01634), (0.0, 0.0018, 0.01634), (0.0, 0.0, -0.001159),
)
_UR10E_COM = (
    (0.021, -0.027, 0.0), (0.38, 0.0, 0.158), (0.24, 0.0, 0.068),
    (0.0, 0.007, 0.018), (0.0, 0.007, 0.018), (0.0, 0.0, -0.026),
)


def _scaled_cylinders(masses: tuple[float, ...], a: tuple[float, ...], d: tuple[float, ...], radius_m: float):
    lengths = (d[0], abs(a[1]), abs(a[2]), d[3], d[4], d[5])
    return np.array([_cylinder(m, radius_m, L, ax) for m, L, ax in zip(masses, lengths, _LINK_AXES)])


def _ur3() -> RobotDescription:
    a = (0.0, -0.24365, -0.21325, 0.0, 0.0, 0.0)
    d = (0.1519, 0.0, 0.0, 0.11235, 0.08535, 0.0819)
    masses = (2.0, 3.42, 1.26, 0.8, 0.8, 0.35)
    inertia = np.array([_axis_inertia(t, z, ax) for (t, z), ax in zip(_UR3_CYLINDER_PRIORS, _LINK_AXES)])
    return RobotDescription(
        name="ur3",
        dh_a_m=np.array(a), dh_d_m=np.array(d), dh_alpha_rad=np.array(_UR_ALPHA),
        link_mass_kg=np.array(masses), link_com_m=np.array(_UR3_COM), link_inertia_kgm2=inertia,
        position_limit_rad=np.full(6, 2 * pi),
        velocity_limit_rad_s=np.array([180, 180, 180, 360, 360, 360]) * _DEG,
        acceleration_limit_rad_s2=np.array([10.0, 10.0, 10.0, 15.0, 15.0, 15.0]),
        torque_limit_nm=np.array([56.0, 56.0, 28.0, 12.0, 12.0, 12.0]),
        # Reflected rotor inertia prior: not published; order of magnitude of a
        # small motor through a 101:1 strain-wave gear (community value, ur.md).
        rotor_inertia_kgm2=np.array([0.04, 0.04, 0.02, 0.008, 0.008, 0.008]),
        generation="cb3",
        payload_kg=3.0,
    )


def _ur3e() -> RobotDescription:
    a = (0.0, -0.24355, -0.2132, 0.0, 0.0, 0.0)
    d = (0.15185, 0.0, 0.0, 0.13105, 0.08535, 0.0921)
    masses = (1.98, 3.4445, 1.437, 0.871, 0.805, 0.261)
    # Scale the UR3 priors by the mass ratio: same geometry class.
    ur3 = _ur3()
    inertia = ur3.link_inertia_kgm2 * (np.array(masses) / ur3.link_mass_kg)[:, None, None]
    return RobotDescription(
        name="ur3e",
        dh_a_m=np.array(a), dh_d_m=np.array(d), dh_alpha_rad=np.array(_UR_ALPHA),
        link_mass_kg=np.array(masses), link_com_m=np.array(_UR3_COM), link_inertia_kgm2=inertia,
        position_limit_rad=np.full(6, 2 * pi),
        velocity_limit_rad_s=np.array([180, 180, 180, 360, 360, 360]) * _DEG,
        acceleration_limit_rad_s2=np.array([10.0, 10.0, 10.0, 15.0, 15.0, 15.0]),
        torque_limit_nm=np.array([54.0, 54.0, 28.0, 9.0, 9.0, 9.0]),
        rotor_inertia_kgm2=np.array([0.04, 0.04, 0.02, 0.008, 0.008, 0.008]),
        generation="e-series",
        payload_kg=3.0,
    )


def _cylinder_arm(name: str, a, d, masses, com, *, radius_m: float, velocity_deg_s, acceleration_rad_s2: float,
                  torque_nm, rotor_kgm2, generation: str, payload_kg: float) -> RobotDescription:
    """A UR of the larger sizes: published DH, masses and CoMs; solid-cylinder inertia priors of ``radius_m``."""
    return RobotDescription(
        name=name,
        dh_a_m=np.array(a), dh_d_m=np.array(d), dh_alpha_rad=np.array(_UR_ALPHA),
        link_mass_kg=np.array(masses), link_com_m=np.array(com),
        link_inertia_kgm2=_scaled_cylinders(masses, a, d, radius_m),
        position_limit_rad=np.full(6, 2 * pi),
        velocity_limit_rad_s=np.array(velocity_deg_s, float) * _DEG,
        acceleration_limit_rad_s2=np.full(6, acceleration_rad_s2),
        torque_limit_nm=np.array(torque_nm, float),
        rotor_inertia_kgm2=np.array(rotor_kgm2, float),
        generation=generation,
        payload_kg=payload_kg,
    )


_UR5_ROTOR = (0.1, 0.1, 0.06, 0.02, 0.02, 0.02)
_UR10_ROTOR = (0.2, 0.2, 0.1, 0.03, 0.03, 0.03)
_SLOW_BASE_DEG_S = (120, 120, 180, 180, 180, 180)


def _ur5() -> RobotDescription:
    # the UR page gives the UR5 the UR5e's CoMs
    return _cylinder_arm("ur5", (0.0, -0.425, -0.39225, 0.0, 0.0, 0.0), (0.089159, 0.0, 0.0, 0.10915, 0.09465, 0.0823),
                         (3.7, 8.393, 2.33, 1.219, 1.219, 0.1879), _UR5E_COM, radius_m=0.06,
                         velocity_deg_s=(180,) * 6, acceleration_rad_s2=10.0,
                         torque_nm=(150.0, 150.0, 150.0, 28.0, 28.0, 28.0), rotor_kgm2=_UR5_ROTOR, generation="cb3",
                         payload_kg=5.0)


def _ur5e() -> RobotDescription:
    return _cylinder_arm("ur5e", (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0), (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996),
                         (3.761, 8.058, 2.846, 1.37, 1.3, 0.365), _UR5E_COM, radius_m=0.06,
                         velocity_deg_s=(180,) * 6, acceleration_rad_s2=10.0,
                         torque_nm=(150.0, 150.0, 150.0, 28.0, 28.0, 28.0), rotor_kgm2=_UR5_ROTOR,
                         generation="e-series", payload_kg=5.0)


def _ur10() -> RobotDescription:
    com = ((0.021, 0.0, 0.027), (0.38, 0.0, 0.158), (0.24, 0.0, 0.068),
           (0.0, 0.007, 0.018), (0.0, 0.007, 0.018), (0.0, 0.0, -0.026))
    return _cylinder_arm("ur10", (0.0, -0.612, -0.5723, 0.0, 0.0, 0.0), (0.1273, 0.0, 0.0, 0.163941, 0.1157, 0.0922),
                         (7.1, 12.7, 4.27, 2.0, 2.0, 0.365), com, radius_m=0.075, velocity_deg_s=_SLOW_BASE_DEG_S,
                         acceleration_rad_s2=8.0, torque_nm=(330.0, 330.0, 150.0, 56.0, 56.0, 56.0),
                         rotor_kgm2=_UR10_ROTOR, generation="cb3", payload_kg=10.0)


def _ur10e() -> RobotDescription:
    return _cylinder_arm("ur10e", (0.0, -0.6127, -0.57155, 0.0, 0.0, 0.0),
                         (0.1807, 0.0, 0.0, 0.17415, 0.11985, 0.11655), (7.369, 13.051, 3.989, 2.1, 1.98, 0.615),
                         _UR10E_COM, radius_m=0.075, velocity_deg_s=_SLOW_BASE_DEG_S, acceleration_rad_s2=8.0,
                         torque_nm=(330.0, 330.0, 150.0, 56.0, 56.0, 56.0), rotor_kgm2=_UR10_ROTOR,
                         generation="e-series", payload_kg=12.5)


def _ur16e() -> RobotDescription:
    com = ((0.0, -0.016, 0.030), (0.302, 0.0, 0.160), (0.194, 0.0, 0.065),
           (0.0, -0.009, 0.011), (0.0, 0.018, 0.012), (0.0, 0.0, -0.044))
    return _cylinder_arm("ur16e", (0.0, -0.4784, -0.36, 0.0, 0.0, 0.0), (0.1807, 0.0, 0.0, 0.17415, 0.11985, 0.11655),
                         (7.369, 10.45, 4.321, 2.18, 2.033, 0.907), com, radius_m=0.075,
                         velocity_deg_s=_SLOW_BASE_DEG_S, acceleration_rad_s2=8.0,
                         torque_nm=(330.0, 330.0, 150.0, 54.0, 54.0, 54.0), rotor_kgm2=_UR10_ROTOR,
                         generation="e-series", payload_kg=16.0)


_FACTORIES = {"ur3": _ur3, "ur3e": _ur3e, "ur5": _ur5, "ur5e": _ur5e, "ur10": _ur10, "ur10e": _ur10e,
              "ur16e": _ur16e}

#: Robot names accepted wherever a robot is named.
ROBOT_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def get_robot(name: str) -> RobotDescription:
    """Return the nominal description of a UR arm by name (:data:`ROBOT_NAMES`).

    Raises ``ValueError`` naming the accepted names for anything else.
    """
    key = str(name).strip().lower()
    if key not in _FACTORIES:
        raise ValueError(
            f"unknown robot {name!r}: choose one of {', '.join(ROBOT_NAMES)} "
            "or pass the path of a URDF file"
        )
    return _FACTORIES[key]()
