"""BagWriter: round trips in both storages, splitting, metadata format, crash safety (real SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader

from robot_dynamics_id.io.bag_reader import BagTopics, open_bag, read_bag
from robot_dynamics_id.io.bag_writer import (
    BagWriter,
    BagWriterError,
    default_typestore,
    joint_state,
    repair_bag,
    write_recording_bag,
)
from robot_dynamics_id.io.recording import Recording
from robot_dynamics_id.robots import JOINT_NAMES

REPO = Path(__file__).resolve().parents[2]


def _recording(n: int = 400, t0: float = 1_700_000_000.0, seed: int = 1) -> Recording:
    rng = np.random.default_rng(seed)
    t = t0 + 0.002 * np.arange(n)

    def sig() -> np.ndarray:
        return rng.normal(size=(n, 6))

    vel_cmd = sig()
    vel_cmd[:3] = np.nan  # no command yet at the start
    return Recording(joint_names=JOINT_NAMES, time_s=t, q_rad=sig(), qd_rad_s=sig(), current_a=sig(),
                     target_current_a=sig(), target_moment_nm=sig(), effort_nm=sig(), tcp_wrench=sig(),
                     velocity_command_rad_s=vel_cmd)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_recording_round_trip(tmp_path: Path, storage: str) -> None:
    rec = _recording()
    bag = write_recording_bag(tmp_path / "bag", rec, storage=storage, receive_delay_s=0.0005)
    out = read_bag(bag)
    assert out.source is not None and out.source.storage == storage
    np.testing.assert_allclose(out.time_s, rec.time_s, atol=1e-6)
    for name in ("q_rad", "qd_rad_s", "current_a", "target_current_a", "target_moment_nm", "effort_nm",
                 "tcp_wrench"):
        np.testing.assert_array_equal(getattr(out, name), getattr(rec, name), err_msg=name)
    np.testing.assert_array_equal(out.velocity_command_rad_s[3:], rec.velocity_command_rad_s[3:])
    assert np.all(np.isnan(out.velocity_command_rad_s[:3]))


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_is_plain_rosbag2_readable_by_rosbags(tmp_path: Path, storage: str) -> None:
    ts = default_typestore()
    with BagWriter(tmp_path / "b", storage=storage, custom_data={"robot": "ur3"}) as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        for k in range(50):
            bag.write("/joint_states", 1000 + k, joint_state(k, JOINT_NAMES, np.full(6, k), np.zeros(6)))
    meta = yaml.safe_load((tmp_path / "b" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == (9 if storage == "mcap" else 8)
    assert meta["storage_identifier"] == storage
    assert meta["message_count"] == 50
    assert meta["starting_time"]["nanoseconds_since_epoch"] == 1000
    assert meta["duration"]["nanoseconds"] == 49
    assert meta["relative_file_paths"] == [f"b_0.{'mcap' if storage == 'mcap' else 'db3'}"]
    assert meta["custom_data"] == {"robot": "ur3"}
    topic_meta = meta["topics_with_message_count"][0]
    assert topic_meta["message_count"] == 50
    assert topic_meta["topic_metadata"]["type_description_hash"].startswith("RIHS01_")
    # v8 stores QoS profiles as a YAML string, v9 as a list.
    assert isinstance(topic_meta["topic_metadata"]["offered_qos_profiles"], str if storage == "sqlite3" else list)
    with Reader(tmp_path / "b") as reader:
        msgs = [ts.deserialize_cdr(raw, c.msgtype) for c, _, raw in reader.messages()]
    assert [m.position[0] for m in msgs] == list(range(50))
    assert not (tmp_path / "b" / ".staging").exists()


def test_raw_bytes_pass_through_identical(tmp_path: Path) -> None:
    ts = default_typestore()
    raw = bytes(ts.serialize_cdr(joint_state(5, JOINT_NAMES, np.arange(6.0)), "sensor_msgs/msg/JointState"))
    with BagWriter(tmp_path / "b") as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        bag.write_raw("/joint_states", 7, raw)
        bag.write_raw("/joint_states", 8, memoryview(raw))
    with open_bag(tmp_path / "b") as src:
        got = [r for *_, r in src.messages()]
    assert [bytes(g) for g in got] == [raw, raw]


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_split_by_duration_and_size(tmp_path: Path, storage: str) -> None:
    rec = _recording(n=1000)  # 2 s at 500 Hz
    bag = write_recording_bag(tmp_path / "dur", rec, storage=storage, max_file_duration_s=0.5)
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert len(meta["relative_file_paths"]) == 4
    assert sum(f["message_count"] for f in meta["files"]) == meta["message_count"]
    assert all(f["duration"]["nanoseconds"] < 5e8 for f in meta["files"])
    with Reader(bag) as reader:  # rosbags reads the split bag through the metadata
        assert reader.message_count == meta["message_count"]
    out = read_bag(bag)
    np.testing.assert_array_equal(out.q_rad, rec.q_rad)

    with BagWriter(tmp_path / "size", storage=storage, max_file_size_bytes=20_000) as writer:
        writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        for k in range(300):
            writer.write("/joint_states", k, joint_state(k, JOINT_NAMES, np.full(6, k), np.zeros(6)))
    assert len(writer.files) >= 4
    with Reader(tmp_path / "size") as reader:
        assert reader.message_count == 300


def test_bad_use_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BagWriterError, match="storage"):
        BagWriter(tmp_path / "x", storage="rosbag1")
    with pytest.raises(BagWriterError, match="version"):
        BagWriter(tmp_path / "x", version=5)
    (tmp_path / "exists").mkdir()
    with pytest.raises(BagWriterError, match="exists already"):
        BagWriter(tmp_path / "exists").open()
    with BagWriter(tmp_path / "b") as bag:
        with pytest.raises(BagWriterError, match="add_topic"):
            bag.write_raw("/nope", 0, b"")
        with pytest.raises(BagWriterError, match="unknown to the typestore"):
            bag.add_topic("/x", "my_msgs/msg/Thing")
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        with pytest.raises(BagWriterError, match="one message type"):
            bag.add_topic("/joint_states", "std_msgs/msg/String")
    with pytest.raises(BagWriterError, match="closed"):
        bag.write_raw("/joint_states", 0, b"")


# A recorder that writes 4 topics at 500 Hz and prints "<seq> <stamp_ns>" after each cycle.
_CHILD = r"""
import sys, time
import numpy as np
from robot_dynamics_id.io.bag_writer import BagWriter, joint_state, wrench_stamped, float64_multi_array
from robot_dynamics_id.robots import JOINT_NAMES
path, storage = sys.argv[1], sys.argv[2]
bag = BagWriter(path, storage=storage, flush_period_s=0.5, max_file_duration_s=float(sys.argv[3])).open()
for topic, t in (("/joint_states", "sensor_msgs/msg/JointState"), ("/motor_currents", "sensor_msgs/msg/JointState"),
                 ("/force_torque_sensor_broadcaster/wrench", "geometry_msgs/msg/WrenchStamped"),
                 ("/forward_velocity_controller/commands", "std_msgs/msg/Float64MultiArray")):
    bag.add_topic(topic, t)
