"""Compliance building blocks for quasi-static flexible-arm models (Bicchi & Melchiorri, seeds.md P4).

What this module holds, each as a plain function over numpy arrays:

* the 6×6 wrench transform ``K = [[R, 0], [P× R, R]]`` that re-expresses a
  wrench given in a child frame in its parent frame (P4, eqs. (6)–(7));
* the 6×6 compliance of a slender cantilever beam (P4, eq. (5)): axial,
  bending, bending–rotation coupling, bending rotation and torsion terms;
* the small rigid transform of a beam tip deflected under a tip load
  (translation Δd, rotation about Δθ by |Δθ|; P4, eqs. (17)–(18));
* the transform of a compliant revolute joint (P4, eq. (19)).

Conventions used throughout the flexible-arm code:

* A wrench is ``[f_x, f_y, f_z, m_x, m_y, m_z]`` (N, N·m), the moment taken
  about the origin of the frame it is expressed in.
* The wrench that deforms the arm is the LOAD the environment applies to the
  end effector (what a wrist force/torque sensor reports as the external
  wrench on the robot). A joint then deflects by ``k_c τ`` in the sense of the
  load's moment ``τ`` about its axis, and a beam bends in the direction of the
  load. If you hold the wrench the robot exerts on the environment, negate it.
* Transforms are 4×4 homogeneous matrices ``[[R, p], [0, 1]]`` (metres).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import pi

import numpy as np

__all__ = [
    "BeamSection",
    "beam_compliance_matrix",
    "beam_deflection_transform",
    "homogeneous",
    "joint_deflection_transform",
    "planar_joint_deflection_transform",
    "rotation_about_axis",
    "rotation_from_vector",
    "skew",
    "wrench_transform",
    "wrench_transform_of",
]


def skew(vector: np.ndarray) -> np.ndarray:
    """The 3×3 matrix ``v×`` with ``skew(v) @ u == cross(v, u)``."""
    x, y, z = np.asarray(vector, dtype=float).reshape(3)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_about_axis(axis: np.ndarray, angle_rad: float) -> np.ndarray:
    """Rotation matrix about a unit ``axis`` by ``angle_rad`` (Rodrigues' formula)."""
    a = np.asarray(axis, dtype=float).reshape(3)
    norm = np.linalg.norm(a)
    if abs(norm - 1.0) > 1e-9:
        raise ValueError(f"rotation axis must be a unit vector, got norm {norm:g}")
    k = skew(a)
    return np.eye(3) + np.sin(angle_rad) * k + (1.0 - np.cos(angle_rad)) * (k @ k)


def rotation_from_vector(rotation_vector_rad: np.ndarray) -> np.ndarray:
    """Rotation about ``v/|v|`` by ``|v|`` (identity for v = 0): how P4 turns a beam's Δθ into a rotation."""
    v = np.asarray(rotation_vector_rad, dtype=float).reshape(3)
    angle = float(np.linalg.norm(v))
    if angle < 1e-300:
        return np.eye(3)
    k = skew(v / angle)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def homogeneous(rotation: np.ndarray, translation_m: np.ndarray) -> np.ndarray:
    """The 4×4 transform ``[[R, p], [0, 1]]``."""
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = np.asarray(translation_m, dtype=float).reshape(3)
    return t


def wrench_transform(rotation: np.ndarray, translation_m: np.ndarray) -> np.ndarray:
    """6×6 ``K = [[R, 0], [P× R, R]]`` mapping a child-frame wrench into the parent frame.

    Bicchi & Melchiorri P4, eqs. (6)–(7): ``ᴮw = ᴮK_E ᴱw`` where ``(R, P)`` is the
    pose of the child frame in the parent; the moment is moved to the parent's
    origin by the ``P× R f`` term. ``K(T₁T₂) = K(T₁) K(T₂)``, so chains multiply.
    """
    r = np.asarray(rotation, dtype=float)
    k = np.zeros((6, 6))
    k[:3, :3] = r
    k[3:, 3:] = r
    k[3:, :3] = skew(translation_m) @ r
    return k


def wrench_transform_of(transform: np.ndarray) -> np.ndarray:
    """:func:`wrench_transform` of a 4×4 homogeneous transform."""
    return wrench_transform(transform[:3, :3], transform[:3, 3])


@dataclass(frozen=True, kw_only=True)
class BeamSection:
    """A slender straight beam (one flexible link) for the compliance of P4, eq. (5).

    The beam axis is the local x axis; ``second_moment_y_m4`` / ``second_moment_z_m4``
    are the area moments for bending about local y / z, ``polar_moment_m4`` the
    torsion constant. Units: m, m², m⁴, Pa.
    """

    length_m: float
    youngs_modulus_pa: float
    shear_modulus_pa: float
    area_m2: float
    second_moment_y_m4: float
    second_moment_z_m4: float
    polar_moment_m4: float

    def __post_init__(self) -> None:
        for name in ("length_m", "youngs_modulus_pa", "shear_modulus_pa", "area_m2",
                     "second_moment_y_m4", "second_moment_z_m4", "polar_moment_m4"):
            value = float(getattr(self, name))
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"BeamSection.{name} must be a positive finite number, got {value!r}")
            object.__setattr__(self, name, value)

    @classmethod
    def circular(
        cls,
        *,
        length_m: float,
        radius_m: float,
        youngs_modulus_pa: float = 210e9,
        shear_modulus_pa: float = 80e9,
    ) -> BeamSection:
        """A solid circular section (steel by default: E = 210 GPa, G = 80 GPa as in P4's examples).

        ``A = π r²``, ``J = π r⁴ / 4`` about either diameter, ``J₀ = π r⁴ / 2``.
        """
        if radius_m <= 0:
            raise ValueError(f"beam radius must be > 0 m, got {radius_m!r}")
        j = pi * radius_m**4 / 4.0
        return cls(
            length_m=length_m,
            youngs_modulus_pa=youngs_modulus_pa,
            shear_modulus_pa=shear_modulus_pa,
            area_m2=pi * radius_m**2,
            second_moment_y_m4=j,
            second_moment_z_m4=j,
            polar_moment_m4=2.0 * j,
        )


    @classmethod
    def tube(cls, *, length_m: float, outer_diameter_m: float, wall_m: float, youngs_modulus_pa: float = 69e9,
             shear_modulus_pa: float = 26e9) -> BeamSection:
        """A circular tube (aluminium by default: E = 69 GPa, G = 26 GPa).

        ``A = π (R² − r²)``, ``J = π (R⁴ − r⁴) / 4`` about either diameter, ``J₀ = 2 J``.
        """
        outer = outer_diameter_m / 2.0
        inner = outer - wall_m
        if not (outer > 0 and 0 < wall_m <= outer):
            raise ValueError(f"tube needs outer diameter > 0 and 0 < wall <= radius, got {outer_diameter_m!r}, "
                             f"{wall_m!r} m")
        j = pi * (outer**4 - inner**4) / 4.0
        return cls(length_m=length_m, youngs_modulus_pa=youngs_modulus_pa, shear_modulus_pa=shear_modulus_pa,
                   area_m2=pi * (outer**2 - inner**2), second_moment_y_m4=j, second_moment_z_m4=j,
                   polar_moment_m4=2.0 * j)


