"""Bags written the way Universal Robots' own ROS 2 tools write them, from a simulated recording.

* :func:`write_driver_bag`: the official driver (Universal_Robots_ROS2_Driver) recorded with
  ``ros2 bag record``: ``/joint_states`` from its joint_state_broadcaster (joint names in the
  controller manager's order, optional tf_prefix, header stamps on the ROS clock), the speed
  scaling and the F/T broadcaster (frame ``tool0_controller``); ``effort`` is what the caller
  passes (motor current, or the gravity-compensated torque of new firmware).
* :func:`write_rtde_publisher_bag`: UR's RTDE_ROS2_Publisher (``ur_rtde_publisher_node``): one
  topic per RTDE output, ``<namespace>/rtde/<field>``, VECTOR6D fields as
  ``example_interfaces/msg/Float64MultiArray`` (no header), ``timestamp`` as
  ``builtin_interfaces/msg/Time``, ``actual_TCP_force`` as ``geometry_msgs/msg/WrenchStamped``,
  ``speed_scaling`` as ``example_interfaces/msg/Float64`` (its config/rtde_map.yaml). The node
  publishes a packet's fields back to back; the recorder's receive times jitter and sometimes
  bunch, and a best-effort topic can drop messages.

Message types come from rosbags' ROS 2 Jazzy typestore; example_interfaces (absent from it) is
registered from its .msg definitions, which the bag then stores like rosbag2 does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

__all__ = ["DRIVER_JOINT_ORDER", "write_driver_bag", "write_rtde_publisher_bag"]

#: /joint_states order of the UR driver's joint_state_broadcaster (the controller manager's interface order).
DRIVER_JOINT_ORDER = ("shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint",
                      "shoulder_pan_joint")
_CLOCK_OFFSET_NS = 1_760_000_000_000_000_000  # ROS time (epoch) at the recording's t = 0
_CONTROLLER_UPTIME_S = 1234.5  # RTDE timestamp (s since controller start) at t = 0
_EXAMPLE_INTERFACES = {
    "example_interfaces/msg/MultiArrayDimension": "string label\nuint32 size\nuint32 stride\n",
    "example_interfaces/msg/MultiArrayLayout": "example_interfaces/MultiArrayDimension[] dim\nuint32 data_offset\n",
    "example_interfaces/msg/Float64MultiArray": "example_interfaces/MultiArrayLayout layout\nfloat64[] data\n",
    "example_interfaces/msg/Float64": "float64 data\n",
}


def _typestore():
    store = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for name, text in _EXAMPLE_INTERFACES.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def _writer(path: Path, storage: str) -> Writer:
    if storage == "mcap":
        return Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    return Writer(path, version=8, storage_plugin=StoragePlugin.SQLITE3)


def _write_sorted(path: Path, storage: str, store, topics: dict[str, str], messages: list[tuple[int, str, object]]):
    messages.sort(key=lambda m: m[0])
    with _writer(path, storage) as writer:
        conns = {t: writer.add_connection(t, msgtype, typestore=store) for t, msgtype in topics.items()}
        for t_ns, topic, msg in messages:
            writer.write(conns[topic], int(t_ns), store.serialize_cdr(msg, topics[topic]))
    return path


def _time(store, t_ns: int):
    return store.types["builtin_interfaces/msg/Time"](sec=int(t_ns // 1_000_000_000), nanosec=int(t_ns % 1_000_000_000))


def _header(store, t_ns: int, frame_id: str = ""):
    return store.types["std_msgs/msg/Header"](stamp=_time(store, t_ns), frame_id=frame_id)


def _wrench(store, t_ns: int, values, frame_id: str):
    v3 = store.types["geometry_msgs/msg/Vector3"]
    wrench = store.types["geometry_msgs/msg/Wrench"](force=v3(*map(float, values[:3])),
                                                       torque=v3(*map(float, values[3:])))
    return store.types["geometry_msgs/msg/WrenchStamped"](header=_header(store, t_ns, frame_id), wrench=wrench)


def write_driver_bag(path: str | Path, recording, effort: np.ndarray, *, storage: str = "mcap", tf_prefix: str = "",
                     seed: int = 0) -> Path:
    """A ``ros2 bag record`` of the UR driver's topics; ``effort`` (N, 6) in the recording's joint order."""
    store = _typestore()
    rng = np.random.default_rng(seed)
    order = [list(recording.joint_names).index(name) for name in DRIVER_JOINT_ORDER]
    names = [tf_prefix + name for name in DRIVER_JOINT_ORDER]
    stamps = np.round(recording.time_s * 1e9).astype(np.int64) + _CLOCK_OFFSET_NS
    receive = stamps + 200_000 + np.abs(rng.normal(0, 100_000, stamps.size)).astype(np.int64)
    joint_state = store.types["sensor_msgs/msg/JointState"]
    messages = []
    for k in range(stamps.size):
        messages.append((receive[k], "/joint_states", joint_state(
            header=_header(store, stamps[k]), name=names, position=recording.q_rad[k, order],
            velocity=recording.qd_rad_s[k, order], effort=np.asarray(effort[k], float)[order])))
        if k % 5 == 0:  # the broadcasters publish at 100 Hz
            messages.append((receive[k] + 50_000, "/speed_scaling_state_broadcaster/speed_scaling",
                             store.types["std_msgs/msg/Float64"](data=1.0)))
            wrench = recording.tcp_wrench[k] if recording.tcp_wrench is not None else np.zeros(6)
            messages.append((receive[k] + 60_000, "/force_torque_sensor_broadcaster/wrench",
                             _wrench(store, stamps[k], wrench, tf_prefix + "tool0_controller")))
    topics = {"/joint_states": "sensor_msgs/msg/JointState",
              "/speed_scaling_state_broadcaster/speed_scaling": "std_msgs/msg/Float64",
              "/force_torque_sensor_broadcaster/wrench": "geometry_msgs/msg/WrenchStamped"}
    return _write_sorted(Path(path), storage, store, topics, messages)


RECORDING_FIELDS = {"actual_q": "q_rad", "actual_qd": "qd_rad_s", "actual_current": "current_a",
                    "target_current": "target_current_a", "target_moment": "target_moment_nm"}


def write_rtde_publisher_bag(path: str | Path, recording, *, storage: str = "mcap", namespace: str = "",
                             fields=tuple(RECORDING_FIELDS), timestamp: bool = True, wrench: bool = True,
                             drop: dict[str, float] | None = None, bunch_every: int = 250, seed: int = 0) -> Path:
    """A ``ros2 bag record`` of RTDE_ROS2_Publisher's topics (recipe = ``fields`` [+ timestamp, TCP force,
    speed_scaling]); ``drop``: fraction of each named field's messages lost; every ``bunch_every``-th packet
    the recorder stalls 3 ms and receives the waiting packets together."""
    store = _typestore()
    rng = np.random.default_rng(seed)
    prefix = f"{namespace}/rtde/"
    t = recording.time_s
    base = np.round(t * 1e9).astype(np.int64) + _CLOCK_OFFSET_NS + 300_000
    base = base + np.abs(rng.normal(0, 80_000, t.size)).astype(np.int64)
    if bunch_every:
        for start in range(bunch_every, t.size - 3, bunch_every):  # a stall: three packets arrive at once
            base[start:start + 3] = base[start + 2] + np.arange(3) * 20_000
    multi = store.types["example_interfaces/msg/Float64MultiArray"]
    layout = store.types["example_interfaces/msg/MultiArrayLayout"](dim=[], data_offset=0)
    topics: dict[str, str] = {}
    messages = []
    recipe = list(fields) + (["timestamp"] if timestamp else []) + (["actual_TCP_force"] if wrench else []) \
        + ["speed_scaling"]
    lost = {name: rng.random(t.size) < fraction for name, fraction in (drop or {}).items()}
    for i, field in enumerate(recipe):
        topic = prefix + field
        receive = base + 2_000 * i  # published back to back in recipe order
        if field in RECORDING_FIELDS:
            topics[topic] = "example_interfaces/msg/Float64MultiArray"
            values = getattr(recording, RECORDING_FIELDS[field])
            items = [multi(layout=layout, data=np.asarray(values[k], float)) for k in range(t.size)]
        elif field == "timestamp":
            topics[topic] = "builtin_interfaces/msg/Time"
            clock = np.round((t + _CONTROLLER_UPTIME_S) * 1e9).astype(np.int64)
            items = [_time(store, clock[k]) for k in range(t.size)]
        elif field == "actual_TCP_force":
            topics[topic] = "geometry_msgs/msg/WrenchStamped"
            forces = recording.tcp_wrench if recording.tcp_wrench is not None else np.zeros((t.size, 6))
            items = [_wrench(store, receive[k], forces[k], "") for k in range(t.size)]
        else:
            topics[topic] = "example_interfaces/msg/Float64"
            items = [store.types["example_interfaces/msg/Float64"](data=1.0) for _ in range(t.size)]
        gone = lost.get(field, np.zeros(t.size, bool))
        messages += [(receive[k], topic, items[k]) for k in range(t.size) if not gone[k]]
    return _write_sorted(Path(path), storage, store, topics, messages)


CONTROLLER_UPTIME_S = _CONTROLLER_UPTIME_S
