"""One rule for the joint torque that identification fits and validation scores against.

``rdi identify``, ``rdi validate``, ``rdi drive-gains``, the identifier node and
the pipeline all take their torque from :func:`select_torque`, so the same data
and options always give the same signal. The rule (:data:`TORQUE_SOURCE_RULE`):

* ``current``: motor current (A) x drive gains (Nm/A) — needs the gains;
* ``effort``: the joint torque of a torque interface (``Recording.effort_nm``:
  our ur_interface's ``JointState.effort``, itself current x its configured
  gains);
* ``target_moment``: UR's own model torque (RTDE ``target_moment``; no
  friction). Fitting it identifies UR's model, not the arm: only on request;
* ``auto``: ``current`` when the data hold currents and the gains are known,
  else ``effort`` when the data hold a real joint torque, else refused with a
  message naming ``--drive-gains`` / ``--torque-source``. Never silently the
  target moment.

Never used as a joint torque: UR's ``actual_current_as_torque``
(``Recording.current_as_torque_nm``; a ur_rtde CSV column, and the official UR
driver's ``JointState.effort`` on new firmware since driver PR #1551). UR
documents it as gravity-compensated (0 for a joint at rest without external
load), so it cannot identify gravity; asking for it is refused with the fix.
An ``effort`` identical to the recording's target moment (ur_interface with
``effort_source: target_moment``) is not a measurement either.

The record of what was used (:meth:`TorqueSignal.provenance`) goes into
model.yaml (``provenance.identified_from``) so validation can use the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dynamics.drive import check_drive_gains, torque_from_current

__all__ = ["TORQUE_SOURCES", "TORQUE_SOURCE_RULE", "TorqueSignal", "TorqueSourceError", "motor_currents",
           "select_torque", "torque_holdings", "ur_model_torque"]

TORQUE_SOURCES = ("auto", "current", "effort", "target_moment")

#: The rule in one paragraph, for --help texts, node parameter descriptions and the README.
TORQUE_SOURCE_RULE = (
    "auto = motor current x drive gains when the data hold currents and the gains are known, else the joint "
    "torque (effort) of a torque interface, else refused naming --drive-gains; UR's gravity-compensated "
    "actual_current_as_torque is never used, the target moment (UR's model, no friction) only when asked")

_GRAVITY_COMPENSATED_FIX = (
    "UR's actual_current_as_torque is gravity-compensated (0 for a joint at rest without external load) and "
    "cannot identify gravity. Use the motor currents with drive gains instead: record actual_current (ur_rtde "
    "CSV) and pass --drive-gains (identify them with `rdi drive-gains`); with the official UR driver on new "
    "firmware set use_currents_as_efforts: true and pass --ur-driver-topics")


class TorqueSourceError(ValueError):
    """No usable torque for the requested source; the message names what the data hold and the fix."""


@dataclass(frozen=True, eq=False)
class TorqueSignal:
    """The joint torque chosen by the rule, and what it is."""

    #: (N, n) joint torque, Nm
    torque_nm: np.ndarray
    #: 'current', 'effort' or 'target_moment' (never 'auto')
    source: str
    #: the gains that turned currents into torque (None unless ``source == 'current'``)
    drive_gains_nm_per_a: np.ndarray | None
    #: one line for people
    description: str
    #: things the user should know about this choice
    notes: tuple[str, ...] = ()

    def provenance(self) -> dict:
        """What model.yaml records in ``provenance.identified_from`` (plus data and robot, added by the job)."""
        gains = None if self.drive_gains_nm_per_a is None else [float(g) for g in self.drive_gains_nm_per_a]
        return {"torque_source": self.source, "drive_gains_nm_per_a": gains, "signal": self.description}


def _get(data: Any, name: str):
    if isinstance(data, dict):
        return data.get(name)
    return getattr(data, name, None)


def _array(data: Any, name: str) -> np.ndarray | None:
    value = _get(data, name)
    if value is None:
        return None
    arr = np.asarray(value, float)
    if arr.size == 0 or not np.any(np.isfinite(arr)):
        return None
    return arr


def _same_signal(a: np.ndarray, b: np.ndarray | None) -> bool:
    """True when ``a`` is ``b`` republished (finite rows equal to float precision)."""
    if b is None or a.shape != b.shape:
        return False
    rows = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    return bool(rows.sum() >= 2 and np.allclose(a[rows], b[rows], rtol=1e-6, atol=1e-9))


def torque_holdings(data: Any) -> str:
    """What torque-like signals ``data`` holds, for messages (e.g. 'motor currents (A), UR's target moment (Nm)')."""
    names = {"current_a": "motor currents (A)", "effort_nm": "joint torques (effort, Nm)",
             "target_moment_nm": "UR's target moment (Nm)",
             "current_as_torque_nm": "UR's gravity-compensated actual_current_as_torque (Nm)"}
    have = [label for key, label in names.items() if _array(data, key) is not None]
    return ", ".join(have) if have else "no torque or current at all"


def _refuse_auto(data: Any, current, effort_is_moment: bool) -> TorqueSourceError:
    holds = torque_holdings(data)
    if current is not None:
        return TorqueSourceError(
            f"the data hold {holds}, but no drive gains were given to turn the currents into joint torques: pass "
            "--drive-gains K0,...,K5 (Nm/A; identify them with `rdi drive-gains` and a known payload)"
            + ("; the gravity-compensated actual_current_as_torque cannot replace them" if
               _array(data, "current_as_torque_nm") is not None else ""))
    if effort_is_moment:
        return TorqueSourceError(
            "the joint-state effort is identical to UR's target moment (ur_interface with effort_source: "
            "target_moment): a model torque, not a measurement. Record with effort_source: current and drive "
            "gains, or pass --torque-source target_moment to fit UR's model on purpose")
    if _array(data, "current_as_torque_nm") is not None:
        return TorqueSourceError(f"the data hold only {holds}. {_GRAVITY_COMPENSATED_FIX}")
    if _array(data, "target_moment_nm") is not None:
        return TorqueSourceError(
            f"the data hold only {holds}: that is UR's model torque (no friction), not a measurement. Record the "
            "motor currents (and pass --drive-gains), or pass --torque-source target_moment to fit UR's model "
            "on purpose")
    return TorqueSourceError(f"the data hold {holds}: nothing to identify from. Record motor currents (with drive "
                             f"gains) or a joint torque{_absent_current(data)}")


def _absent_current(data: Any) -> str:
    """Where the data's source would have held the motor currents, for a refusal's fix ('' when it does not say)."""
    source = getattr(data, "source", None)
    topic = (getattr(source, "absent", None) or {}).get("current_a")
    if topic is None:
        return ""
    publisher = "RTDE_ROS2_Publisher" in str(getattr(source, "storage", ""))
    return f" ({topic} is not in the data" + ("; add actual_current to the publisher's output_recipe)" if publisher
                                              else ")")


def select_torque(recording: Any, torque_source: str = "auto", drive_gains_nm_per_a=None, *,
                  plausible_gains: bool = True) -> TorqueSignal:
    """The joint torque of ``recording`` by the rule of the module docstring.

    ``recording``: a :class:`~robot_dynamics_id.io.recording.Recording` or any object/dict with some of
    ``current_a``, ``effort_nm``, ``target_moment_nm``, ``current_as_torque_nm``.
    ``plausible_gains``: refuse gains outside the range a UR joint can have (dynamics/drive.py); off only
    for data deliberately in amperes (the drive-gain identification).

    Raises TorqueSourceError (or dynamics.drive.DriveGainError) naming what the data hold and the fix.
    """
    if torque_source not in TORQUE_SOURCES:
        raise TorqueSourceError(f"torque source {torque_source!r}: choose one of {', '.join(TORQUE_SOURCES)}")
    current = _array(recording, "current_a")
    effort = _array(recording, "effort_nm")
    moment = _array(recording, "target_moment_nm")
    effort_is_moment = effort is not None and _same_signal(effort, moment)
    source = torque_source
    if source == "auto":
        if current is not None and drive_gains_nm_per_a is not None:
            source = "current"
        elif effort is not None and not effort_is_moment:
            source = "effort"
        else:
            raise _refuse_auto(recording, current, effort_is_moment)
    if source == "current":
        if current is None:
            raise TorqueSourceError(f"--torque-source current needs motor currents, but the data hold "
                                    f"{torque_holdings(recording)}. For a bag of the official UR driver "
                                    "(JointState.effort = current) pass --ur-driver-topics; otherwise choose another "
                                    "--torque-source")
        if drive_gains_nm_per_a is None:
            raise TorqueSourceError("--torque-source current needs the drive gains (Nm/A per joint): pass "
                                    "--drive-gains K0,...,K5, or identify them with `rdi drive-gains` and a known "
                                    "payload")
        gains = check_drive_gains(drive_gains_nm_per_a, current.shape[1], what="--drive-gains",
                                  plausible=plausible_gains)
        return TorqueSignal(torque_from_current(current, gains), "current", gains,
                            f"motor current x drive gains {[round(float(g), 6) for g in gains]} Nm/A")
    if source == "effort":
        if effort is None:
            if _array(recording, "current_as_torque_nm") is not None:
                raise TorqueSourceError(f"--torque-source effort: the data hold no joint torque, only "
                                        f"{torque_holdings(recording)}. {_GRAVITY_COMPENSATED_FIX}")
            raise TorqueSourceError(f"--torque-source effort needs a joint torque (a torque interface's effort), but "
                                    f"the data hold {torque_holdings(recording)}; choose another --torque-source")
        if effort_is_moment:
            raise _refuse_auto(recording, None, True)
        return TorqueSignal(effort, "effort", None, "joint torque (effort of a torque interface, Nm)")
    if moment is None:
        raise TorqueSourceError(f"--torque-source target_moment: the data hold {torque_holdings(recording)} but no "
                                "target moment; choose another --torque-source")
    return TorqueSignal(moment, "target_moment", None, "UR's target moment (the controller's model torque, Nm)",
                        notes=("the target moment is UR's model torque without friction: the result describes UR's "
                               "model, not the arm",))


def ur_model_torque(recording: Any, drive_gains_nm_per_a=None) -> tuple[np.ndarray, str]:
    """UR's own controller model as a joint torque, for comparison: target_current x gains when both exist,
    else target_moment. Raises TorqueSourceError when the data hold neither usable."""
    target_current = _array(recording, "target_current_a")
    if target_current is not None and drive_gains_nm_per_a is not None:
        gains = check_drive_gains(drive_gains_nm_per_a, target_current.shape[1], what="drive gains")
        return torque_from_current(target_current, gains), "UR's target_current x drive gains"
    moment = _array(recording, "target_moment_nm")
    if moment is not None:
        return moment, "UR's target_moment"
    missing = "target_current (with drive gains) or target_moment"
    raise TorqueSourceError(f"the data hold no {missing}, so UR's own model cannot be scored: record them "
                            "(ur_rtde CSV: target_current, target_moment; our bags: /target_moment)")


def motor_currents(recording: Any, what: str = "the recording") -> np.ndarray:
    """The motor currents (A) of a recording, for the drive-gain identification; refused with the fix."""
    current = _array(recording, "current_a")
    if current is None:
        raise TorqueSourceError(
            f"{what} holds no motor currents (it has {torque_holdings(recording)}): drive gains need actual_current "
            "(ur_rtde CSV) or /motor_currents (our ur_interface); for the official UR driver pass "
            "--ur-driver-topics (on new firmware with use_currents_as_efforts: true)")
    return current