def beam_compliance_matrix(section: BeamSection) -> np.ndarray:
    """6×6 cantilever compliance ``[Δd; Δθ] = C [f; m]`` at the beam tip, in beam axes.

    Bicchi & Melchiorri P4, eq. (5) (Euler–Bernoulli cantilever, load at the free
    end, moment about the tip): axial ``L/(EA)``; bending ``L³/(3EJ)``;
    displacement–rotation coupling ``±L²/(2EJ)``; bending rotation ``L/(EJ)``;
    torsion ``L/(G J₀)``. The signs follow right-handed axes: a tip force along
    +y turns the tip about +z, a tip force along +z turns it about −y.
    """
    s = section
    length, e = s.length_m, s.youngs_modulus_pa
    c = np.zeros((6, 6))
    c[0, 0] = length / (e * s.area_m2)
    # bending in the x–y plane (about local z)
    c[1, 1] = length**3 / (3.0 * e * s.second_moment_z_m4)
    c[1, 5] = c[5, 1] = length**2 / (2.0 * e * s.second_moment_z_m4)
    c[5, 5] = length / (e * s.second_moment_z_m4)
    # bending in the x–z plane (about local y)
    c[2, 2] = length**3 / (3.0 * e * s.second_moment_y_m4)
    c[2, 4] = c[4, 2] = -(length**2) / (2.0 * e * s.second_moment_y_m4)
    c[4, 4] = length / (e * s.second_moment_y_m4)
    # torsion
    c[3, 3] = length / (s.shear_modulus_pa * s.polar_moment_m4)
    return c


