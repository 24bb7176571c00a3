"""Recordings made with Universal Robots' own ROS 2 tools.

Two sources besides this package's own nodes:

* **The official driver** (Universal_Robots_ROS2_Driver): ``/joint_states``
  (sensor_msgs/JointState, joint names possibly with a ``tf_prefix`` and in the
  controller manager's order). Its ``effort`` is motor current (A) on released
  distributions and whenever the driver runs with ``use_currents_as_efforts:
  true``; on PolyScope >= 5.23 / 10.11 newer drivers put RTDE's
  ``actual_current_as_torque`` there instead: a torque *with the controller's
  gravity model subtracted* ("0.0 for a joint that is not moving and does not
  experience an external load"). Gravity parameters cannot be identified from
  it, and the driver's parameters are not in the bag, so :func:`check_driver_effort`
  tells the two apart from the data (below) and the reader refuses the second.
* **RTDE_ROS2_Publisher** (UniversalRobots/RTDE_ROS2_Publisher, node
  ``ur_rtde_publisher_node``): one topic per RTDE output, ``rtde/<field>``
  relative to the node's namespace — ``/rtde/actual_q``, ``/rtde/actual_qd``,
  ``/rtde/actual_current``, ``/rtde/target_current``, ``/rtde/target_moment`` as
  ``example_interfaces/msg/Float64MultiArray`` (joint order of the controller),
  ``/rtde/timestamp`` as ``builtin_interfaces/msg/Time`` (controller clock),
  ``/rtde/actual_TCP_force`` as ``geometry_msgs/msg/WrenchStamped`` (its
  config/rtde_map.yaml). No message carries a header with the controller's time,
  so :func:`read_rtde_publisher_bag` groups the fields of one RTDE packet by their
  receive times (the node publishes a packet's fields back to back) and takes
  sample times from ``/rtde/timestamp`` when it was recorded.

How the effort check decides (a data check, no driver parameter needed): on the
joint whose gravity torque varies most in the recording, the effort is fitted as
``a g(q) + c tau_dyn(q, qd, qdd) + friction terms`` with ``g`` and ``tau_dyn``
(inertial + Coriolis torque) from the nominal model. Motor current is the whole
joint torque over a drive gain, so ``a ~ c`` (ratio ~1, whatever the gain);
gravity-compensated torque keeps the inertial part but not gravity, so ``a/c ~ 0``
(~0.3 if a payload is not declared on the pendant). Ratios below
:data:`GRAVITY_COMPENSATED_BELOW` are refused, those within
:data:`CURRENT_RATIO_RANGE` are motor current; a recording without enough
gravity or inertial variation cannot be told and is refused too, unless the user
says the effort is current (``--joint-states-effort current``: ``check_effort=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import scipy.signal
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from ..robots.description import JOINT_NAMES
from ..robots.model import RobotModel
from .bag_decode import BagTopics, read_bag
from .bag_storage import BagReadError, open_bag
from .recording import Recording, RecordingSource

__all__ = ["CURRENT_RATIO_RANGE", "GRAVITY_COMPENSATED_BELOW", "DriverEffortCheck",
           "RTDE_PUBLISHER_FIELDS", "check_driver_effort", "find_rtde_publisher_prefix", "read_robot_bag",
           "read_rtde_publisher_bag", "rtde_publisher_typestore", "read_ur_driver_bag"]

#: gravity slope / inertial slope below this: gravity-compensated torque
GRAVITY_COMPENSATED_BELOW = 0.5
#: ... within this range: motor current
CURRENT_RATIO_RANGE = (0.6, 1.6)

#: RTDE output -> Recording field, for the fields identification uses (``actual_current_as_torque`` is
#: gravity-compensated and deliberately not read as a joint torque).
RTDE_PUBLISHER_FIELDS = {
    "actual_q": "q_rad",
    "actual_qd": "qd_rad_s",
    "actual_current": "current_a",
    "target_current": "target_current_a",
    "target_moment": "target_moment_nm",
}
_FLOAT64_MULTI_ARRAY = "example_interfaces/msg/Float64MultiArray"
_TIME = "builtin_interfaces/msg/Time"
_WRENCH = "geometry_msgs/msg/WrenchStamped"

# example_interfaces message definitions (ROS 2 example_interfaces, msg/*.msg), registered when a bag does
# not carry its own: the typestores of rosbags have no example_interfaces.
_EXAMPLE_INTERFACES_MSGS = {
    "example_interfaces/msg/MultiArrayDimension": "string label\nuint32 size\nuint32 stride\n",
    "example_interfaces/msg/MultiArrayLayout": "example_interfaces/MultiArrayDimension[] dim\nuint32 data_offset\n",
    "example_interfaces/msg/Float64MultiArray": "example_interfaces/MultiArrayLayout layout\nfloat64[] data\n",
    "example_interfaces/msg/Float64": "float64 data\n",
}


def rtde_publisher_typestore() -> Typestore:
    """A ROS 2 Humble typestore plus the example_interfaces types RTDE_ROS2_Publisher uses."""
    store = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for name, text in _EXAMPLE_INTERFACES_MSGS.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


# --------------------------------------------------------------------------------------------- driver bags
@dataclass(frozen=True)
class DriverEffortCheck:
    """What :func:`check_driver_effort` concluded about JointState.effort of a driver recording."""

    kind: str  # "current", "gravity_compensated" or "undetermined"
    joint: str
    ratio: float  # gravity slope / inertial slope on that joint
    gravity_std_nm: float
    detail: str


def _low_pass(values: np.ndarray, rate_hz: float, cutoff_hz: float = 5.0) -> np.ndarray:
    cutoff = min(cutoff_hz, 0.4 * rate_hz)
    sos = scipy.signal.butter(2, cutoff, fs=rate_hz, output="sos")
    return scipy.signal.sosfiltfilt(sos, values, axis=0, padlen=min(60, values.shape[0] - 1))


def check_driver_effort(recording: Recording, robot: RobotModel, *, max_samples: int = 3000) -> DriverEffortCheck:
    """Is ``recording.current_a`` (the driver's effort) motor current or gravity-compensated torque?
    (see the module docstring). Uses the robot model's inertials (nominal for a built-in UR)."""
    effort = recording.current_a
    if effort is None or recording.n_samples < 50:
        return DriverEffortCheck("undetermined", "", float("nan"), 0.0,
                                 f"{recording.n_samples} samples with effort: too few to check")
    rate = 1.0 / recording.sample_period_s
    q = recording.q_rad
    qd = _low_pass(recording.qd_rad_s, rate)
    qdd = np.gradient(qd, recording.time_s, axis=0)
    y = _low_pass(effort, rate)
    step = max(1, recording.n_samples // max_samples)
    idx = np.arange(0, recording.n_samples, step)
    model, data = robot.model, robot.model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model, data, q[k]) for k in idx])
    dynamic = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in idx]) - gravity
    j = int(np.argmax(gravity.std(axis=0)))
    name = robot.joint_names[j]
    g_std, d_std = float(gravity[:, j].std()), float(dynamic[:, j].std())
    if g_std < 0.5 or d_std < 0.1:
        return DriverEffortCheck(
            "undetermined", name, float("nan"), g_std,
            f"the recording moves too little: gravity torque on {name} varies by {g_std:.2f} Nm (std), inertial "
            f"torque by {d_std:.2f} Nm; the check needs ~0.5 and ~0.1 Nm")
    a = np.column_stack([gravity[:, j], dynamic[:, j], np.tanh(qd[idx, j] / 0.01), qd[idx, j], np.ones(idx.size)])
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    coef, *_ = np.linalg.lstsq(a / scale, y[idx, j], rcond=None)
    coef /= scale
    slope_g, slope_d = float(coef[0]), float(coef[1])
    residual = y[idx, j] - a @ coef
    sigma2 = residual @ residual / max(idx.size - a.shape[1], 1)
    cov = sigma2 * np.linalg.pinv((a / scale).T @ (a / scale)) / np.outer(scale, scale)
    d_rel = np.sqrt(cov[1, 1]) / abs(slope_d) if slope_d else np.inf
    if not slope_d > 0 or d_rel > 0.25:
        return DriverEffortCheck("undetermined", name, float("nan"), g_std,
                                 f"the effort on {name} does not follow the inertial torque (slope {slope_d:.3g}, "
                                 f"relative std {d_rel:.2f}): no scale to compare gravity with")
    ratio = slope_g / slope_d
    detail = (f"on {name}, effort = {slope_g:.3g} x gravity torque + {slope_d:.3g} x inertial torque + friction: "
              f"ratio {ratio:.2f} (motor current gives ~1, gravity-compensated torque ~0)")
    if ratio < GRAVITY_COMPENSATED_BELOW:
        return DriverEffortCheck("gravity_compensated", name, ratio, g_std, detail)
    if CURRENT_RATIO_RANGE[0] <= ratio <= CURRENT_RATIO_RANGE[1]:
        return DriverEffortCheck("current", name, ratio, g_std, detail)
    return DriverEffortCheck("undetermined", name, ratio, g_std, detail + "; neither")


