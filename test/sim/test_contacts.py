"""External loads on the simulated arm's links (sim/contacts.py and the plant's use of them)."""

import numpy as np
import pytest

from robot_dynamics_id.sim.contacts import (HARD_OBSTACLE, SOFT_OBSTACLE, LinkPush, SphereObstacle, load_loads_file,
                                            loads_from_dicts)
from robot_dynamics_id.sim.plant import SimulatedUR

Q0 = np.array([0.3, -1.2, 1.4, -1.5, -1.5, 0.2])


def test_push_profile_rises_holds_and_releases():
    push = LinkPush(link=3, point_m=(0.1, 0, 0), force_n=(0, 40.0, 0), start_s=1.0, rise_s=0.1, hold_s=0.5)
    assert push.magnitude(0.99) == 0.0
    assert push.magnitude(1.05) == pytest.approx(0.5)
    assert push.magnitude(1.3) == 1.0
    assert push.magnitude(1.65) == pytest.approx(0.5)
    assert push.magnitude(1.71) == 0.0
    np.testing.assert_allclose(push.force_world_n(1.3, None, None), [0, 40.0, 0])


def test_sphere_obstacle_pushes_along_the_normal_and_never_pulls():
    wall = SphereObstacle(link=2, point_m=(0, 0, 0), centre_m=(1.0, 0, 0), radius_m=0.1, material=SOFT_OBSTACLE,
                          link_radius_m=0.05)
    assert np.all(wall.force_world_n(0, np.array([0.8, 0, 0]), np.zeros(3)) == 0)
    inside = wall.force_world_n(0, np.array([0.86, 0, 0]), np.zeros(3))  # 1 cm deep
    np.testing.assert_allclose(inside, [-SOFT_OBSTACLE.stiffness_n_per_m * 0.01, 0, 0])
    leaving_fast = wall.force_world_n(0, np.array([0.86, 0, 0]), np.array([-10.0, 0, 0]))
    assert np.all(leaving_fast == 0)  # the damper would pull: clipped
    assert HARD_OBSTACLE.stiffness_n_per_m > 10 * SOFT_OBSTACLE.stiffness_n_per_m


def test_loads_round_trip_through_a_file_and_bad_entries_are_named(tmp_path):
    import yaml

    loads = [LinkPush(link=3, point_m=(0.1, 0, 0), force_n=(0, 40.0, 0), start_s=1.0),
             SphereObstacle(link=4, point_m=(0, 0, 0.05), centre_m=(0.3, 0.2, 0.4), radius_m=0.05,
                            material=HARD_OBSTACLE)]
    path = tmp_path / "loads.yaml"
    path.write_text(yaml.safe_dump([load.to_dict() for load in loads]))
    again = load_loads_file(path)
    assert [a.to_dict() for a in again] == [load.to_dict() for load in loads]
    with pytest.raises(ValueError, match="load 0: kind 'hand' is unknown"):
        loads_from_dicts([{"kind": "hand"}])
    with pytest.raises(ValueError, match="load 0: missing key 'force_n'"):
        loads_from_dicts([{"kind": "push", "link": 2, "point_m": [0, 0, 0], "start_s": 0}])
    with pytest.raises(ValueError, match="links 1..6"):
        SimulatedUR(robot="ur3", rate_hz=500, external_loads=[LinkPush(link=7, point_m=(0, 0, 0), force_n=(1, 0, 0),
                                                                       start_s=0)])


def test_plant_reports_the_push_it_applies_and_the_arm_yields_to_it():
    push = LinkPush(link=3, point_m=(0.1, 0, 0.05), force_n=(0, 0, -60.0), start_s=0.1, rise_s=0.02, hold_s=1.0)
    plant = SimulatedUR(robot="ur3", rate_hz=500, initial_q_rad=Q0, external_loads=[push], noise=False)
    free = SimulatedUR(robot="ur3", rate_hz=500, initial_q_rad=Q0, noise=False)
    peaks = []
    for _ in range(150):
        plant.step()
        free.step()
        peaks.append(plant.external_load_peak_n[0])
    assert peaks[40] == 0.0 and max(peaks) == pytest.approx(60.0)
    np.testing.assert_allclose(plant.external_load_force_n[0], [0, 0, -60.0])
    # the stiff servo holds the arm against the push, but not rigidly: it yields a little
    deflection = np.abs(plant.q_true_rad - free.q_true_rad).max()
    assert 1e-6 < deflection < 0.01


def test_protective_stop_does_not_keep_pressing_into_an_obstacle():
    """A stop starts from the arm's actual state: a reference that ran ahead into an obstacle is dropped."""
    plant = SimulatedUR(robot="ur3", rate_hz=500, initial_q_rad=Q0, noise=False)
    plant.speed_j(np.array([0.3, 0, 0, 0, 0, 0]), 10.0)
    for _ in range(100):
        plant.step()
    # put a hard obstacle 2 mm in front of the wrist and let the arm run into it for 100 ms
    from robot_dynamics_id.scenarios.collisions import _point_state

    rm = plant.truth.robot_model()
    data = rm.model.createData()
    position, velocity = _point_state(rm.model, data, plant.q_true_rad, plant.qd_true_rad_s, 4, np.zeros(3))
    ahead = velocity / np.linalg.norm(velocity)
    wall = SphereObstacle(link=4, point_m=(0, 0, 0), centre_m=tuple(position + 0.102 * ahead), radius_m=0.05,
                          material=HARD_OBSTACLE, link_radius_m=0.05)
    plant.set_external_loads([wall])
    pressing = 0.0
    for _ in range(50):
        plant.step()
        pressing = max(pressing, plant.external_load_peak_n[0])
    assert pressing > 50.0
    plant.protective_stop()
    for _ in range(250):
        plant.step()
    assert plant.external_load_peak_n[0] < 0.5 * pressing
    assert np.abs(plant.qd_true_rad_s).max() < 5e-3
