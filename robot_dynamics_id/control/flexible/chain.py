"""The compliant serial chain of Bicchi & Melchiorri (seeds.md P4): deflection, base wrench and G.

* :class:`CompliantChain` — every segment is ``rigid joint rotation · joint deflection ·
  fixed link transform · beam deflection``; from DH parameters (:meth:`CompliantChain.from_dh`)
  or a pinocchio model (:meth:`CompliantChain.from_robot_model`, optionally with flexible links).
* :func:`deflect_chain` — the static equilibrium under a sensor wrench, from the sensor back
  to the base (P4, eqs. (17)–(19)): ``ᴮK_E = K₁K₂…K_n``, ``K_i = K_i,kin(q_i) K_i,joint(τ_i) K_i,flex(w_i)``.
* :func:`wrench_jacobian` — ``G = ∂(ᴮK_E ᴱw)/∂q`` as the paper's product (deflections frozen),
  :func:`wrench_jacobian_fd` to check it or to get the full derivative.

Wrench convention (see :mod:`..compliance`): ``[f; m]`` with the moment about the frame
origin; the wrench that loads the arm is the one the ENVIRONMENT applies to the end effector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..compliance import (
    BeamSection,
    beam_compliance_matrix,
    homogeneous,
    rotation_about_axis,
    rotation_from_vector,
    skew,
    wrench_transform,
    wrench_transform_of,
)

if TYPE_CHECKING:  # pinocchio is only needed for UR chains
    from ...robots.model import RobotModel

__all__ = [
    "ChainDeflection",
    "CompliantChain",
    "CompliantSegment",
    "base_wrench_frozen",
    "deflect_chain",
    "wrench_error",
    "wrench_jacobian",
    "wrench_jacobian_fd",
]


def _as_transform(value: np.ndarray, what: str) -> np.ndarray:
    t = np.asarray(value, dtype=float)
    if t.shape != (4, 4) or not np.all(np.isfinite(t)):
        raise ValueError(f"{what} must be a finite 4x4 homogeneous transform, got shape {t.shape}")
    if not np.allclose(t[:3, :3] @ t[:3, :3].T, np.eye(3), atol=1e-8) or not np.allclose(t[3], [0, 0, 0, 1]):
        raise ValueError(f"{what} is not a rigid transform (rotation block must be orthonormal, last row 0 0 0 1)")
    return t


def _as_wrench(value: np.ndarray, what: str) -> np.ndarray:
    w = np.asarray(value, dtype=float).reshape(-1)
    if w.shape != (6,) or not np.all(np.isfinite(w)):
        raise ValueError(f"{what} must be 6 finite numbers [fx fy fz mx my mz] (N, N·m), got {np.asarray(value)!r}")
    return w


@dataclass(frozen=True, kw_only=True)
class CompliantSegment:
    """One revolute joint and the link after it, in a compliant serial chain.

    The transform from the segment's parent frame to its distal frame is
    ``Rot(axis, q) · X`` for the rigid arm (``X = distal_transform``); compliance
    adds a joint deflection ``δ = k_c τ`` about the same axis and, for a flexible
    link, a beam deflection at the distal frame (P4, eqs. (17)–(19)).

    ``beam_rotation`` (3×3, columns = beam x, y, z axes in the distal frame) is
    needed only when the beam axis is not the distal frame's x axis.
    """

    axis: np.ndarray
    distal_transform: np.ndarray
    joint_compliance_rad_per_nm: float = 0.0
    beam: BeamSection | None = None
    beam_rotation: np.ndarray | None = None
    _beam_compliance: np.ndarray | None = field(init=False, repr=False, default=None)
    # Cached constants of the hot loop: axis× and (axis×)², K(X) and K(X)⁻¹.
    _axis_skew: np.ndarray = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    _axis_skew_sq: np.ndarray = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    _k_distal: np.ndarray = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    _k_distal_inv: np.ndarray = field(init=False, repr=False, default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        axis = np.asarray(self.axis, dtype=float).reshape(3)
        if not np.isclose(np.linalg.norm(axis), 1.0, atol=1e-9):
            raise ValueError(f"joint axis must be a unit vector, got {axis}")
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "distal_transform", _as_transform(self.distal_transform, "distal_transform"))
        kc = float(self.joint_compliance_rad_per_nm)
        if not np.isfinite(kc) or kc < 0:
            raise ValueError(
                f"joint compliance must be >= 0 rad/(N·m) (1/stiffness; 0 = rigid), got {kc!r}"
            )
        object.__setattr__(self, "joint_compliance_rad_per_nm", kc)
        if self.beam_rotation is not None:
            rb = np.asarray(self.beam_rotation, dtype=float)
            if rb.shape != (3, 3) or not np.allclose(rb @ rb.T, np.eye(3), atol=1e-8):
                raise ValueError("beam_rotation must be a 3x3 rotation matrix")
            object.__setattr__(self, "beam_rotation", rb)
        if self.beam is not None:
            object.__setattr__(self, "_beam_compliance", beam_compliance_matrix(self.beam))
        k = skew(axis)
        x = self.distal_transform
        object.__setattr__(self, "_axis_skew", k)
        object.__setattr__(self, "_axis_skew_sq", k @ k)
        object.__setattr__(self, "_k_distal", wrench_transform_of(x))
        object.__setattr__(self, "_k_distal_inv",
                           wrench_transform(x[:3, :3].T, -x[:3, :3].T @ x[:3, 3]))

    def axis_rotation(self, angle_rad: float) -> np.ndarray:
        """``Rot(axis, angle)`` (Rodrigues' formula with the cached axis×)."""
        return np.eye(3) + np.sin(angle_rad) * self._axis_skew + (1.0 - np.cos(angle_rad)) * self._axis_skew_sq

    @property
    def beam_compliance(self) -> np.ndarray | None:
        """6×6 beam-tip compliance of P4, eq. (5), or None for a rigid link."""
        return self._beam_compliance


@dataclass(frozen=True, kw_only=True)
class CompliantChain:
    """A serial arm with compliant joints and (optionally) flexible links.

    ``base_transform`` places the first segment's parent frame in the base frame
    B (identity for DH chains); the last segment's distal frame is the sensor
    frame E in which the sensor wrench ``ᴱw`` is expressed.
    """

    segments: tuple[CompliantSegment, ...]
    base_transform: np.ndarray = field(default_factory=lambda: np.eye(4))
    name: str = "chain"

    def __post_init__(self) -> None:
        if len(self.segments) == 0:
            raise ValueError("a CompliantChain needs at least one segment")
        object.__setattr__(self, "segments", tuple(self.segments))
        object.__setattr__(self, "base_transform", _as_transform(self.base_transform, "base_transform"))

    @property
    def n_joints(self) -> int:
        return len(self.segments)

    @property
    def joint_compliance_rad_per_nm(self) -> np.ndarray:
        return np.array([s.joint_compliance_rad_per_nm for s in self.segments])

    @classmethod
    def from_dh(
        cls,
        *,
        a_m: np.ndarray,
        d_m: np.ndarray,
        alpha_rad: np.ndarray,
        joint_stiffness_nm_per_rad: np.ndarray | float | None = None,
        beams: list[BeamSection | None] | None = None,
        name: str = "dh-chain",
    ) -> CompliantChain:
        """A chain in standard DH form: segment i is ``Rz(q_i) Tz(d_i) Tx(a_i) Rx(α_i)``.

        ``joint_stiffness_nm_per_rad`` (scalar or per joint; ``None`` or ``inf`` =
        rigid) gives ``k_c = 1/stiffness``. ``beams[i]`` makes link i a flexible
        beam along the distal frame's x axis (the DH link direction).
        """
        a = np.atleast_1d(np.asarray(a_m, dtype=float))
        n = a.shape[0]
        d = np.broadcast_to(np.asarray(d_m, dtype=float), (n,))
        alpha = np.broadcast_to(np.asarray(alpha_rad, dtype=float), (n,))
        compliance = _compliance_from_stiffness(joint_stiffness_nm_per_rad, n)
        if beams is not None and len(beams) != n:
            raise ValueError(f"beams must list one entry (or None) per link: got {len(beams)} for {n} links")
        z = np.array([0.0, 0.0, 1.0])
        segments = []
        for i in range(n):
            x = (homogeneous(np.eye(3), [0.0, 0.0, d[i]])
                 @ homogeneous(np.eye(3), [a[i], 0.0, 0.0])
                 @ homogeneous(rotation_about_axis(np.array([1.0, 0.0, 0.0]), alpha[i]), np.zeros(3)))
            segments.append(CompliantSegment(
                axis=z, distal_transform=x, joint_compliance_rad_per_nm=compliance[i],
                beam=None if beams is None else beams[i],
            ))
        return cls(segments=tuple(segments), name=name)

    @classmethod
    def from_robot_model(
        cls,
        robot_model: RobotModel,
        joint_stiffness_nm_per_rad: np.ndarray | float | None,
        *,
        sensor_frame: str | None = None,
        link_beams: dict[int, BeamSection] | None = None,
    ) -> CompliantChain:
        """The chain of a pinocchio arm (e.g. ``load_robot('ur3')``) with compliant joints and, optionally, flexible links.

        Segment i is joint i's rotation followed by the fixed placement of joint
        i+1 (of ``sensor_frame``, default the model's tool frame, for the last
        joint). Supports revolute joints about a fixed axis (RX, RY, RZ,
        revolute-unaligned) in a single chain ending at the sensor frame.
        ``link_beams[i]`` (0-based segment index) makes the link of segment i a beam
        (P4, eq. (5)) from joint i's origin straight to the next joint's origin; its
        ``length_m`` must equal that distance.
        """
        model = robot_model.model
        frame_name = sensor_frame or robot_model.tool_frame
        if not model.existFrame(frame_name):
            raise ValueError(f"robot {robot_model.name!r} has no frame {frame_name!r}; pass sensor_frame=...")
        frame = model.frames[model.getFrameId(frame_name)]
        n = model.njoints - 1
        for j in range(1, model.njoints):
            if model.parents[j] != j - 1:
                raise ValueError(f"robot {robot_model.name!r} is not a single serial chain (joint {model.names[j]})")
        if frame.parentJoint != n:
            raise ValueError(f"sensor frame {frame_name!r} must be attached to the last joint {model.names[n]!r}")
        compliance = _compliance_from_stiffness(joint_stiffness_nm_per_rad, n)
        beams = dict(link_beams or {})
        if any(not 0 <= i < n for i in beams):
            raise ValueError(f"link_beams keys must be segment indices 0..{n - 1}, got {sorted(beams)}")
        segments = []
        for j in range(1, n + 1):
            axis = _revolute_axis(model.joints[j], model.names[j])
            if j < n:
                distal = np.asarray(model.jointPlacements[j + 1].homogeneous)
            else:
                distal = np.asarray(frame.placement.homogeneous)
            beam, beam_rotation = beams.get(j - 1), None
            if beam is not None:
                beam_rotation = _beam_axes_in_distal_frame(distal, beam, model.names[j])
            segments.append(CompliantSegment(
                axis=axis, distal_transform=distal, joint_compliance_rad_per_nm=compliance[j - 1],
                beam=beam, beam_rotation=beam_rotation,
            ))
        return cls(
            segments=tuple(segments),
            base_transform=np.asarray(model.jointPlacements[1].homogeneous),
            name=f"{robot_model.name}-compliant-{'joints-and-links' if beams else 'joints'}",
        )

    def rigid(self) -> CompliantChain:
        """The same chain with every joint and link rigid (what a rigid-model controller believes)."""
        return CompliantChain(
            segments=tuple(CompliantSegment(axis=s.axis, distal_transform=s.distal_transform)
                           for s in self.segments),
            base_transform=self.base_transform,
            name=f"{self.name}-rigid",
        )


def _beam_axes_in_distal_frame(distal: np.ndarray, beam: BeamSection, joint_name: str) -> np.ndarray:
    """Beam axes (columns) in the distal frame: x from the segment's joint origin to the distal origin."""
    t = distal[:3, 3]
    length = float(np.linalg.norm(t))
    if abs(length - beam.length_m) > 1e-3:
        raise ValueError(f"the link after joint {joint_name!r} is {length:.5f} m from joint to joint; give its beam "
                         f"that length (got {beam.length_m:.5f} m)")
    x = distal[:3, :3].T @ (t / length)
    helper = np.eye(3)[int(np.argmin(np.abs(x)))]
    y = np.cross(x, helper)
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def _compliance_from_stiffness(stiffness: np.ndarray | float | None, n: int) -> np.ndarray:
    if stiffness is None:
        return np.zeros(n)
    if np.ndim(stiffness) == 0:
        k = np.full(n, float(stiffness))
    else:
        k = np.asarray(stiffness, dtype=float).reshape(-1)
    if k.shape != (n,):
        raise ValueError(f"joint stiffness needs one value per joint ({n}), got {k.shape[0]}")
    if np.any(~(k > 0)):
        raise ValueError(f"joint stiffness must be > 0 N·m/rad (inf = rigid), got {k}")
    return 1.0 / k


def _revolute_axis(joint_model, name: str) -> np.ndarray:
    short = joint_model.shortname()
    fixed = {"JointModelRX": (1.0, 0.0, 0.0), "JointModelRY": (0.0, 1.0, 0.0), "JointModelRZ": (0.0, 0.0, 1.0)}
    if short in fixed:
        return np.array(fixed[short])
    if short == "JointModelRevoluteUnaligned":
        inner = joint_model.extract() if hasattr(joint_model, "extract") else joint_model
        axis = np.asarray(inner.axis, dtype=float)
        return axis / np.linalg.norm(axis)
    raise ValueError(f"joint {name!r} is a {short}; the flexible-arm model supports revolute joints only")


@dataclass(frozen=True)
class ChainDeflection:
    """Static equilibrium of a :class:`CompliantChain` at set-point ``q_rad`` under ``sensor_wrench``.

    ``kinematic_factors[i]`` is ``K_i,kin(q_i)``, ``compliance_factors[i]`` is
    ``K_i,joint(τ_i) K_i,flex(w_i)`` (P4, eq. (17)); ``distal_load_wrenches[i]`` is
    the load at segment i's distal frame, expressed there (``K_{i+1}…K_n ᴱw``).
    """

    q_rad: np.ndarray
    sensor_wrench: np.ndarray
    base_wrench: np.ndarray
    joint_torque_nm: np.ndarray
    joint_deflection_rad: np.ndarray
    #: per link [Δd (m), Δθ (rad)] of the beam tip, in the distal frame
    link_deflection: np.ndarray
    kinematic_factors: np.ndarray
    compliance_factors: np.ndarray
    distal_load_wrenches: np.ndarray
    base_factor: np.ndarray


def _kinematic_factor(segment: CompliantSegment, q: float) -> np.ndarray:
    # K(Rot(axis, q) X) = blockdiag(R_q, R_q) K(X): eqs. (6)-(7) of P4 for the rigid factor.
    r = segment.axis_rotation(q)
    k = segment._k_distal
    out = np.empty((6, 6))
    out[:3] = r @ k[:3]
    out[3:] = r @ k[3:]
    return out


def _kinematic_factor_derivative(segment: CompliantSegment, q: float) -> np.ndarray:
    # d/dq K(Rot(axis,q) X) = blockdiag(R_q ω×, R_q ω×) K(X): the factor P4 puts in T_i (eq. (13) ff.).
    r = segment.axis_rotation(q) @ segment._axis_skew
    k = segment._k_distal
    out = np.empty((6, 6))
    out[:3] = r @ k[:3]
    out[3:] = r @ k[3:]
    return out


def deflect_chain(chain: CompliantChain, q_rad: np.ndarray, sensor_wrench: np.ndarray) -> ChainDeflection:
    """Deflected equilibrium and base wrench ``ᴮw = ᴮK_E ᴱw`` (P4, eqs. (17)–(19)).

    Computed from the sensor back to the base: segment i sees the load
    ``w_i = K_{i+1}…K_n ᴱw`` already carried through the deflected distal chain,
    so its beam bends by ``C w_i`` and its joint turns by ``k_c τ_i`` with
    ``τ_i`` the load's moment about the joint axis. ``τ_i`` does not depend on
    ``δ_i`` itself (a rotation about an axis leaves the moment about that axis
    unchanged), so one backward pass is the exact quasi-static equilibrium of
    this model for a load fixed in the sensor frame.
    """
    q = np.asarray(q_rad, dtype=float).reshape(-1)
    n = chain.n_joints
    if q.shape != (n,) or not np.all(np.isfinite(q)):
        raise ValueError(f"q_rad must hold {n} finite joint angles (rad), got {np.asarray(q_rad)!r}")
    w_e = _as_wrench(sensor_wrench, "sensor_wrench")
    k_kin = np.empty((n, 6, 6))
    k_comp = np.empty((n, 6, 6))
    loads = np.empty((n, 6))
    torque = np.zeros(n)
    deflection = np.zeros(n)
    link_defl = np.zeros((n, 6))
    w = w_e
    for i in range(n - 1, -1, -1):
        seg = chain.segments[i]
        loads[i] = w
        # Link flexibility (eq. (18)): tip pose change under the tip load w_i.
        if seg.beam_compliance is not None:
            rb = seg.beam_rotation
            local = seg.beam_compliance @ (w if rb is None else np.concatenate([rb.T @ w[:3], rb.T @ w[3:]]))
            link_defl[i] = local if rb is None else np.concatenate([rb @ local[:3], rb @ local[3:]])
            k_flex = wrench_transform(rotation_from_vector(link_defl[i, 3:]), link_defl[i, :3])
        else:
            k_flex = np.eye(6)
        w_flexed = k_flex @ w
        # Joint torque: the load's moment about the joint axis, at the joint frame origin (on the axis).
        w_at_joint = seg._k_distal @ w_flexed
        torque[i] = float(seg.axis @ w_at_joint[3:])
        # Joint compliance (eq. (19)): extra rotation k_c τ about the joint axis, i.e.
        # K_joint = K(X⁻¹ Rot(axis, δ) X) = K(X)⁻¹ K(Rot(axis, δ)) K(X).
        deflection[i] = seg.joint_compliance_rad_per_nm * torque[i]
        if deflection[i] != 0.0:
            r_delta = seg.axis_rotation(deflection[i])
            rotated = np.empty((6, 6))
            rotated[:3] = r_delta @ seg._k_distal[:3]
            rotated[3:] = r_delta @ seg._k_distal[3:]
            k_comp[i] = seg._k_distal_inv @ rotated @ k_flex
        else:
            k_comp[i] = k_flex
        k_kin[i] = _kinematic_factor(seg, q[i])
        # K_i = K_i,kin K_i,joint K_i,flex (eq. (17)); carry the load to the parent frame.
        w = k_kin[i] @ (k_comp[i] @ w)
    base = wrench_transform_of(chain.base_transform)
    return ChainDeflection(
        q_rad=q, sensor_wrench=w_e, base_wrench=base @ w, joint_torque_nm=torque,
        joint_deflection_rad=deflection, link_deflection=link_defl, kinematic_factors=k_kin,
        compliance_factors=k_comp, distal_load_wrenches=loads, base_factor=base,
    )


def base_wrench_frozen(chain: CompliantChain, q_rad: np.ndarray, frozen: ChainDeflection) -> np.ndarray:
    """``ᴮK_E(q) ᴱw`` with the deflection factors held at those of ``frozen`` (what P4's G differentiates)."""
    q = np.asarray(q_rad, dtype=float).reshape(-1)
    w = frozen.sensor_wrench
    for i in range(chain.n_joints - 1, -1, -1):
        w = _kinematic_factor(chain.segments[i], q[i]) @ (frozen.compliance_factors[i] @ w)
    return frozen.base_factor @ w


def wrench_jacobian(chain: CompliantChain, state: ChainDeflection) -> np.ndarray:
    """``G = ∂(ᴮK_E ᴱw)/∂q`` (6 × n) as P4 computes it.

    Column i is ``T_i ᴱw`` where ``T_i`` is the chain product ``K₁…K_n`` with
    factor ``K_i,kin`` replaced by ``∂K_i,kin/∂q_i`` (P4, text after eq. (15));
    the joint and link deflection factors are held fixed, i.e. ``ᴱw`` and the
    deflections are taken as constant over the small corrections.
    """
    n = chain.n_joints
    g = np.empty((6, n))
    prefix = state.base_factor.copy()
    for i in range(n):
        seg = chain.segments[i]
        tail = state.compliance_factors[i] @ state.distal_load_wrenches[i]
        g[:, i] = prefix @ (_kinematic_factor_derivative(seg, state.q_rad[i]) @ tail)
        prefix = prefix @ state.kinematic_factors[i] @ state.compliance_factors[i]
    return g


def wrench_jacobian_fd(
    chain: CompliantChain,
    q_rad: np.ndarray,
    sensor_wrench: np.ndarray,
    *,
    frozen_deflection: bool = True,
    step_rad: float = 1e-6,
) -> np.ndarray:
    """Central finite-difference ``∂ᴮw/∂q``.

    ``frozen_deflection=True`` differentiates the same map as :func:`wrench_jacobian`
    (a check of it); ``False`` lets the deflections follow q (the exact
    derivative of the quasi-static model, which P4's G approximates).
    """
    q = np.asarray(q_rad, dtype=float).reshape(-1)
    state = deflect_chain(chain, q, sensor_wrench)
    g = np.empty((6, q.size))
    for i in range(q.size):
        dq = np.zeros(q.size)
        dq[i] = step_rad
        if frozen_deflection:
            plus = base_wrench_frozen(chain, q + dq, state)
            minus = base_wrench_frozen(chain, q - dq, state)
        else:
            plus = deflect_chain(chain, q + dq, sensor_wrench).base_wrench
            minus = deflect_chain(chain, q - dq, sensor_wrench).base_wrench
        g[:, i] = (plus - minus) / (2.0 * step_rad)
    return g


def wrench_error(
    chain: CompliantChain, q_rad: np.ndarray, sensor_wrench: np.ndarray, desired_base_wrench: np.ndarray
) -> np.ndarray:
    """``e = ᴮw_d − ᴮK_E(q) ᴱw`` (P4, eq. (8)) for the deflected chain."""
    return _as_wrench(desired_base_wrench, "desired_base_wrench") - deflect_chain(
        chain, q_rad, sensor_wrench).base_wrench
