"""How well training data determine a model: the condition number, stops, the rate, a cut or damaged recording,
and a consistent fit the data push away from the unconstrained one.

Run by ``rdi identify`` (and the identifier node) on the training data after the fit, :func:`rate_notes` on
every recording identify or validate scores; ``rdi excite`` judges a plan by the same condition-number bars.
Messages are returned: warnings, and problems that make the result doubtful (exit 3).
"""

from __future__ import annotations

import numpy as np

from ..io.bag_decode import PARTIAL_EXCITATION
from ..io.bag_storage import DATA_LOST

__all__ = ["CONDITION_DOUBTFUL", "CONDITION_WARN", "CONSISTENT_LOSS_FLOOR_NM", "CONSISTENT_LOSS_RATIO", "DOUBTFUL_RATE_HZ",
           "LOW_RATE_HZ", "STANDSTILL_NOTE_FRACTION", "consistent_fit_notes", "excitation_checks", "rate_notes",
           "rate_problems"]

#: column-normalised condition number of the base regressor above which the data determine the model poorly
#: (a warning) and above which the result is doubtful; an optimised 20-60 s excitation gives 10-300
CONDITION_WARN = 300.0
CONDITION_DOUBTFUL = 1000.0

#: recordings slower than this (Hz) get a note: their scores reflect the rate as well as the model
LOW_RATE_HZ = 90.0


def rate_notes(sample_period_s: float) -> list[str]:
    """A note on a recording slower than :data:`LOW_RATE_HZ`: accelerations from central differences of its
    samples are coarse and the 10 Hz scoring low-pass nears its Nyquist frequency, so its scores (fit, RRE, against
    any model) are worse than the model's; identification itself holds up better (benchmarks/RESULTS.md)."""
    rate = 1.0 / sample_period_s if sample_period_s > 0 else float("inf")
    if rate >= LOW_RATE_HZ:
        return []
    return [f"the recording's rate is {rate:.3g} Hz: accelerations from its samples are coarse, so scores on it "
            "reflect the rate as well as the model (the same model scores better on a faster recording of the same "
            f"motion). Record at {LOW_RATE_HZ + 10:.0f} Hz or more (ur_rtde: RTDEReceiveInterface(ip, 125 or 500))"]


#: training data slower than this (Hz) make the result doubtful: on the independent benchmark a model identified
#: from a 5 Hz recording predicted a base joint worse than UR's own model, while 12.5 and 25 Hz held up
#: (benchmarks/bench_identification_independent.py --record-every, benchmarks/RESULTS.md)
DOUBTFUL_RATE_HZ = 10.0


def rate_problems(sample_period_s: float) -> list[str]:
    """The problem of training data slower than :data:`DOUBTFUL_RATE_HZ` (identify then exits 3)."""
    rate = 1.0 / sample_period_s if sample_period_s > 0 else float("inf")
    if rate >= DOUBTFUL_RATE_HZ:
        return []
    return [f"the training data are recorded at {rate:.3g} Hz, below {DOUBTFUL_RATE_HZ:g} Hz: their accelerations "
            "are too coarse to identify from (at 5 Hz a model predicted a joint worse than UR's own). Record the "
            "excitation at 100 Hz or more (ur_rtde: RTDEReceiveInterface(ip, 125 or 500); a host-polled recorder at "
            "its full rate)"]


#: training data in which every joint stands still (below 0.02 rad/s) for more than this fraction of the samples get a
#: note: an optimised excitation keeps the joints moving (< 2 % at rest), a point-to-point run stops (~40 %)
STANDSTILL_NOTE_FRACTION = 0.3


