"""Contact scenes for the simulated arm: a tool at the flange, a rigid curved surface, a moving base.

Built for the force controller's simulated polishing task (seeds.md P2: polishing
an aircraft canopy while a person moves the mobile base). The controller is not
told the surface's shape; it only sees the F/T sensor and the joint data.

* :class:`Tool` — a cylinder of ``length_m`` along tool0 z ending in a ball of
  ``tip_radius_m`` (the ball's centre is at ``length_m`` on the z axis, so the tip
  point is at ``length_m + tip_radius_m``). The F/T sensor sits between flange and tool.
  With a :class:`CompliantPad` (``Tool(pad=CompliantPad())``) the ball is a polishing pad
  on a prismatic spring-damper along tool0 z (seeds.md P2: motion is controlled at the
  stiff sensor frame, force at the compliant tool tip): a real pad's foam compliance,
  a few kN/m, in series with the surface contact.
* :class:`CurvedSurface` — a rigid convex surface fixed in the world: a large
  horizontal cylinder section (``kind="cylinder"``: a capsule whose axis is
  ``axis``; the ends lie far away) or a spherical bump (``kind="sphere"``), or a
  flat table (``kind="plane"``). Sphere–capsule and sphere–sphere contacts are
  analytic in MuJoCo, so the contact normal is smooth.
* :class:`ContactModel` — MuJoCo contact parameters, tuned stiff but not rigid
  (like a firm polishing pad): ``solref = (0.05 s, 1.0)``, ``solimp = (0.9, 0.95,
  1 mm)``. Measured with the UR3 pressing the tool on a 0.8 m cylinder in torque
  mode (test/sim/test_plant.py): 10 N penetrates 0.075 mm and 30 N 0.2 mm (an
  effective ~1.4e5 N/m), the settled force's standard deviation is < 0.02 N at
  500 Hz and at 125 Hz (no chatter), and a 3 mm fall onto the surface under 10 N
  peaks at ~25 N. A near-rigid setting (direct solref (-2e5, -1500), impedance
  0.99: < 1 µm at 10 N) gave impact peaks up to ~600 N, so it is not the default.
  ``cone`` selects MuJoCo's friction cone (``"pyramidal"``, MuJoCo's default, or
  ``"elliptic"``: no pyramid-edge coupling of normal and friction forces while sliding).
  :data:`POLISHING_PAD_CONTACT` is the setting of the polishing task (pad on a painted
  panel with polishing compound): elliptic cone, friction 0.15, a contact stiff compared
  with the pad.
* :class:`SinusoidalBaseMotion` — a slow kinematic base displacement (a few cm at
  0.1–0.3 Hz, like the person pushing the mobile base in P2); any callable
  ``t_s -> (3,) displacement_m`` works as ``Scene.base_motion``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["POLISHING_PAD_CONTACT", "CompliantPad", "ContactModel", "CurvedSurface", "Scene", "SinusoidalBaseMotion",
           "Tool", "polishing_scene"]


def _f(values) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.ravel(values))


@dataclass(frozen=True)
class ContactModel:
    """MuJoCo contact softness (solref time constant and damping ratio, solimp) and friction."""

    solref_timeconst_s: float = 0.05
    solref_dampratio: float = 1.0
    #: solimp (dmin, dmax, width_m, midpoint, power): impedance 0.9 at touch, 0.95 from 1 mm depth
    solimp: tuple[float, ...] = (0.9, 0.95, 0.001, 0.5, 2.0)
    #: sliding friction coefficient between tool tip and surface (a polishing pad on paint)
    sliding_friction: float = 0.3
    #: MuJoCo friction cone: "pyramidal" (MuJoCo's default) or "elliptic" (a model-wide option)
    cone: str = "pyramidal"

    def __post_init__(self) -> None:
        if self.solref_timeconst_s <= 0 or self.solref_dampratio <= 0:
            raise ValueError("contact solref time constant and damping ratio must be > 0")
        if self.cone not in ("pyramidal", "elliptic"):
            raise ValueError(f"contact cone must be 'pyramidal' or 'elliptic', got {self.cone!r}")
        if self.sliding_friction < 0:
            raise ValueError("sliding_friction must be >= 0")
        if len(self.solimp) != 5 or not all(0 < v < 1 for v in self.solimp[:2]):
            raise ValueError("solimp needs 5 values with 0 < dmin, dmax < 1")

    def attributes(self) -> str:
        """XML attributes for a geom taking part in the contact."""
        return (f'solref="{self.solref_timeconst_s:.17g} {self.solref_dampratio:.17g}" '
                f'solimp="{_f(self.solimp)}" friction="{self.sliding_friction:.17g} 0.005 0.0001" '
                'condim="3"')


#: The polishing task's contact (pad on a painted panel with compound): elliptic friction cone,
#: friction 0.15, and a contact time constant of 10 ms. MuJoCo's soft contact is
#: mass-normalised: on the 0.05 kg pad, pressed by the UR3 on the 0.8 m cylinder, 10.5 N
#: penetrates 0.56 mm and 16 N 0.71 mm (incrementally ~40 kN/m, over ten times the pad's
#: 3 kN/m). A 4 ms time constant was stiffer (0.15 mm at 11.8 N) but the light pad then lost
#: contact for single 0.5 ms substeps while sliding (micro-bounces: true force 0 for one
#: sample); 20 ms let the force ripple grow.
POLISHING_PAD_CONTACT = ContactModel(solref_timeconst_s=0.01, solref_dampratio=1.0, sliding_friction=0.15,
                                     cone="elliptic")


@dataclass(frozen=True)
class CompliantPad:
    """A polishing pad: the tool's ball tip on a prismatic spring-damper along tool0 z.

    The pad body (``mass_kg``, the ball of the tool) slides along the tool axis against a
    linear spring ``stiffness_n_per_m`` and damper ``damping_n_s_per_m`` (foam: a few kN/m,
    lossy), from its rest position (the rigid tool's ball position) up to ``travel_m`` of
    compression (then a hard stop). 10 N compresses the default pad 3.3 mm. The F/T sensor
    (between flange and tool) reads the spring + damper force plus the pad's inertia.
    """

    stiffness_n_per_m: float = 3000.0
    damping_n_s_per_m: float = 25.0
    mass_kg: float = 0.05
    travel_m: float = 0.015

    def __post_init__(self) -> None:
        if self.stiffness_n_per_m <= 0 or self.damping_n_s_per_m < 0 or self.mass_kg <= 0 or self.travel_m <= 0:
            raise ValueError("pad stiffness, mass and travel must be > 0 and damping >= 0")

    def describe(self) -> str:
        """One line with the pad's parameters (for benchmark output)."""
        return (f"compliant pad k = {self.stiffness_n_per_m:.0f} N/m, c = {self.damping_n_s_per_m:.0f} N s/m, "
                f"m = {self.mass_kg * 1e3:.0f} g, travel {self.travel_m * 1e3:.0f} mm")


@dataclass(frozen=True)
class Tool:
    """A tool at the flange: a shaft along tool0 z with a ball tip; mass spread over the shaft.

    Rigid by default; with ``pad`` the ball is a compliant pad (:class:`CompliantPad`) whose
    mass comes on top of ``mass_kg`` (the shaft).
    """

    length_m: float = 0.10
    tip_radius_m: float = 0.01
    shaft_radius_m: float = 0.015
    mass_kg: float = 0.3
    pad: CompliantPad | None = None

    def __post_init__(self) -> None:
        if self.length_m <= 0 or self.tip_radius_m <= 0 or self.shaft_radius_m <= 0 or self.mass_kg <= 0:
            raise ValueError("tool length, radii and mass must all be > 0")

    @property
    def tip_centre_tool0_m(self) -> np.ndarray:
        """Centre of the ball tip in the tool0 frame, m."""
        return np.array([0.0, 0.0, self.length_m])

    @property
    def tip_point_tool0_m(self) -> np.ndarray:
        """The outermost point of the ball along tool0 z (the nominal TCP), m."""
        return np.array([0.0, 0.0, self.length_m + self.tip_radius_m])

    def rigid_inertial(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(mass, CoM in tool0, inertia about the CoM) of the part welded to the flange: a solid
        cylinder from the flange to the ball (the ball itself when there is no pad)."""
        m, r, h = self.mass_kg, self.shaft_radius_m, self.length_m
        transverse = m * (3 * r * r + h * h) / 12.0
        return m, np.array([0.0, 0.0, h / 2]), np.diag([transverse, transverse, m * r * r / 2])

    def inertial(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(mass, CoM in tool0, inertia about the CoM) of the whole tool, the pad at rest
        (what a user enters as the payload)."""
        m, c, i = self.rigid_inertial()
        if self.pad is None:
            return m, c, i
        mp = self.pad.mass_kg
        cp = self.tip_centre_tool0_m
        ip = np.eye(3) * 0.4 * mp * self.tip_radius_m**2
        mass = m + mp
        com = (m * c + mp * cp) / mass
        inertia = np.zeros((3, 3))
        for mk, ck, ik in ((m, c, i), (mp, cp, ip)):
            d = ck - com
            inertia += ik + mk * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
        return mass, com, inertia

    def geoms_xml(self, contact: ContactModel) -> list[str]:
        """MJCF lines inside the end-effector body (tool0 frame): the shaft, and the ball, which
        with a pad sits in its own body ``tool_pad`` on the slide joint ``tool_pad_slide``."""
        # The shaft is visual/inertial only (contype 0) so only the ball touches the surface.
        shaft = (f'<geom name="tool_shaft" type="cylinder" fromto="0 0 0 0 0 {self.length_m:.17g}" '
                 f'size="{self.shaft_radius_m:.17g}" contype="0" conaffinity="0" mass="0"/>')
        ball = (f'size="{self.tip_radius_m:.17g}" contype="1" conaffinity="1" mass="0" {contact.attributes()}/>')
        if self.pad is None:
            return [shaft, f'<geom name="tool_tip" type="sphere" pos="{_f(self.tip_centre_tool0_m)}" ' + ball]
        pad = self.pad
        inertia = 0.4 * pad.mass_kg * self.tip_radius_m**2
        # Slide joint along tool0 z: q < 0 compresses the pad (towards the flange); a hard stop
        # at travel_m of compression and 1 mm of extension. Spring and damper are the joint's own
        # (MuJoCo integrates the damping implicitly with the Euler integrator).
        return [
            shaft,
            f'<body name="tool_pad" pos="{_f(self.tip_centre_tool0_m)}">',
            f'  <inertial pos="0 0 0" mass="{pad.mass_kg:.17g}" diaginertia="{_f([inertia] * 3)}"/>',
            f'  <joint name="tool_pad_slide" type="slide" axis="0 0 1" range="{-pad.travel_m:.17g} 0.001" '
            f'limited="true" stiffness="{pad.stiffness_n_per_m:.17g}" springref="0" '
            f'damping="{pad.damping_n_s_per_m:.17g}" armature="0"/>',
            '  <geom name="tool_tip" type="sphere" pos="0 0 0" ' + ball,
            '</body>',
        ]


@dataclass(frozen=True)
class CurvedSurface:
    """A rigid surface fixed in the world (unknown to the controller).

    ``kind="cylinder"``: a horizontal cylinder of ``radius_m`` whose axis passes through
    ``centre_m`` along ``axis`` (unit vector, default world y) and spans ``half_length_m``
    either side. ``kind="sphere"``: a sphere of ``radius_m`` at ``centre_m``. ``kind="plane"``:
    the horizontal plane z = ``centre_m[2]``. The top of the cylinder/sphere is at
    ``centre_m[2] + radius_m``.
    """

    kind: str = "cylinder"
    centre_m: tuple[float, float, float] = (0.30, 0.0, -0.80)
    radius_m: float = 0.80
    axis: tuple[float, float, float] = (0.0, 1.0, 0.0)
    half_length_m: float = 2.0

    def __post_init__(self) -> None:
        if self.kind not in ("cylinder", "sphere", "plane"):
            raise ValueError(f"surface kind must be 'cylinder', 'sphere' or 'plane', got {self.kind!r}")
        if self.kind != "plane" and self.radius_m <= 0:
            raise ValueError("surface radius_m must be > 0")
        if np.linalg.norm(self.axis) == 0:
            raise ValueError("surface axis must be a non-zero vector")

    def geom_xml(self, contact: ContactModel) -> str:
        c = np.asarray(self.centre_m, float)
        if self.kind == "plane":
            return (f'<geom name="surface" type="plane" pos="{_f(c)}" size="5 5 0.1" '
                    f'contype="1" conaffinity="1" {contact.attributes()}/>')
        if self.kind == "sphere":
            return (f'<geom name="surface" type="sphere" pos="{_f(c)}" size="{self.radius_m:.17g}" '
                    f'contype="1" conaffinity="1" {contact.attributes()}/>')
        a = np.asarray(self.axis, float) / np.linalg.norm(self.axis)
        p0, p1 = c - a * self.half_length_m, c + a * self.half_length_m
        return (f'<geom name="surface" type="capsule" fromto="{_f(np.concatenate([p0, p1]))}" '
                f'size="{self.radius_m:.17g}" contype="1" conaffinity="1" {contact.attributes()}/>')

    def signed_distance_m(self, point_world_m) -> float:
        """Distance of a world point from the surface, m: > 0 outside (above), < 0 inside."""
        p = np.asarray(point_world_m, float)
        c = np.asarray(self.centre_m, float)
        if self.kind == "plane":
            return float(p[2] - c[2])
        rel = p - c
        if self.kind == "cylinder":
            a = np.asarray(self.axis, float) / np.linalg.norm(self.axis)
            along = float(np.clip(rel @ a, -self.half_length_m, self.half_length_m))
            rel = rel - along * a
        return float(np.linalg.norm(rel) - self.radius_m)

    def normal_world(self, point_world_m) -> np.ndarray:
        """Outward unit normal of the surface at (the projection of) a world point."""
        p = np.asarray(point_world_m, float)
        c = np.asarray(self.centre_m, float)
        if self.kind == "plane":
            return np.array([0.0, 0.0, 1.0])
        rel = p - c
        if self.kind == "cylinder":
            a = np.asarray(self.axis, float) / np.linalg.norm(self.axis)
            rel = rel - float(np.clip(rel @ a, -self.half_length_m, self.half_length_m)) * a
        return rel / np.linalg.norm(rel)

    def height_m(self, x_m: float, y_m: float) -> float:
        """Height of the (upper) surface above the world point (x, y); -inf where there is none."""
        c = np.asarray(self.centre_m, float)
        if self.kind == "plane":
            return float(c[2])
        if self.kind == "sphere":
            d2 = (x_m - c[0]) ** 2 + (y_m - c[1]) ** 2
        else:
            a = np.asarray(self.axis, float) / np.linalg.norm(self.axis)
            if abs(a[2]) > 1e-12:
                raise ValueError("height_m needs a horizontal cylinder axis")
            rel = np.array([x_m - c[0], y_m - c[1], 0.0])
            d2 = float(rel @ rel - (rel @ a) ** 2)
        if d2 > self.radius_m ** 2:
            return float("-inf")
        return float(c[2] + np.sqrt(self.radius_m ** 2 - d2))


@dataclass(frozen=True)
class SinusoidalBaseMotion:
    """Base displacement ``amplitude_m * sin(2π f t + phase)`` per world axis (m)."""

    amplitude_m: tuple[float, float, float] = (0.03, 0.02, 0.0)
    frequency_hz: tuple[float, float, float] = (0.2, 0.13, 0.0)
    phase_rad: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __call__(self, t_s: float) -> np.ndarray:
        a, f, p = (np.asarray(v, float) for v in (self.amplitude_m, self.frequency_hz, self.phase_rad))
        return a * np.sin(2 * np.pi * f * t_s + p)


@dataclass(frozen=True)
class Scene:
    """What surrounds the arm: optional tool, surface, contact parameters and base motion."""

    tool: Tool | None = None
    surface: CurvedSurface | None = None
    contact: ContactModel = field(default_factory=ContactModel)
    #: ``t_s -> displacement (3,)`` of the base in the world, m; None = fixed base
    base_motion: Callable[[float], np.ndarray] | None = None


def polishing_scene(
    *,
    surface_kind: str = "cylinder",
    surface_top_m: tuple[float, float, float] = (0.30, 0.0, 0.0),
    surface_radius_m: float = 0.8,
    tool: Tool | None = None,
    base_motion: Callable[[float], np.ndarray] | None = None,
) -> Scene:
    """A ready polishing scene: tool + curved surface whose highest point is ``surface_top_m``.

    The default puts the crest of a 0.8 m-radius horizontal cylinder (axis along y) at
    x = 0.30 m, z = 0 in the base frame — in front of and level with the UR3's base.
    """
    top = np.asarray(surface_top_m, float)
    centre = top - np.array([0.0, 0.0, surface_radius_m]) if surface_kind != "plane" else top
    return Scene(
        tool=tool or Tool(),
        surface=CurvedSurface(kind=surface_kind, centre_m=tuple(centre), radius_m=surface_radius_m),
        base_motion=base_motion,
    )