def read_ur_driver_bag(path: str | Path, robot: RobotModel, *, topics: BagTopics | None = None,
                       check_effort: bool = True, nan_policy: str = "raise") -> Recording:
    """A bag of the official UR driver: /joint_states with effort read as ``topics.joint_states_effort`` says
    (default :meth:`BagTopics.ur_driver`: motor current, A).

    Effort read as motor current is checked from the data (:func:`check_driver_effort`) and refused when it is
    the gravity-compensated torque of new firmware or cannot be told; ``check_effort=False`` says the user
    stated that it is current (``--joint-states-effort current``), and the check is skipped. Another meaning
    (torque, current_as_torque, ignore) is read as stated: the user said what it holds."""
    topics = topics or BagTopics.ur_driver()
    recording = read_bag(path, joint_names=tuple(robot.joint_names), topics=topics, nan_policy=nan_policy)
    if topics.joint_states_effort != "current_a":
        return recording
    if recording.current_a is None:
        raise BagReadError(f"bag {path}: {topics.joint_states} carries no effort; the identifier needs the motor "
                           "currents (driver parameter use_currents_as_efforts: true) or RTDE_ROS2_Publisher's "
                           "actual_current")
    if not check_effort:
        return recording.with_warnings(f"{topics.joint_states} effort taken as motor current (A) without the data "
                                       "check (--joint-states-effort current)")
    check = check_driver_effort(recording, robot)
    fix = ("Record again with the UR driver parameter use_currents_as_efforts: true (effort = motor current), or "
           "record UR's RTDE_ROS2_Publisher topics (rtde/actual_q, rtde/actual_qd, rtde/actual_current, "
           "rtde/target_moment) alongside")
    if check.kind == "gravity_compensated":
        raise BagReadError(
            f"bag {path}: {topics.joint_states} effort is gravity-compensated torque, not motor current (data check: "
            f"{check.detail}). The driver fills effort with RTDE actual_current_as_torque on PolyScope >= 5.23 "
            f"unless told otherwise; the arm's gravity parameters cannot be identified from it. {fix}")
    if check.kind == "undetermined":
        raise BagReadError(
            f"bag {path}: cannot tell from the data whether {topics.joint_states} effort is motor current or "
            f"gravity-compensated torque ({check.detail}). If the driver ran with use_currents_as_efforts: true (or "
            "on firmware before PolyScope 5.23), say so: --joint-states-effort current (identifier parameter "
            "joint_states_effort: current). " + fix)
    return recording.with_warnings(f"{topics.joint_states} effort checked as motor current: {check.detail}")


