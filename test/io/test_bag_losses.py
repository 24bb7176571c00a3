"""What a damaged or gappy bag loses is stated, and what is read matches what the rest of the package does.

* a sqlite3 file damaged in its middle: both sides are salvaged, the unreadable rows are named with the
  times around them, and the loss against metadata.yaml's count is the first warning;
* a gap (here 1 h) in the joint states: the warning says the recording is split there, and the
  identification's preprocessing does split it (the message cannot drift from the behaviour);
* a gap in another stamped signal: the joint-state samples inside it get NaN (nothing is interpolated
  across the gap), preprocessing leaves them out, and validation marks exactly them ``non_finite``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from robot_dynamics_id.identification.preprocessing import preprocess
from robot_dynamics_id.identification.validation import validate_recording
from robot_dynamics_id.io.bag_reader import bag_summary, read_bag
from robot_dynamics_id.io.bag_writer import BagWriter, joint_state
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots import JOINT_NAMES, load_robot

PERIOD_NS = 2_000_000  # 500 Hz


def _sine(k: int) -> np.ndarray:
    return 0.3 * np.sin(2 * np.pi * 0.5 * k * PERIOD_NS * 1e-9 + np.arange(6))


def _write(path: Path, stamps_ns, *, storage: str = "mcap", currents_ns=None) -> Path:
    with BagWriter(path, storage=storage) as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        if currents_ns is not None:
            bag.add_topic("/motor_currents", "sensor_msgs/msg/JointState")
        for k, t in enumerate(stamps_ns):
            q = _sine(k)
            bag.write("/joint_states", int(t), joint_state(int(t), JOINT_NAMES, q, np.gradient(q), 10 * q))
            if k % 500 == 499:
                bag.flush()
        for t in currents_ns if currents_ns is not None else ():
            bag.write("/motor_currents", int(t), joint_state(int(t), JOINT_NAMES, effort=np.ones(6)))
    return path


def test_a_sqlite_file_damaged_in_its_middle_keeps_both_sides_and_names_what_is_lost(tmp_path):
    stamps = 10**9 + PERIOD_NS * np.arange(3000)
    bag = _write(tmp_path / "b", stamps, storage="sqlite3")
    damaged = tmp_path / "damaged"
    shutil.copytree(bag, damaged)
    db = next(damaged.glob("*.db3"))
    data = bytearray(db.read_bytes())
    middle = len(data) // 4096 // 2
    data[middle * 4096:(middle + 3) * 4096] = bytes(3 * 4096)  # three pages of zeros, as a bad sector leaves
    db.write_bytes(bytes(data))
    rec = read_bag(damaged)
    read = rec.n_samples
    assert 2800 < read < 3000
    t = rec.time_s - rec.time_s[0]
    jump = np.flatnonzero(np.diff(t) > 0.003)
    assert jump.size == 1 and t[-1] == (3000 - 1) * PERIOD_NS * 1e-9  # the second half is there too
    np.testing.assert_allclose(rec.q_rad[-1], _sine(2999))
    assert rec.warnings[0] == (f"only {round(100 * read / 3000)} % of /joint_states read: {read:,} of the 3,000 "
                               f"messages metadata.yaml lists; {3000 - read:,} lost in the unreadable stretches "
                               "listed in the damaged-file warning"), rec.warnings
    salvage = next(w for w in rec.warnings if "damaged sqlite3 file" in w)
    assert (f"salvaged its {read:,} readable messages; unreadable: rows " in salvage
            and f"(between t={t[jump[0]]:.2f} s and t={t[jump[0] + 1]:.2f} s)" in salvage), salvage
    assert f"/joint_states: {read:,} of the 3,000 messages metadata.yaml lists are readable" in bag_summary(damaged)


def test_an_hour_long_gap_is_reported_as_the_split_identification_makes(tmp_path):
    stamps = np.r_[10**9 + PERIOD_NS * np.arange(1500), 10**9 + 3600 * 10**9 + PERIOD_NS * np.arange(1500)]
    rec = read_bag(_write(tmp_path / "gap", stamps))
    (gap,) = [w for w in rec.warnings if "gap" in w]
    assert gap.startswith("/joint_states: 1 gap(s) longer than 5 sample periods (the longest 3.6e+03 s, after "
                          "t=2.998 s): identification splits the recording at it"), gap
    assert "interpolated across" not in " ".join(rec.warnings)
    data = preprocess(rec.time_s, rec.q_rad, rec.effort_nm, qd_rad_s=rec.qd_rad_s)
    assert data.n_segments == 2 and data.n_gaps == 1


def test_a_gap_in_another_signal_leaves_nan_and_is_split_not_interpolated(tmp_path):
    stamps = 10**9 + PERIOD_NS * np.arange(3000)
    currents = np.r_[stamps[:1000], stamps[1500:]]  # /motor_currents missing for 1 s in the middle
    rec = read_bag(_write(tmp_path / "b", stamps, currents_ns=currents))
    inside = np.flatnonzero(np.isnan(rec.current_a[:, 0]))
    np.testing.assert_array_equal(inside, np.arange(1000, 1500))
    (gap,) = [w for w in rec.warnings if "gap" in w]
    assert gap.startswith("/motor_currents: 1 gap(s) longer than 5 sample periods (the longest 1 s, after t=1.998 s); "
                          "the 500 joint-state sample(s) inside have no current_a (NaN, not interpolated)"), gap
    data = preprocess(rec.time_s, rec.q_rad, rec.current_a, qd_rad_s=rec.qd_rad_s)
    assert data.n_segments == 2
    # Validation (every sample at its own timestamp) agrees: exactly those samples have no value and are
    # marked non_finite; both sides are scored, the filter edges at the gap are not.
    result = validate_recording(DynamicModel.nominal("ur3"), rec, 10.0 * rec.current_a, load_robot("ur3"),
                                cutoff_hz=None)
    np.testing.assert_array_equal(np.flatnonzero(result.status == "non_finite"), inside)
    assert result.scored[:1000].any() and result.scored[1500:].any()
    assert result.status[999] == "edge" and result.status[1500] == "edge"
