"""What the identifier writes for people and for the controller: model YAML, URDF, metrics.json, PNG plots.

``write_report(result, out_dir)`` writes

* ``model.yaml`` — io/model_file.DynamicModel (base parameters with standard
  deviations, per-link parameters, friction, drive gains, provenance);
* ``model.urdf`` — the robot's URDF with every link's ``<inertial>`` replaced by
  the identified one (mass, CoM and inertia about the CoM in the link frame);
* ``metrics.json`` — per-joint fit (seeds.md P3 eq. (31)), RRE %, RMS (Nm), plus
  preprocessing summary, condition number, consistency and timings;
* ``torque_fit.png``, ``residuals.png``, ``friction.png`` (matplotlib, Agg backend).

:func:`write_predictions` writes ``predictions.csv``: one row per sample of the
recording, at its own timestamps (identification/validation.py) — from a file of
rows (ur_rtde CSV), one row per data row of the file, in its order, the rows the
reader left out included —: ``time_s``, ``status`` (scored, edge, short_segment,
non_finite; for rows the reader left out: not_running, non_finite, repeated — a
repeated timestamp carries the values of the row it repeats), ``scored`` (1 =
used for the metrics), per joint j ``measured_nm_j`` (as recorded), ``measured_filtered_nm_j``
(low-passed like the model's inputs: what is scored), ``predicted_nm_j``,
``ur_model_nm_j`` (UR's model, when compared), ``baseline_nm_j`` (the plain
least-squares baseline, identification/baseline.py, when compared) and ``moving_j`` (1 = |q̇_j| above
the moving threshold); NaN where no value could be computed.

Progress of long runs is drawn by robot_dynamics_id/progress.py (a callback; no bar here).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..dynamics.friction import friction_torque
from ..io.model_file import DynamicModel
from ..io.recording import FileRows
from ..robots.model import RobotModel

if TYPE_CHECKING:  # pragma: no cover
    from .pipeline import IdentificationResult
    from .validation import ValidationResult

__all__ = ["identified_urdf", "plot_friction", "plot_torques", "write_metrics", "write_predictions",
           "write_report"]


def _fmt(values) -> str:
    return " ".join(f"{float(v):.12g}" for v in values)


def identified_urdf(model: DynamicModel, robot: RobotModel | None = None) -> str:
    """The robot's URDF with the identified inertials.

    The pinocchio frame of joint i is the URDF frame of its child link, so each
    child link gets ``<inertial>`` = (mass, CoM, inertia about the CoM) of the model's
    link i in that frame; other links fixed to the same joint lose their inertials
    (the identified link already contains them).
    """
    rm = robot or model.kinematics()
    root = ET.fromstring(rm.urdf)
    links = {link.get("name"): link for link in root.findall("link")}
    child_of_joint = {j.get("name"): j.find("child").get("link") for j in root.findall("joint")}
    identified = set()
    for i, joint_name in enumerate(model.joint_names):
        link_name = child_of_joint.get(joint_name)
        if link_name is None or link_name not in links:
            raise ValueError(f"joint {joint_name!r} of the model is not in the URDF of {rm.name!r}")
        link = links[link_name]
        for old in link.findall("inertial"):
            link.remove(old)
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=_fmt(model.link_com_m[i]), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=f"{model.link_mass_kg[i]:.12g}")
        inertia = model.link_inertia_kgm2[i]
        ET.SubElement(inertial, "inertia", ixx=f"{inertia[0, 0]:.12g}", ixy=f"{inertia[0, 1]:.12g}",
                      ixz=f"{inertia[0, 2]:.12g}", iyy=f"{inertia[1, 1]:.12g}", iyz=f"{inertia[1, 2]:.12g}",
                      izz=f"{inertia[2, 2]:.12g}")
        identified.add(link_name)
    # links rigidly attached (fixed joints) to an identified link: their mass is inside it now
    fixed_children = {j.find("child").get("link") for j in root.findall("joint") if j.get("type") == "fixed"}
    for name in fixed_children - identified:
        for old in links[name].findall("inertial"):
            links[name].remove(old)
    comment = ET.Comment(f" inertials identified by robot_dynamics_id ({model.provenance.get('method', 'unknown')}) ")
    root.insert(0, comment)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _json_ready(value):
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_ready(value.tolist())
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if np.isfinite(v) else None
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_metrics(path: str | Path, metrics: dict) -> Path:
    """metrics.json (NaN/inf written as null)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_json_ready(metrics), indent=2) + "\n")
    return path