# --------------------------------------------------------------------------------------------- RTDE publisher
def find_rtde_publisher_prefix(topics: Sequence[str]) -> str | None:
    """The namespace prefix of RTDE_ROS2_Publisher's topics in a bag ('/rtde/' by default), or None."""
    prefixes = sorted(t[: -len("actual_q")] for t in topics if t.endswith("rtde/actual_q"))
    if not prefixes:
        return None
    if len(prefixes) > 1:
        raise BagReadError(f"the bag holds RTDE_ROS2_Publisher topics of several robots ({prefixes}); read one with "
                           "read_rtde_publisher_bag(prefix=...)")
    return prefixes[0]


def _decode(bag, topic: str, msgtype: str, store: Typestore) -> tuple[np.ndarray, list]:
    rx, values = [], []
    for _, _, t_ns, raw in bag.messages([topic]):
        rx.append(t_ns)
        values.append(store.deserialize_cdr(raw, msgtype))
    return np.asarray(rx, dtype=np.int64), values


def _align(reference_rx: np.ndarray, rx: np.ndarray, period_ns: float) -> tuple[np.ndarray, bool]:
    """Index into ``rx`` of the message of the same RTDE packet as each reference message (-1: none), and
    whether the topics line up one to one.

    Each topic keeps the publisher's order. Equal counts mean nothing was dropped: message k of every
    topic is packet k, however the recorder bunched their receive times (checked: the median receive-time
    difference stays below half a period). Otherwise receive times decide: reference messages received
    closer than a quarter period form a bunch, each other message joins the nearest bunch within half a
    period, and a bunch is matched in order only if it got exactly one message per packet; a bunch that
    lost a message cannot say which, so none of its packets is matched.
    """
    half = 0.5 * period_ns
    if rx.size == reference_rx.size:
        if rx.size == 0 or np.median(np.abs(rx - reference_rx)) <= half:
            return np.arange(rx.size), True
    index = np.full(reference_rx.size, -1, dtype=np.int64)
    if rx.size == 0 or reference_rx.size == 0:
        return index, False
    breaks = np.flatnonzero(np.diff(reference_rx) > 0.25 * period_ns) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [reference_rx.size]])
    first, last = reference_rx[starts], reference_rx[stops - 1]
    order = np.argsort(rx, kind="stable")
    x = rx[order]
    c = np.clip(np.searchsorted(first, x, side="right") - 1, 0, first.size - 1)
    nxt = np.minimum(c + 1, first.size - 1)
    dist_c = np.maximum(0, np.maximum(first[c] - x, x - last[c]))
    dist_n = np.maximum(0, np.maximum(first[nxt] - x, x - last[nxt]))
    cluster = np.where(dist_n < dist_c, nxt, c)
    distance = np.minimum(dist_c, dist_n)
    member = distance <= half
    counts = np.bincount(cluster[member], minlength=first.size)
    sizes = stops - starts
    good = counts == sizes
    members = order[member]
    # the nearest-bunch assignment is monotone in time, so each bunch's members are contiguous
    member_start = np.searchsorted(cluster[member], np.arange(first.size))
    ok = np.flatnonzero(good)
    offsets = np.arange(int(sizes[ok].sum())) - np.repeat(np.cumsum(sizes[ok]) - sizes[ok], sizes[ok])
    index[np.repeat(starts[ok], sizes[ok]) + offsets] = members[np.repeat(member_start[ok], sizes[ok]) + offsets]
    return index, False


