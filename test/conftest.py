"""Test-wide set-up: keep every ROS process on loopback, whoever runs pytest.

DDS discovery multicasts to 239.255.0.1 by default; these settings make Fast
DDS use 127.0.0.1 only. They are set here (not only in the Makefile) so that a
bare ``pytest`` run is just as safe, and they reach every subprocess a test
starts because subprocesses inherit ``os.environ``.
"""

import os
import sys
from pathlib import Path

# Test-only helpers live in test/rdi_test_support (never installed): importable as rdi_test_support.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from robot_dynamics_id.ros_processes import reserve_domain_id

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
if os.environ.get("ROS_DISTRO") == "humble":
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
# A DDS domain of this test session's own: parallel runs on one machine never hear each other.
os.environ["ROS_DOMAIN_ID"] = str(reserve_domain_id())
os.environ.setdefault("MUJOCO_GL", "egl")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