def write_predictions(path: str | Path, result: ValidationResult, file_rows: FileRows | None = None) -> Path:
    """predictions.csv: every recording sample with its status, measured and predicted torque (module doc).

    With the recording's ``file_rows`` (row files: ur_rtde CSV), one row per data row of the file, in the file's
    order: the rows the reader left out carry their reason as status, NaN values (a repeated row: the values of
    the sample it repeats), and are never scored."""
    path = Path(path)
    n = len(result.joint_names)
    header = ["time_s", "status", "scored"]
    blocks = [result.measured_nm, result.measured_filtered_nm, result.predicted_nm]
    prefixes = ["measured_nm", "measured_filtered_nm", "predicted_nm"]
    if result.ur_model_nm is not None:
        blocks.append(result.ur_model_nm)
        prefixes.append("ur_model_nm")
    if result.baseline_nm is not None:
        blocks.append(result.baseline_nm)
        prefixes.append("baseline_nm")
    for prefix in prefixes:
        header += [f"{prefix}_{j}" for j in range(n)]
    header += [f"moving_{j}" for j in range(n)]
    values = np.hstack(blocks)
    time_s, status, scored, moving = result.time_s, result.status, result.scored.astype(int), result.moving.astype(int)
    if file_rows is not None:
        time_s, status, scored, values, moving = _on_file_rows(file_rows, time_s, status, scored, values, moving)
    # One format string per row over plain Python lists: ~3x faster than formatting value by value.
    row_format = "%.6f,%s,%d," + ",".join(["%.6g"] * values.shape[1]) + "," + ",".join(["%d"] * n) + "\n"
    rows = zip(time_s.tolist(), status.tolist(), scored.tolist(), values.tolist(), moving.tolist())
    with path.open("w", encoding="ascii") as handle:
        handle.write(",".join(header) + "\n")
        handle.writelines(row_format % (t, status, scored, *v, *m) for t, status, scored, v, m in rows)
    return path


def _on_file_rows(file_rows: FileRows, time_s, status, scored, values, moving):
    """Per-sample columns -> one entry per data row of the file, in the file's order (:func:`write_predictions`)."""
    if file_rows.sample_row.shape[0] != time_s.shape[0]:
        raise ValueError(f"file_rows maps {file_rows.sample_row.shape[0]} samples, the result has {time_s.shape[0]}")
    repeats = file_rows.dropped_repeats
    copied = repeats >= 0
    m = repeats.shape[0]
    d_values, d_moving = np.full((m, values.shape[1]), np.nan), np.zeros((m, moving.shape[1]), int)
    d_values[copied], d_moving[copied] = values[repeats[copied]], moving[repeats[copied]]
    order = np.argsort(np.concatenate([file_rows.sample_row, file_rows.dropped_row]), kind="stable")
    return (np.concatenate([time_s, file_rows.dropped_time_s])[order],
            np.concatenate([status, file_rows.dropped_reason]).astype(str)[order],
            np.concatenate([scored, np.zeros(m, int)])[order],
            np.vstack([values, d_values])[order], np.vstack([moving, d_moving])[order])


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_torques(time_s, measured, predicted, joint_names, path_fit: str | Path, path_residuals: str | Path,
                 *, unit: str = "Nm", max_points: int = 20000) -> None:
    """Measured vs predicted torque per joint, and the residuals, as two PNGs."""
    plt = _pyplot()
    t = np.asarray(time_s)
    step = max(1, t.shape[0] // max_points)
    t, measured, predicted = t[::step], np.asarray(measured)[::step], np.asarray(predicted)[::step]
    n = measured.shape[1]
    for path, residual in ((path_fit, False), (path_residuals, True)):
        fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
        for j in range(n):
            ax = axes[j, 0]
            if residual:
                ax.plot(t, predicted[:, j] - measured[:, j], lw=0.6, color="tab:red")
                ax.axhline(0, color="k", lw=0.5)
            else:
                ax.plot(t, measured[:, j], lw=0.8, label="measured")
                ax.plot(t, predicted[:, j], lw=0.8, ls="--", label="predicted")
            ax.set_ylabel(f"{joint_names[j]}\n[{unit}]", fontsize=7)
        axes[0, 0].set_title("torque residual (predicted - measured)" if residual else "measured vs predicted torque")
        if not residual:
            axes[0, 0].legend(loc="upper right", fontsize=7)
        axes[-1, 0].set_xlabel("time [s] (segments concatenated)")
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)