def read_rtde_publisher_bag(path: str | Path, *, joint_names: Sequence[str] = JOINT_NAMES,
                            prefix: str | None = None, nan_policy: str = "raise") -> Recording:
    """A bag of RTDE_ROS2_Publisher topics as a :class:`Recording` (see the module docstring).

    ``nan_policy``: a packet holding NaN/inf in a field that is read is refused ('raise') or dropped and
    reported ('drop'). What the storage could not read comes first in the warnings, as for our own bags."""
    if nan_policy not in ("raise", "drop"):
        raise ValueError(f"nan_policy {nan_policy!r}: choose 'raise' or 'drop'")
    path = Path(path)
    store = rtde_publisher_typestore()
    warnings: list[str] = []
    with open_bag(path) as bag:
        present = bag.topics
        prefix = prefix if prefix is not None else find_rtde_publisher_prefix(list(present))
        if prefix is None:
            raise BagReadError(f"bag {path} has no RTDE_ROS2_Publisher topics (…/rtde/actual_q); it has: "
                               f"{bag.describe_topics()}")
        for field in ("actual_q", "actual_qd"):
            topic = prefix + field
            if topic not in present or present[topic][1] == 0:
                raise BagReadError(f"bag {path}: {topic} is missing or empty; add {field} to the publisher's "
                                   f"output_recipe (it has: {bag.describe_topics()})")
        warnings += list(bag.warnings)
        series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for field, name in RTDE_PUBLISHER_FIELDS.items():
            topic = prefix + field
            if topic not in present:
                continue
            msgtype = present[topic][0]
            if msgtype != _FLOAT64_MULTI_ARRAY:
                raise BagReadError(f"bag {path}: {topic} carries {msgtype}, expected {_FLOAT64_MULTI_ARRAY} "
                                   "(RTDE_ROS2_Publisher's VECTOR6D output)")
            rx, msgs = _decode(bag, topic, msgtype, store)
            values = np.array([np.asarray(m.data, float) for m in msgs if len(m.data) == len(joint_names)])
            if values.shape[0] != len(msgs):
                raise BagReadError(f"bag {path}: {topic} holds messages without {len(joint_names)} values")
            series[name] = (rx, values)
        stamps = None
        if prefix + "timestamp" in present and present[prefix + "timestamp"][0] == _TIME:
            rx, msgs = _decode(bag, prefix + "timestamp", _TIME, store)
            stamps = (rx, np.array([int(m.sec) * 1_000_000_000 + int(m.nanosec) for m in msgs], dtype=np.int64))
        wrench = None
        if prefix + "actual_TCP_force" in present and present[prefix + "actual_TCP_force"][0] == _WRENCH:
            rx, msgs = _decode(bag, prefix + "actual_TCP_force", _WRENCH, store)
            wrench = (rx, np.array([(m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x,
                                     m.wrench.torque.y, m.wrench.torque.z) for m in msgs], dtype=float))
        storage = bag.storage
        # what could not be read comes first: a partial bag must not read like a whole one
        warnings = bag.losses() + warnings
        if prefix + "actual_current_as_torque" in present and "current_a" not in series:
            warnings.append(f"{prefix}actual_current_as_torque is gravity-compensated torque and is not read as "
                            "joint torque; record actual_current for identification")
    ref_rx, q = series["q_rad"]
    period_ns = float(np.median(np.diff(np.sort(ref_rx)))) if ref_rx.size > 1 else 2e6
    tolerance = 0.5 * period_ns
    keep = np.ones(ref_rx.size, bool)
    picks: dict[str, np.ndarray] = {}
    grouped = True
    others = {k: v for k, v in series.items() if k != "q_rad"}
    if stamps is not None:
        others["time"] = stamps
    if wrench is not None:
        others["tcp_wrench"] = wrench
    for name, (rx, _) in others.items():
        index, one_to_one = _align(ref_rx, rx, period_ns)
        grouped &= one_to_one
        missing = index < 0
        if name in ("qd_rad_s", "time") or missing.mean() < 0.05:
            keep &= ~missing
            picks[name] = index
        else:
            warnings.append(f"{prefix}{name}: {int(missing.sum())} of {missing.size} RTDE packets have no message "
                            "(best-effort topic dropped them); field not used")
    if not grouped:
        warnings.append(f"RTDE_ROS2_Publisher topics differ in message count (dropped best-effort messages): the "
                        f"fields of a packet were matched by receive time (within {tolerance / 1e6:.2f} ms); "
                        f"{int((~keep).sum())} packet(s) without every field dropped")
    if not np.any(keep):
        raise BagReadError(f"bag {path}: no RTDE packet has both actual_q and actual_qd within "
                           f"{tolerance / 1e6:.2f} ms of each other; were they recorded from the same publisher?")
    fields = {name: series[name][1][picks[name][keep]] for name in picks if name in series}
    if "tcp_wrench" in picks:
        fields["tcp_wrench"] = wrench[1][picks["tcp_wrench"][keep]]
    if "time" in picks:
        time_ns = stamps[1][picks["time"][keep]]
    else:
        time_ns = ref_rx[keep]
        warnings.append(f"no {prefix}timestamp topic: sample times are the bag's receive times (their jitter enters "
                        "the accelerations); add timestamp to the publisher's output_recipe")
    order = np.argsort(time_ns, kind="stable")
    unique = np.ones(time_ns.size, bool)
    unique[1:] = np.diff(time_ns[order]) > 0
    if not np.all(unique):
        warnings.append(f"{int((~unique).sum())} sample(s) repeat an earlier time stamp; kept the first")
    sel = order[unique]  # rows of the kept packets, in time order
    q = q[keep]
    sel = _finite_packets(sel, q, fields, prefix, nan_policy, path, warnings)
    used = {name: prefix + field for field, name in RTDE_PUBLISHER_FIELDS.items() if name in fields or name == "q_rad"}
    absent = {name: prefix + field for field, name in RTDE_PUBLISHER_FIELDS.items() if name not in used}
    return Recording(
        joint_names=tuple(joint_names), time_s=time_ns[sel] * 1e-9, q_rad=q[sel],
        **{name: values[sel] for name, values in fields.items()},
        source=RecordingSource(str(path), f"{storage} (RTDE_ROS2_Publisher)", used, absent),
        warnings=tuple(warnings))


