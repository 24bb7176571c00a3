"""Issue 4's acceptance, end to end on the simulated UR3 (MuJoCo plant), at a shorter run length.

Perturbed truth (masses, CoMs, inertias, rotor inertia, friction, drive gains), measurement
noise, the UR-like servo: a known-payload experiment identifies the drive gains, the
identifier then finds the model from the run without payload (current x identified gains)
and is validated on a different optimised excitation with other noise. The bars are the
real ones (gains 2 %, validation fit 97 % on every joint, base parameters with relative
std < 1 % within 3 % of the truth, every link physically consistent); only the runs are
shorter (20 s / 10 s instead of 60 s / 30 s; benchmarks/bench_identification_plant.py runs
the full case, the annealing baseline and the other robots).
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_dynamics_id.dynamics.regressor import full_parameter_vector
from robot_dynamics_id.identification.drive_gains import identify_drive_gains_from_recordings
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify, validate
from robot_dynamics_id.robots.model import load_robot
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
from robot_dynamics_id.sim.experiment import run_experiment, run_known_payload_experiment

TRUTH_SEED = 7


@pytest.fixture(scope="module")
def scenario():
    robot = load_robot("ur3")
    training = planned_fourier_excitation(robot, duration_s=20.0, seed=0, max_iterations=15)
    validation = planned_fourier_excitation(robot, duration_s=10.0, seed=5, max_iterations=15)
    pair = run_known_payload_experiment(training, payload_kg=2.4, payload_com_m=(0.1, 0.05, 0.05), robot="ur3",
                                        truth_seed=TRUTH_SEED, noise_seed=0)
    check = run_experiment(validation, robot="ur3", truth=pair.truth, noise_seed=2)
    gains = identify_drive_gains_from_recordings(
        robot, pair.without_payload.recording, pair.with_payload.recording, payload_mass_kg=pair.payload.mass_kg,
        payload_com_m=pair.payload.com_m, payload_inertia_about_com_kgm2=pair.payload.inertia_about_com_kgm2)
    # The plant's friction is seeds.md P2 eq. (11) + offset, and the base-parameter bar compares the P2
    # parameters: identify with that family (the automatic choice may add a term where it predicts the
    # held-out blocks better, e.g. load-dependent Coulomb on the elbow here, and then the P2 Coulomb
    # value is no longer the plant's; test_friction_fit covers the choice).
    options = IdentificationOptions(torque_source="current", drive_gains_nm_per_a=gains.gains_nm_per_a,
                                    friction_model="p2")
    result = identify(pair.without_payload.recording, robot, options)
    metrics = validate(result.model, check.recording, robot, options, cutoff_hz=result.data.cutoff_hz)
    return {"truth": pair.truth, "gains": gains, "result": result, "validation": metrics}


def test_drive_gains_from_the_known_payload_are_within_2_percent(scenario):
    truth_gains = scenario["truth"].drive_gains_nm_per_a
    # the truth's gains are drawn +-10 % around the nominal ones: being within 2 % is not a given
    assert np.max(np.abs(truth_gains / np.array([10, 10, 8, 6, 6, 6.0]) - 1)) > 0.05
    error = scenario["gains"].gains_nm_per_a / truth_gains - 1
    assert np.all(np.abs(error) < 0.02), f"drive gain errors {np.round(100 * error, 2)} %"


def test_validation_fit_is_at_least_97_percent_on_every_joint(scenario):
    fit = np.asarray(scenario["validation"]["fit_percent"])
    assert np.all(fit >= 97.0), f"validation fit {np.round(fit, 2)} %"
    assert np.all(np.asarray(scenario["result"].metrics["fit_percent"]) >= 97.0)


def test_every_identified_link_is_physically_consistent(scenario):
    assert np.all(scenario["result"].physically_consistent_links)


def test_well_determined_base_parameters_are_within_3_percent_of_the_truth(scenario):
    result, truth = scenario["result"], scenario["truth"]
    truth_base = result.base_map.base_from_standard(
        full_parameter_vector(truth.standard_parameters(), truth.rotor_inertia_kgm2, truth.friction))
    est = result.base_estimate
    well = est.std / np.abs(est.parameters) < 0.01
    assert well.sum() >= 15  # the bar must cover a real share of the 64 base parameters
    error = np.abs(est.parameters[well] - truth_base[well]) / np.abs(truth_base[well])
    names = [result.base_map.names[i] for i in np.flatnonzero(well)]
    worst = int(np.argmax(error))
    assert error.max() < 0.03, f"{names[worst]}: {100 * error[worst]:.2f} % off the truth"
