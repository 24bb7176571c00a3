"""Payload identification: mass, centre of mass and inertia of what is mounted on the flange.

With the arm's own model identified (``rdi identify``, without the payload), a
recording with the payload mounted gives the payload's torques as what the arm
model does not explain::

    tau_measured - tau_arm(q, qd, qdd)  =  Y_last(q, qd, qdd) A theta_tool  (+ noise)

where tau_arm is the identified model's rigid body + rotor inertia + friction
prediction (every friction term the model chose; a load-dependent Coulomb term sees the
torque the joint transmits, the payload's included, by fixed-point passes:
tau_load^(i) = tau_links + Y_last A theta^(i-1), identification/friction_fit.LOAD_PASSES),
and the right-hand side is the payload's regressor in its 10
tool-frame parameters (dynamics/payload.py). Only those 10 parameters are
estimated — the arm's are not touched — by weighted least squares with a noise
level per joint from the residuals (Gautier's WLS), on the data preprocessed
exactly as the arm model's were (the same low-pass cut-off, parallel-filtered
friction), so the arm model's prediction and the measured torque see the same
filter. The torque must be measured the same way as the arm model's (motor
current x the model's drive gains, or a torque topic): the job enforces it.

From the estimate: mass m, CoM c = h / m, inertia about the CoM by the
parallel-axis theorem, each with a first-order standard deviation from the
WLS covariance. The standard deviations only cover measurement noise; an arm
model error at the poses of the payload run biases the estimate without
showing in them, which is why the motion should be the wrist-only payload
excitation (``rdi excite plan --kind payload``) at poses the arm model was
identified over. The inertia is the most exposed: the payload's inertia adds to
the wrist links' and to the reflected rotor inertias of the wrist drives, which
on a UR3 are tens of times a small tool's, so any error of the arm model there
lands in the payload's inertia (benchmarks/RESULTS.md has the measured sizes).

Warnings (in :attr:`PayloadEstimate.warnings`) when the data do not determine
something: the inertia (std of a component above ``inertia_std_warning_kgm2``,
default m x (2 cm)^2), the CoM (std above 5 mm), the mass (relative std above
2 %), or when the estimated inertia is not physically realisable (it is then
also given projected onto the nearest realisable one).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..dynamics.payload import PAYLOAD_PARAMETER_NAMES, payload_inertials, payload_regressor, tool_to_joint_transform
from ..io.model_file import DynamicModel
from ..robots.model import RobotModel
from .estimators import weighted_least_squares, with_batch_means_std
from .friction_fit import LOAD_PASSES
from .preprocessing import PreprocessedData

__all__ = ["PayloadEstimate", "PayloadIdentificationError", "estimate_payload", "identify_payload",
           "realisable_inertia"]

#: Components of the inertia about the CoM, in the order of PayloadEstimate.inertia_std_kgm2.
INERTIA_COMPONENTS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
_INERTIA_INDEX = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))


#: a mass estimate below this many standard deviations is "nothing measurable is mounted" (an error)
NOTHING_MOUNTED_STD = 3.0


class PayloadIdentificationError(ValueError):
    """The data cannot give a payload estimate; the message names the reason and the fix."""


@dataclass(frozen=True)
class PayloadEstimate:
    """An identified payload in the tool (flange) frame, with first-order standard deviations."""

    mass_kg: float
    mass_std_kg: float
    com_m: np.ndarray
    com_std_m: np.ndarray
    inertia_about_com_kgm2: np.ndarray
    inertia_std_kgm2: np.ndarray  # ixx, iyy, izz, ixy, ixz, iyz
    parameters: np.ndarray  # 10 tool-frame standard parameters (PAYLOAD_PARAMETER_NAMES)
    parameters_std: np.ndarray
    parameters_covariance: np.ndarray
    physically_consistent: bool
    realisable_inertia_kgm2: np.ndarray
    condition_number: float
    residual_rms_nm: np.ndarray
    payload_torque_rms_nm: np.ndarray
    n_samples: int
    frame: str = "tool0"
    warnings: tuple[str, ...] = ()
    provenance: dict = field(default_factory=dict)
    #: False when the motion did not determine the inertia (a component's std above the warning threshold): the
    #: set-payload call with an inertia is then not offered
    inertia_determined: bool = True

    def ur_rtde_snippet(self) -> str:
        """The ur_rtde call that sets this payload on the robot."""
        cog = ", ".join(f"{v:.4f}" for v in self.com_m)
        return f"rtde_control.setPayload({self.mass_kg:.3f}, [{cog}])"

    def ur_driver_snippet(self, *, with_inertia: bool = False) -> str:
        """The UR ROS 2 driver's service call that sets this payload on the robot. ``with_inertia``: also the
        (realisable) inertia about the CoM, for ur_msgs versions whose SetPayload has ixx..iyz (Jazzy and later)."""
        c = self.com_m
        fields = (f"mass: {self.mass_kg:.3f}, center_of_gravity: {{x: {c[0]:.4f}, y: {c[1]:.4f}, "
                  f"z: {c[2]:.4f}}}")
        if with_inertia:
            i = self.realisable_inertia_kgm2
            fields += "".join(f", {name}: {i[a, b]:.3e}" for name, (a, b) in zip(INERTIA_COMPONENTS, _INERTIA_INDEX))
        return ("ros2 service call /io_and_status_controller/set_payload ur_msgs/srv/SetPayload "
                f"\"{{{fields}}}\"")

    def to_dict(self) -> dict[str, Any]:
        """The payload.yaml content: the estimate and its std (tool0 frame, SI units); ``parameters``, the 10
        tool-frame standard parameters (pinocchio order) and their std; ``inertia_determined`` (False: trust the
        mass and CoM only, see the warnings); ``condition_number`` of the column-normalised weighted regressor;
        ``residual_rms_nm`` per joint after the fit and ``payload_torque_rms_nm``, the payload's share of the
        joint torque; ``samples_fitted``, the preprocessed samples the fit used (the recording decimated to the
        filtered bandwidth, filter edges left out; ``provenance.recording_samples`` counts the recording's)."""
        def inertia(matrix: np.ndarray) -> dict[str, float]:
            return {name: float(matrix[i, j]) for name, (i, j) in zip(INERTIA_COMPONENTS, _INERTIA_INDEX)}

        return {
            "schema": "robot_dynamics_id/payload/1",
            "frame": self.frame,
            "mass_kg": float(self.mass_kg),
            "mass_std_kg": float(self.mass_std_kg),
            "com_m": [float(v) for v in self.com_m],
            "com_std_m": [float(v) for v in self.com_std_m],
            "inertia_about_com_kgm2": inertia(self.inertia_about_com_kgm2),
            "inertia_std_kgm2": {name: float(v) for name, v in zip(INERTIA_COMPONENTS, self.inertia_std_kgm2)},
            "physically_consistent": bool(self.physically_consistent),
            "inertia_determined": bool(self.inertia_determined),
            "realisable_inertia_about_com_kgm2": inertia(self.realisable_inertia_kgm2),
            "parameters": {"names": list(PAYLOAD_PARAMETER_NAMES), "values": self.parameters.tolist(),
                           "std": self.parameters_std.tolist()},
            "condition_number": float(self.condition_number),
            "residual_rms_nm": self.residual_rms_nm.tolist(),
            "payload_torque_rms_nm": self.payload_torque_rms_nm.tolist(),
            "samples_fitted": int(self.n_samples),
            "warnings": list(self.warnings),
            "set_payload": {"ur_rtde": self.ur_rtde_snippet(), "ur_ros2_driver": self.ur_driver_snippet(),
                            # not offered when the data did not determine the inertia (the warnings say so)
                            "ur_ros2_driver_with_inertia": self.ur_driver_snippet(with_inertia=True)
                            if self.inertia_determined else None},
            "provenance": self.provenance,
        }


#: a principal moment (diagonal entry) is determined when it exceeds this many of its standard deviations
INERTIA_SIGNIFICANCE_STD = 2.0


def realisable_inertia(inertia_about_com_kgm2) -> np.ndarray:
    """The nearest physically realisable inertia about the CoM: its second moment of mass
    Sigma = tr(I)/2 E - I projected onto the positive semi-definite matrices (eigenvalues clipped at 0),
    then I = tr(Sigma) E - Sigma (Wensing et al. 2017: realisable iff Sigma >= 0)."""
    inertia = np.asarray(inertia_about_com_kgm2, float)
    sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    values, vectors = np.linalg.eigh(0.5 * (sigma + sigma.T))
    sigma = (vectors * np.maximum(values, 0.0)) @ vectors.T
    return np.trace(sigma) * np.eye(3) - sigma


def _derived(theta: np.ndarray) -> np.ndarray:
    """(m, c_x, c_y, c_z, ixx, iyy, izz, ixy, ixz, iyz) of tool-frame parameters."""
    m, c, i_com = payload_inertials(theta)
    return np.concatenate([[m], c, [i_com[i, j] for i, j in _INERTIA_INDEX]])


def _derived_covariance(theta: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """First-order propagation of the parameter covariance through :func:`_derived` (central differences)."""
    jac = np.empty((10, 10))
    for k in range(10):
        h = 1e-7 * max(1.0, abs(theta[k]))
        e = np.zeros(10)
        e[k] = h
        jac[:, k] = (_derived(theta + e) - _derived(theta - e)) / (2 * h)
    return jac @ covariance @ jac.T


def estimate_payload(robot: RobotModel, data: PreprocessedData, *,
                     arm_torque_nm: np.ndarray, inertia_std_warning_kgm2: float | None = None,
                     provenance: dict | None = None) -> PayloadEstimate:
    """Payload from preprocessed samples whose ``torque`` holds the measured joint torques (payload
    mounted) and ``arm_torque_nm`` the arm model's prediction for the same samples (N, n)."""
    n = robot.n_joints
    if data.n_samples * n < 20:
        raise PayloadIdentificationError(f"{data.n_samples} samples are too few for the payload's 10 parameters; "
                                         "record at least a few seconds of the payload excitation")
    transform = tool_to_joint_transform(robot)
    w = payload_regressor(robot, data.q_rad, data.qd_rad_s, data.qdd_rad_s2, transform=transform)
    residual = np.asarray(data.torque, float) - np.asarray(arm_torque_nm, float)
    y = residual.ravel()
    norms = np.linalg.norm(w, axis=0)
    if np.any(norms == 0):
        bad = [PAYLOAD_PARAMETER_NAMES[i] for i in np.flatnonzero(norms == 0)]
        raise PayloadIdentificationError(f"the motion does not excite the payload parameters {bad} at all; move "
                                         "the wrist joints (rdi excite plan --kind payload)")
    estimate = weighted_least_squares(w, y, n)
    # low-passed rows are not independent: the batch-means std
    estimate, _ = with_batch_means_std(estimate, w, y, n, data.segment_id, data.sample_rate_hz, data.cutoff_hz)
    row_sw = np.sqrt(estimate.row_weights)
    scaled = w * row_sw[:, None]
    scaled /= np.linalg.norm(scaled, axis=0)
    singular = np.linalg.svd(scaled, compute_uv=False)
    cond = float(singular[0] / singular[-1]) if singular[-1] > 0 else float("inf")
    theta = estimate.parameters
    if not theta[0] > NOTHING_MOUNTED_STD * estimate.std[0]:
        # one rule for "nothing there", whatever the motion: a mass the noise could make from zero
        raise PayloadIdentificationError(
            f"the estimated payload mass is {theta[0]:.4f} kg (std {estimate.std[0]:.4f}), not "
            f"{NOTHING_MOUNTED_STD:g} std above zero: nothing measurable is mounted, or the arm model does not match "
            "this arm (identify it again without the payload, with the same torque source)")
    mass, com, inertia = payload_inertials(theta)
    covariance = _derived_covariance(theta, estimate.covariance)
    std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    sigma_second_moment = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    consistent = bool(np.linalg.eigvalsh(sigma_second_moment).min() >= 0.0)
    realisable = inertia if consistent else realisable_inertia(inertia)
    warnings: list[str] = []
    threshold = mass * 0.02**2 if inertia_std_warning_kgm2 is None else float(inertia_std_warning_kgm2)
    inertia_std = std[4:]
    if np.any(inertia_std > threshold):
        worst = int(np.argmax(inertia_std))
        warnings.append(
            f"the motion does not excite the payload's inertia enough: std of {INERTIA_COMPONENTS[worst]} is "
            f"{inertia_std[worst]:.2e} kg m^2 (> {threshold:.1e}, the inertia of {mass:.2f} kg at 2 cm); trust the "
            "mass and centre of mass, not the inertia (payload.yaml offers no set-payload call with it). Move the "
            "wrist joints faster, with larger accelerations "
            "(rdi excite plan --kind payload --velocity-scale 0.7 --acceleration-scale 0.7; the default is 0.5 of "
            "the robot's limits: raise it in steps, with the tool's clamping and cable checked); the std covers "
            "measurement noise only, not the arm model's errors of the wrist rotor inertias")
    if np.any(std[1:4] > 0.005):
        warnings.append(f"the centre of mass is uncertain: std {np.round(std[1:4] * 1000, 1).tolist()} mm (> 5 mm); "
                        "record longer or with larger wrist motions")
    if std[0] > 0.02 * mass:
        warnings.append(f"the mass is uncertain: std {std[0]:.2g} kg ({100 * std[0] / mass:.1f} % > 2 %)")
    if not consistent:
        warnings.append("the estimated inertia about the CoM is not physically realisable (its principal moments "
                        "break the triangle inequality or are negative: noise on a small inertia); "
                        "realisable_inertia_about_com_kgm2 is the nearest realisable one")
    excited = not np.any(inertia_std > threshold)
    # Within noise of zero (a small tool's inertia beside the wrist rotors'): the realisable projection of noise
    # is no inertia to give the robot, however small its std.
    significant = consistent and bool(np.all(np.diag(inertia) > INERTIA_SIGNIFICANCE_STD * inertia_std[:3]))
    if excited and not significant:
        warnings.append(f"the inertia about the CoM is within noise of zero or not realisable (ixx, iyy, izz "
                        f"{', '.join(f'{v:.1e}' for v in np.diag(inertia))} ± "
                        f"{', '.join(f'{s:.1e}' for s in inertia_std[:3])} kg m^2): trust the mass and centre of "
                        "mass; payload.yaml offers no set-payload call with an inertia")
    payload_torque = (w @ theta).reshape(-1, n)
    return PayloadEstimate(
        mass_kg=mass, mass_std_kg=float(std[0]), com_m=com, com_std_m=std[1:4],
        inertia_about_com_kgm2=inertia, inertia_std_kgm2=inertia_std, parameters=theta,
        parameters_std=estimate.std, parameters_covariance=estimate.covariance, physically_consistent=consistent,
        realisable_inertia_kgm2=realisable, condition_number=cond, residual_rms_nm=estimate.residual_rms_nm,
        payload_torque_rms_nm=np.sqrt(np.mean(payload_torque**2, axis=0)), n_samples=data.n_samples,
        frame=robot.tool_frame, warnings=tuple(warnings), provenance=dict(provenance or {}),
        inertia_determined=excited and significant)


def identify_payload(recording: Any, arm_model: DynamicModel, robot: RobotModel | None = None, *,
                     inertia_std_warning_kgm2: float | None = None, provenance: dict | None = None
                     ) -> PayloadEstimate:
    """Payload from a recording-like object (``time_s``, ``q_rad``, ``qd_rad_s``, ``effort_nm`` in Nm: the
    torque measured the arm model's way), preprocessed with the arm model's cut-off."""
    from .pipeline import IdentificationOptions, predict_preprocessed, prepare

    rm = robot or arm_model.robot_model()
    if arm_model.n_joints != rm.n_joints:
        raise PayloadIdentificationError(f"the arm model has {arm_model.n_joints} joints, the robot {rm.n_joints}")
    options = IdentificationOptions(torque_source="effort")
    cutoff = (arm_model.provenance.get("preprocessing") or {}).get("cutoff_hz")
    if cutoff:
        options = replace(options, preprocessing=replace(options.preprocessing, cutoff_hz=float(cutoff)))
    data = prepare(recording, rm, options)
    extra = {**(provenance or {}), "cutoff_hz": round(float(data.cutoff_hz), 4), "recording_samples":
             int(np.asarray(recording["time_s"] if isinstance(recording, dict) else recording.time_s).shape[0])}
    arm = predict_preprocessed(arm_model, data, robot=rm)
    estimate = estimate_payload(rm, data, arm_torque_nm=arm, inertia_std_warning_kgm2=inertia_std_warning_kgm2,
                                provenance=extra)
    if not arm_model.friction.has_load_term:
        return estimate
    # Load-dependent friction sees the torque the gears transmit, the payload's included: fixed-point passes
    # (the payload's torque of the previous estimate added to the arm's links'), contracting by about mu.
    w = payload_regressor(rm, data.q_rad, data.qd_rad_s, data.qdd_rad_s2, transform=tool_to_joint_transform(rm))
    for _ in range(LOAD_PASSES):
        payload_torque = (w @ estimate.parameters).reshape(-1, rm.n_joints)
        arm = predict_preprocessed(arm_model, data, robot=rm, added_load_torque_nm=payload_torque)
        estimate = estimate_payload(rm, data, arm_torque_nm=arm, inertia_std_warning_kgm2=inertia_std_warning_kgm2,
                                    provenance={**extra, "load_friction_passes": LOAD_PASSES})
    return estimate