def _finite_packets(sel: np.ndarray, q: np.ndarray, fields: dict[str, np.ndarray], prefix: str, nan_policy: str,
                    path: Path, warnings: list[str]) -> np.ndarray:
    """``sel`` without the packets holding NaN/inf in any field read (``nan_policy`` 'drop'), or refused."""
    values = {"q_rad": q, **fields}
    bad = np.zeros(sel.size, bool)
    culprits = []
    for name, array in values.items():
        rows = ~np.all(np.isfinite(array[sel]), axis=1)
        if rows.any():
            bad |= rows
            topic = next((prefix + f for f, n in RTDE_PUBLISHER_FIELDS.items() if n == name), prefix + name)
            culprits.append(f"{topic} ({int(rows.sum())})")
    if not bad.any():
        return sel
    text = (f"{int(bad.sum())} of {sel.size} RTDE packets hold NaN/inf values (topic and packets: "
            f"{', '.join(culprits)})")
    if nan_policy == "raise":
        raise BagReadError(f"bag {path}: {text}. Pass --nan-policy drop (nan_policy='drop' in Python and the "
                           "identifier node) to drop those packets")
    warnings.append(text + "; dropped")
    if bad.all():
        raise BagReadError(f"bag {path}: every RTDE packet holds NaN/inf values; nothing left to read")
    return sel[~bad]


