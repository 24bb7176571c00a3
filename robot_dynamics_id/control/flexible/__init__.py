"""Quasi-static compensation of force errors for flexible arms (Bicchi & Melchiorri, seeds.md P4).

Why: a force controller regulates the wrench its wrist sensor reads. It is told
what to regulate by mapping the world-frame set-point ``ᴮw_d`` into the sensor
frame through the RIGID kinematics. When joints (strain-wave gears) and links
deflect under that load, the sensor frame is not where the rigid model puts it,
so the world-frame wrench ``ᴮw`` misses ``ᴮw_d``. P4 corrects the joint
set-points offline so the deflected arm applies the right world-frame wrench.

What is here:

* :class:`CompliantChain` — a serial chain whose every segment is ``rigid joint
  rotation · joint deflection · fixed link transform · beam deflection``;
  built from DH parameters (:meth:`CompliantChain.from_dh`, the planar arms of
  P4 via :func:`paper_planar_arm`) or from a pinocchio model
  (:meth:`CompliantChain.from_robot_model`, the UR arms).
* :func:`deflect_chain` — the static equilibrium of the chain under a sensor
  wrench, computed from the sensor back to the base (P4, eqs. (17)–(19)):
  ``ᴮK_E = K₁K₂…K_n``, ``K_i = K_i,kin(q_i) K_i,joint(τ_i) K_i,flex(w_i)``.
* :func:`wrench_jacobian` — ``G = ∂(ᴮK_E ᴱw)/∂q`` as the paper's product
  (column i: factor i replaced by ``∂K_i,kin/∂q_i``; deflections frozen), and
  :func:`wrench_jacobian_fd` to check it (frozen) or to get the full derivative.
* :func:`compensate_steepest_descent` — the paper's Lyapunov law
  ``q̇ = λ Gᵀ P e`` (eq. (13)) in its discrete form with the optimal step
  ``λ_n`` and the limiting diagonal ``S_n`` (eq. (15)).
* :func:`compensate_levenberg_marquardt` — a faster Gauss–Newton /
  Levenberg–Marquardt solver on the same error and stopping rule.
* :func:`ur_force_setpoint_correction` — the same on a UR arm with compliant
  joints (pinocchio kinematics), for a force/motion controller to call before a
  contact task. See its docstring for how a controller uses it.

Wrench convention (see :mod:`..compliance`): ``[f; m]`` with the moment about the
frame origin; the wrench that loads the arm is the one the ENVIRONMENT applies
to the end effector. Errors are ``e = ᴮw_d − ᴮw`` and ``V = ½ eᵀ P e`` (P4, eqs. (8)–(9)).
"""

from .chain import (ChainDeflection, CompliantChain, CompliantSegment, base_wrench_frozen, deflect_chain,
                    wrench_error, wrench_jacobian, wrench_jacobian_fd)
from .paper import PAPER_EXAMPLES, PAPER_POSE_INNER_BEND_RAD, PaperExample, paper_like_pose, paper_planar_arm
from .solvers import (DEFAULT_LYAPUNOV_TOLERANCE, CompensationResult, compensate_levenberg_marquardt,
                      compensate_steepest_descent, wrench_invariant_mismatch)
from .ur import (UR3_JOINT_STIFFNESS_NM_PER_RAD, UR3_LINK_TUBES_ASSUMED, CompliantJointForceCorrection,
                 ForceSetpointCorrection, compliant_force_setpoint, rigid_sensor_wrench, ur3_link_beams,
                 ur_force_setpoint_correction)

__all__ = [
    "DEFAULT_LYAPUNOV_TOLERANCE",
    "PAPER_EXAMPLES",
    "PAPER_POSE_INNER_BEND_RAD",
    "UR3_JOINT_STIFFNESS_NM_PER_RAD",
    "UR3_LINK_TUBES_ASSUMED",
    "ChainDeflection",
    "CompensationResult",
    "CompliantChain",
    "CompliantJointForceCorrection",
    "CompliantSegment",
    "ForceSetpointCorrection",
    "PaperExample",
    "base_wrench_frozen",
    "compensate_levenberg_marquardt",
    "compensate_steepest_descent",
    "compliant_force_setpoint",
    "deflect_chain",
    "paper_like_pose",
    "paper_planar_arm",
    "rigid_sensor_wrench",
    "ur3_link_beams",
    "ur_force_setpoint_correction",
    "wrench_error",
    "wrench_invariant_mismatch",
    "wrench_jacobian",
    "wrench_jacobian_fd",
]