def beam_deflection_transform(
    compliance: np.ndarray, tip_load_wrench: np.ndarray, beam_rotation: np.ndarray | None = None
) -> np.ndarray:
    """4×4 transform of the deflected beam tip relative to the undeflected tip frame.

    ``(Δd, Δθ) = C w`` with ``C`` from :func:`beam_compliance_matrix` (beam axes);
    the tip moves by ``Δd`` and turns about ``Δθ/|Δθ|`` by ``|Δθ|`` (P4, link
    flexibility of eqs. (17)–(18)). ``beam_rotation`` (3×3, columns = beam x, y, z
    axes in the tip frame) maps between the tip frame and the beam axes when they
    differ; ``None`` means they coincide.
    """
    w = np.asarray(tip_load_wrench, dtype=float).reshape(6)
    if beam_rotation is None:
        dd_dtheta = compliance @ w
    else:
        rb = np.asarray(beam_rotation, dtype=float)
        local = compliance @ np.concatenate([rb.T @ w[:3], rb.T @ w[3:]])
        dd_dtheta = np.concatenate([rb @ local[:3], rb @ local[3:]])
    return homogeneous(rotation_from_vector(dd_dtheta[3:]), dd_dtheta[:3])


def planar_joint_deflection_transform(link_length_m: float, deflection_rad: float) -> np.ndarray:
    """Compliant-joint transform in the distal DH frame of a planar link (P4, eq. (19)).

    ``R_joint = Rot(z, k_c τ)``, ``P_joint = [−a(1 − cos k_c τ), a sin k_c τ, 0]``
    with ``deflection_rad = k_c τ`` and ``a`` the link length: the link of length
    ``a`` swings about its joint axis, which lies a distance ``a`` behind the
    frame along −x.
    """
    a, d = float(link_length_m), float(deflection_rad)
    return homogeneous(rotation_about_axis(np.array([0.0, 0.0, 1.0]), d),
                       np.array([-a * (1.0 - np.cos(d)), a * np.sin(d), 0.0]))


def joint_deflection_transform(
    axis: np.ndarray, deflection_rad: float, distal_transform: np.ndarray
) -> np.ndarray:
    """General compliant-joint transform ``X⁻¹ Rot(axis, δ) X`` in the distal frame.

    ``X`` is the fixed transform from the joint frame (after the joint rotation)
    to the distal frame of the link. For a planar DH link (``X = Tx(a)``, axis z)
    this is exactly P4, eq. (19) (:func:`planar_joint_deflection_transform`);
    for the non-planar links of a UR arm it is the same idea: the commanded angle
    plus the deflection ``δ = k_c τ``, written as a factor after the rigid one.
    """
    x = np.asarray(distal_transform, dtype=float)
    rot = homogeneous(rotation_about_axis(axis, deflection_rad), np.zeros(3))
    x_inv = homogeneous(x[:3, :3].T, -x[:3, :3].T @ x[:3, 3])
    return x_inv @ rot @ x