# --------------------------------------------------------------------------------------------- dispatch
def read_robot_bag(path: str | Path, robot: RobotModel, *, topics: BagTopics | None = None,
                   ur_driver_topics: bool = False, check_effort: bool = True, nan_policy: str = "raise") -> Recording:
    """Read a bag from whichever tool recorded it.

    * RTDE_ROS2_Publisher's topics (recognised by name) when the bag has no ``topics.joint_states``, or when
      it comes from the official driver (``ur_driver_topics``; RTDE's actual_current is then preferred to the
      driver's effort) and the joint-states topic was not renamed;
    * the official driver's /joint_states (``ur_driver_topics``: :func:`read_ur_driver_bag`, its effort checked
      as motor current unless ``check_effort`` is off);
    * this package's own topics (:func:`~.bag_decode.read_bag`).

    ``topics``: the topics and meanings to read (default :class:`BagTopics`, or :meth:`BagTopics.ur_driver`
    with ``ur_driver_topics``); ``nan_policy``: 'raise' or 'drop' samples holding NaN/inf."""
    topics = topics or (BagTopics.ur_driver() if ur_driver_topics else BagTopics())
    with open_bag(path) as bag:
        prefix = find_rtde_publisher_prefix(list(bag.topics))
        has_joint_states = topics.joint_states in bag.topics
        unread = sorted(t for t in bag.topics if "rtde/" in t) if prefix is None else []
    renamed = topics.joint_states != BagTopics().joint_states
    if prefix is not None and (not has_joint_states or (ur_driver_topics and not renamed)):
        return read_rtde_publisher_bag(path, joint_names=tuple(robot.joint_names), prefix=prefix,
                                       nan_policy=nan_policy)
    if ur_driver_topics:
        recording = read_ur_driver_bag(path, robot, topics=topics, check_effort=check_effort, nan_policy=nan_policy)
    else:
        recording = read_bag(path, joint_names=tuple(robot.joint_names), topics=topics, nan_policy=nan_policy)
    if unread:  # RTDE_ROS2_Publisher topics without the joint positions cannot be read as a recording
        recording = replace(recording, warnings=(*recording.warnings, (
            f"RTDE_ROS2_Publisher topic(s) {unread} were not read: without …/rtde/actual_q and actual_qd they "
            f"cannot be lined up with the joints; {topics.joint_states} was read instead (add actual_q and "
            "actual_qd to the publisher's output_recipe to read its topics)")))
    return recording
