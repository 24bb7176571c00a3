"""A simulated experiment written as the torque logger's rosbag2 bag (same topics, types, frames).

:func:`write_experiment_bag` writes an :class:`~robot_dynamics_id.sim.experiment.ExperimentResult`
with the topic names of :class:`~robot_dynamics_id.io.bag_decode.BagTopics` (the ones
``read_bag`` reads by default) plus ``/excitation/progress``; the messages are serialized in
bulk (:class:`_CdrTable`), since a 60 s run holds ~150 000 of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..io.bag_decode import FLOAT64_MULTI_ARRAY, JOINT_STATE, WRENCH_STAMPED, BagTopics
from ..io.bag_writer import BagWriter, default_typestore, float64_multi_array, joint_state, wrench_stamped

if TYPE_CHECKING:
    from .experiment import ExperimentResult

__all__ = ["DEFAULT_CLOCK_OFFSET_S", "PROGRESS_TOPIC", "write_experiment_bag"]

#: Constant added to the robot clock in the bag's header stamps (ur_interface adds
#: wall-clock time at connection); fixed here so that bags are reproducible. 2023-11-14.
DEFAULT_CLOCK_OFFSET_S = 1_700_000_000.0
#: Time the excitation node needs to answer a joint state (bag receive-time offset of a command), s.
_COMMAND_LATENCY_S = 3e-4
#: Receive-time offset of the state topics behind their header stamps in the written bag, s.
_STATE_RECEIVE_DELAY_S = 1e-4
#: The excitation node's progress topic (JSON strings; nodes/excitation.py).
PROGRESS_TOPIC = "/excitation/progress"


class _CdrTable:
    """Serialized (CDR, little-endian) messages of one fixed layout for many samples at once.

    A bag of a 60 s run holds ~150 000 messages; serializing each with the typestore costs
    more than simulating it. Messages of the experiment differ only in their stamp and
    numbers, so one template message is serialized with rosbags (distinct sentinel values
    in every numeric array) and the per-sample values are written over the sentinels' bytes
    for all samples in one numpy operation. Messages beginning with a std_msgs/Header carry
    stamp.sec (int32) and stamp.nanosec (uint32) right after the 4-byte encapsulation header.
    """

    def __init__(self, typestore, msgtype: str, template: object, arrays: dict[str, np.ndarray],
                 n_samples: int, *, stamped: bool) -> None:
        raw = bytes(typestore.serialize_cdr(template, msgtype, little_endian=True))
        self._rows = np.tile(np.frombuffer(raw, np.uint8), (n_samples, 1))
        self._offsets: dict[str, int] = {}
        for name, sentinel in arrays.items():
            pattern = np.asarray(sentinel, "<f8").tobytes()
            offset = raw.find(pattern)
            if offset < 0 or raw.find(pattern, offset + 1) >= 0:
                raise RuntimeError(f"cannot locate field {name} of {msgtype} in its CDR template; report this as a bug")
            self._offsets[name] = offset
        self._stamped = stamped

    def set(self, name: str, values: np.ndarray) -> None:
        """Write (N, k) float64 values into field ``name`` of every row."""
        values = np.ascontiguousarray(values, "<f8")
        offset = self._offsets[name]
        self._rows[:, offset:offset + 8 * values.shape[1]] = values.view(np.uint8).reshape(values.shape[0], -1)

    def set_stamps(self, stamp_ns: np.ndarray) -> None:
        assert self._stamped
        sec, nanosec = np.divmod(np.asarray(stamp_ns, np.int64), 1_000_000_000)
        self._rows[:, 4:8] = sec.astype("<i4").view(np.uint8).reshape(-1, 4)
        self._rows[:, 8:12] = nanosec.astype("<u4").view(np.uint8).reshape(-1, 4)

    def message(self, k: int) -> bytes:
        return self._rows[k].tobytes()


def _sentinel(width: int, salt: int) -> np.ndarray:
    """Distinct, improbable float64 values (never produced by the simulation)."""
    return -1.234567890123e-300 * (1.0 + np.arange(width) + 100.0 * salt)


def write_experiment_bag(
    path: str | Path,
    result: ExperimentResult,
    *,
    storage: str = "mcap",
    clock_offset_s: float = DEFAULT_CLOCK_OFFSET_S,
    tf_prefix: str = "",
    extra_metadata: dict[str, str] | None = None,
) -> Path:
    """Write ``result`` as the torque logger records the real experiment (``path`` must not exist).

    Topics (ur_interface and the excitation node): /joint_states (position rad, velocity rad/s,
    effort = current × configured drive gains, Nm), /motor_currents (effort = A),
    /target_moment (effort = Nm), /force_torque_sensor_broadcaster/wrench (base frame,
    frame_id ``<tf_prefix>base``), /forward_velocity_controller/commands (rad/s) and
    /excitation/progress (JSON). Header stamps are robot time + ``clock_offset_s``; each
    message is stored at a receive time just after it was sent (state topics 0.1 ms after
    their stamp, a command 0.3 ms after the state it answers). ``read_bag`` gives back the
    recording with ``time_s`` shifted by ``clock_offset_s``. The bag's ``custom_data`` holds
    :meth:`ExperimentResult.metadata` plus ``extra_metadata``.
    """
    topics = BagTopics()  # the package's own topic names (what the identifier reads by default)
    path = Path(path)
    if path.exists():
        raise ValueError(f"{path} exists already; a bag is never overwritten: choose a new path")
    rec = result.recording
    n_samples, n = rec.n_samples, rec.n_joints
    names = list(rec.joint_names)
    offset_ns = int(round(clock_offset_s * 1e9))
    stamps = np.round(rec.time_s * 1e9).astype(np.int64) + offset_ns
    state_rx = stamps + int(round(_STATE_RECEIVE_DELAY_S * 1e9))
    latency_ns = int(round(_COMMAND_LATENCY_S * 1e9))
    command_rx = np.round(result.command_time_s * 1e9).astype(np.int64) + offset_ns + latency_ns
    progress_rx = {int(round(p.time_s * 1e9)) + offset_ns + latency_ns: p.data for p in result.progress}

    ts = default_typestore()
    q0, q1, q2 = _sentinel(n, 0), _sentinel(n, 1), _sentinel(n, 2)
    js = _CdrTable(ts, JOINT_STATE, joint_state(0, names, q0, q1, q2),
                   {"position": q0, "velocity": q1, "effort": q2}, n_samples, stamped=True)
    js.set_stamps(stamps)
    js.set("position", rec.q_rad)
    js.set("velocity", rec.qd_rad_s)
    js.set("effort", rec.effort_nm)
    effort_tables = []
    for values in (rec.current_a, rec.target_moment_nm):
        table = _CdrTable(ts, JOINT_STATE, joint_state(0, names, effort=q2), {"effort": q2},
                          n_samples, stamped=True)
        table.set_stamps(stamps)
        table.set("effort", values)
        effort_tables.append(table)
    w0 = _sentinel(6, 3)
    wrench = _CdrTable(ts, WRENCH_STAMPED, wrench_stamped(0, w0, frame_id=tf_prefix + "base"),
                       {"force": w0[:3], "torque": w0[3:]}, n_samples, stamped=True)
    wrench.set_stamps(stamps)
    wrench.set("force", rec.tcp_wrench[:, :3])
    wrench.set("torque", rec.tcp_wrench[:, 3:])
    n_commands = command_rx.size
    commands = _CdrTable(ts, FLOAT64_MULTI_ARRAY, float64_multi_array(q0), {"data": q0},
                         max(n_commands, 1), stamped=False)
    if n_commands:
        commands.set("data", result.command_rad_s)
    string_type = ts.types["std_msgs/msg/String"]

    path.parent.mkdir(parents=True, exist_ok=True)
    with BagWriter(path, storage=storage, custom_data={**result.metadata(), **(extra_metadata or {})}) as bag:
        for topic, msgtype in ((topics.joint_states, JOINT_STATE),
                               (topics.motor_currents.topic, JOINT_STATE),
                               (topics.target_moment.topic, JOINT_STATE),
                               (topics.wrench, WRENCH_STAMPED),
                               (topics.velocity_commands, FLOAT64_MULTI_ARRAY),
                               (PROGRESS_TOPIC, "std_msgs/msg/String")):
            bag.add_topic(topic, msgtype)
        c = 0
        for k in range(n_samples):
            rx = int(state_rx[k])
            bag.write_raw(topics.joint_states, rx, js.message(k))
            bag.write_raw(topics.motor_currents.topic, rx, effort_tables[0].message(k))
            bag.write_raw(topics.target_moment.topic, rx, effort_tables[1].message(k))
            bag.write_raw(topics.wrench, rx, wrench.message(k))
            # The excitation node's answers to this state (command, progress) arrive before the next state.
            next_rx = int(state_rx[k + 1]) if k + 1 < n_samples else 2**62
            while c < n_commands and command_rx[c] <= next_rx:
                crx = int(command_rx[c])
                bag.write_raw(topics.velocity_commands, crx, commands.message(c))
                if crx in progress_rx:
                    bag.write(PROGRESS_TOPIC, crx, string_type(data=progress_rx[crx]))
                c += 1
    return path