def plot_friction(model: DynamicModel, path: str | Path, *, max_velocity_rad_s: float = 1.5) -> None:
    """The identified friction torque of every joint against velocity in steady sliding (dynamics/friction.py;
    a load-dependent term at zero load torque, presliding joints fully slid)."""
    plt = _pyplot()
    v = np.linspace(-max_velocity_rad_s, max_velocity_rad_s, 801)
    qd = np.repeat(v[:, None], model.n_joints, axis=1)
    tau = friction_torque(model.friction, qd, load_torque_nm=np.zeros_like(qd))
    fig, ax = plt.subplots(figsize=(7, 4))
    for j in range(model.n_joints):
        ax.plot(v, tau[:, j], label=f"{model.joint_names[j]} ({model.friction.terms[j]})")
    ax.set_xlabel("joint velocity [rad/s]")
    ax.set_ylabel("friction torque [Nm]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_report(result: IdentificationResult, out_dir: str | Path, *, robot: RobotModel | None = None,
                 validation_metrics: dict | None = None, plots: bool = True, extra: dict | None = None
                 ) -> dict[str, Path]:
    """Write model.yaml, model.urdf, metrics.json and the PNG plots into ``out_dir``; returns the paths.

    A model whose links are not all physically consistent gets no URDF (a URDF with negative masses or
    unrealisable inertias breaks its readers); metrics.json says so. ``extra`` is merged into metrics.json.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"model": result.model.save(out / "model.yaml")}
    consistent = bool(np.all(result.physically_consistent_links))
    if consistent:
        urdf_path = out / "model.urdf"
        urdf_path.write_text(identified_urdf(result.model, robot))
        paths["urdf"] = urdf_path
    metrics = {
        "training": result.metrics,
        "validation": validation_metrics,
        "preprocessing": result.data.summary(),
        "condition_number": result.condition_number,
        "n_base_parameters": result.base_map.n_base,
        "physically_consistent": consistent,
        "physically_consistent_links": result.physically_consistent_links.tolist(),
        "urdf": "model.urdf" if consistent else "not written: the per-link model is not physically consistent",
        "stribeck_velocity_rad_s": result.stribeck_velocity_rad_s.tolist(),
        "estimator": result.model.provenance.get("method"),
        "timings_s": result.timings_s,
        **(extra or {}),
    }
    paths["metrics"] = write_metrics(out / "metrics.json", metrics)
    if plots:
        names = list(result.model.joint_names)
        plot_torques(result.data.time_s, result.measured_torque_nm, result.predicted_torque_nm, names,
                     out / "torque_fit.png", out / "residuals.png")
        plot_friction(result.model, out / "friction.png")
        paths.update(torque_fit=out / "torque_fit.png", residuals=out / "residuals.png",
                     friction=out / "friction.png")
    return paths
