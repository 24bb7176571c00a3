"""Read rosbag2 bags into a Recording: the storage layer (:mod:`.bag_storage`) and the decoding (:mod:`.bag_decode`).

Kept so that ``from robot_dynamics_id.io.bag_reader import ...`` goes on working for existing callers:

* :func:`open_bag` / :class:`BagSource` / :func:`bag_summary` (:mod:`.bag_storage`): open a bag directory
  or storage file, finished, unfinished or damaged, iterate its serialized messages, and say what could
  not be read (:meth:`BagSource.losses`);
* :func:`read_bag` / :class:`BagTopics` / :class:`JointVectorTopic` (:mod:`.bag_decode`): decode the
  package's (or the UR driver's) topics into a :class:`~.recording.Recording` on the robot's clock.

Every problem raises :class:`BagReadError` naming the bag, what is wrong and the fix.
"""

from __future__ import annotations

from .bag_decode import (
    FLOAT64_MULTI_ARRAY,
    JOINT_STATE,
    JOINT_STATES_EFFORT,
    WRENCH_STAMPED,
    BagTopics,
    JointVectorTopic,
    read_bag,
)
from .bag_storage import BagReadError, BagSource, bag_summary, open_bag

__all__ = [
    "FLOAT64_MULTI_ARRAY",
    "JOINT_STATE",
    "JOINT_STATES_EFFORT",
    "WRENCH_STAMPED",
    "BagReadError",
    "BagSource",
    "BagTopics",
    "JointVectorTopic",
    "bag_summary",
    "open_bag",
    "read_bag",
]