def excitation_checks(condition_number: float, warnings=(), *, condition_number_p2: float | None = None,
                      friction_terms=(), qd_rad_s=None, friction_chosen: bool = False) -> tuple[list[str], list[str]]:
    """(warnings, problems) about how well the data determine the model: the base regressor's column-normalised
    condition number above :data:`CONDITION_WARN` / :data:`CONDITION_DOUBTFUL` (a few seconds of motion, or one
    too poor: the fit may match the data and predict anything elsewhere; when the rigid body and P2 friction alone,
    ``condition_number_p2``, are well determined, the extended ``friction_terms`` chosen are named as the cause,
    not the motion's length; ``friction_chosen``: the terms were chosen on held-out data, ``--friction-model auto``,
    so the fix named is the excitation, not a simpler family), a bag whose recording ended before
    its excitation did (``warnings`` from the reader beginning with PARTIAL_EXCITATION), and one that lost part of
    its recording (a storage file missing, messages unreadable: :data:`~..io.bag_storage.DATA_LOST`), and training
    data (velocities ``qd_rad_s``) that stand still for more than :data:`STANDSTILL_NOTE_FRACTION` of the samples."""
    problems = [f"the training data: {w}; identify the whole run (record it again)" for w in warnings
                if w.startswith(PARTIAL_EXCITATION)]
    problems += [f"the training data: part of the recording is not in them ({w}); identify the whole run (copy the "
                 "bag again from where it was recorded)" for w in warnings if any(p in w for p in DATA_LOST)]
    text = (f"the data determine the model poorly: the regressor's condition number is {condition_number:.0f} (an "
            "optimised excitation of 20-60 s gives 10-300); the model may fit these data and predict other motions "
            "badly. Record a longer or richer excitation (rdi excite plan)")
    if condition_number_p2 is not None and condition_number_p2 <= CONDITION_WARN < condition_number:
        extended = sorted({t for t in friction_terms if t != "p2"})
        text = (f"the data determine the extended friction terms ({', '.join(extended)}) poorly one by one: with "
                f"them the regressor's condition number is {condition_number:.0f}, with the rigid body and P2 friction "
                f"alone {condition_number_p2:.0f} (well determined: the motion is not too short). Their parameters "
                "trade off against each other, the fitted friction curve much less")
        text += (": the automatic choice kept them because they predicted held-out parts of the recording better "
                 "(model.yaml provenance.friction_model). Read the friction curve they make (friction.png, or "
                 "dynamics.friction.steady_friction_curve of model.yaml), not single friction parameters; to pin "
                 "those down, record an excitation that spans more speeds and loads"
                 if friction_chosen else
                 "; if the model predicts other motions badly, let held-out data choose the terms (--friction-model "
                 "auto), or record an excitation that spans more speeds and loads")
    # between the first and the last motion: rest before and after a run (a recorder started early) is no stop
    still, qd = 0.0, None if qd_rad_s is None else np.abs(np.asarray(qd_rad_s, float))
    moving = np.array([], int) if qd is None else np.flatnonzero(np.any(qd >= 0.02, axis=1))
    if moving.size > 1:
        still = float(np.mean(np.all(qd[moving[0]: moving[-1] + 1] < 0.02, axis=1)))
    notes = [] if still <= STANDSTILL_NOTE_FRACTION else [
        f"the arm stands still in {100 * still:.0f} % of the training data (stops, as in a point-to-point run or a "
        "lab's program): identification learns from motion, and rests hold torques that depend on the motion "
        "before them. Identify from an optimised excitation (rdi excite plan --kind fourier) and validate on runs "
        "like this one (were the training and validation files swapped?)"]
    if condition_number > CONDITION_DOUBTFUL:
        return notes, [*problems, text]
    return ([text] if condition_number > CONDITION_WARN else []) + notes, problems


#: the physically consistent model's training RMS residual on a joint above this multiple of the unconstrained
#: linear fit's (and above :data:`CONSISTENT_LOSS_FLOOR_NM` more): a note. On well-excited recordings the two are
#: within 1.25x on every joint (benchmarks/RESULTS.md, the twenty-sixth session)
CONSISTENT_LOSS_RATIO = 1.5
CONSISTENT_LOSS_FLOOR_NM = 0.02


def consistent_fit_notes(training_moving_rms_nm: dict, joint_names) -> list[str]:
    """A note on joints whose physically consistent model fits the training data clearly worse than the
    unconstrained linear estimate it starts from (``training_moving_rms_nm``: model.yaml's provenance of that
    name, {"linear": [...], "model": [...]} in Nm): there the data ask for link parameters no rigid body has,
    which a poorly determined direction, or a torque the model lacks, lets the linear fit use."""
    linear = np.asarray(training_moving_rms_nm.get("linear", ()), float)
    model = np.asarray(training_moving_rms_nm.get("model", ()), float)
    if linear.shape != model.shape or not linear.size:
        return []
    worse = np.flatnonzero((model > CONSISTENT_LOSS_RATIO * linear) & (model - linear > CONSISTENT_LOSS_FLOOR_NM))
    if not worse.size:
        return []
    listed = ", ".join(f"{joint_names[j]} {model[j]:.3g} Nm against {linear[j]:.3g} Nm" for j in worse)
    return [f"the physically consistent model fits the training data of some joints clearly worse than the "
            f"unconstrained fit (moving-sample RMS error {listed}): the unconstrained fit uses link parameters no "
            "rigid body has, which these data do not rule out (a poorly determined direction, or a torque the model "
            "lacks). Held-out data decide which predicts better: rdi identify --method wls --validate DATA against "
            "the default; a richer excitation (rdi excite plan) usually removes the gap"]