period = 0.002
next_t = time.monotonic()
seq = 0
while True:
    now = time.time_ns()
    bag.write("/forward_velocity_controller/commands", now, float64_multi_array(np.full(6, seq)))
    bag.write("/joint_states", now, joint_state(now, JOINT_NAMES, np.full(6, float(seq)), np.zeros(6)))
    bag.write("/motor_currents", now, joint_state(now, JOINT_NAMES, effort=np.full(6, 0.5)))
    bag.write("/force_torque_sensor_broadcaster/wrench", now, wrench_stamped(now, np.zeros(6)))
    sys.stdout.write(f"{seq} {now}\n"); sys.stdout.flush()
    seq += 1
    next_t += period
    delay = next_t - time.monotonic()
    if delay > 0:
        time.sleep(delay)
"""


@pytest.mark.parametrize("storage,split_s", [("sqlite3", 0.0), ("mcap", 1.0)])
def test_sigkill_loses_at_most_the_last_second(tmp_path: Path, storage: str, split_s: float) -> None:
    bag_path = tmp_path / "killed"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(bag_path), storage, str(split_s)],
                            stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    last_seq, last_stamp = -1, 0
    deadline = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            last_seq, last_stamp = (int(x) for x in line.split())
            if deadline is None:
                deadline = time.monotonic() + 1.6  # record ~1.6 s, then kill mid-run
            elif time.monotonic() >= deadline:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert last_seq > 300, "the writer did not run long enough"
    assert not (bag_path / "metadata.yaml").exists()

    rec = read_bag(bag_path, topics=BagTopics(joint_states_effort="ignore"))
    assert any("no metadata.yaml" in w for w in rec.warnings)
    seqs = rec.q_rad[:, 0]
    # Everything up to the last flush is there, in order and without holes...
    np.testing.assert_array_equal(seqs, np.arange(seqs.size))
    # ...and the last flush was at most ~1 s before the kill (flush period 0.5 s).
    assert rec.time_s[-1] >= last_stamp * 1e-9 - 1.0, (rec.time_s[-1], last_stamp * 1e-9)
    assert rec.current_a is not None and rec.tcp_wrench is not None

    # The salvaged bag can be rewritten as a finished bag that every tool opens.
    fixed = repair_bag(bag_path, tmp_path / "fixed")
    with Reader(fixed) as reader:
        assert reader.topics["/joint_states"].msgcount >= seqs.size
