"""The polishing task's targets: an approach that ends without contact stops the task instead of waiting."""

import numpy as np
import pytest

from robot_dynamics_id.control.contact import ContactStage
from robot_dynamics_id.control.tasks import CONTACT_WAIT_S, ContactMissed, PolishingTask


def _task():
    return PolishingTask(start_position_m=[0.3, 0.0, 0.2], start_rotation=np.eye(3),
                         tip_offset_base_m=[0.0, 0.0, -0.11], expected_surface_z_m=0.005)


def test_the_approach_reaches_below_the_expected_surface_then_waits_for_contact():
    task = _task()
    end = task.targets(task.approach_time_s, ContactStage.APPROACH)
    assert end.position_m[2] - 0.11 == pytest.approx(0.005 - 0.02)  # the tip aims 2 cm below the surface
    task.targets(task.approach_time_s + 0.9 * CONTACT_WAIT_S, ContactStage.APPROACH)  # still waiting


def test_no_contact_after_the_wait_stops_the_task_naming_the_surface_height():
    task = _task()
    with pytest.raises(ContactMissed, match=r"tip reached z = -0.015 m, 0.020 m below the expected surface "
                                            r"\(polishing_surface_z_m = 0.005 m\)"):
        task.targets(task.approach_time_s + 1.1 * CONTACT_WAIT_S, ContactStage.APPROACH)
    # in contact the same time is fine: the stages after the approach never miss
    task.targets(task.approach_time_s + 1.1 * CONTACT_WAIT_S, ContactStage.IMPACT)
