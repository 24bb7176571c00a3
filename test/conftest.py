"""Test-wide set-up: keep every ROS process on loopback, whoever runs pytest.

DDS discovery multicasts to 239.255.0.1 by default; these settings make Fast
DDS use 127.0.0.1 only. They are set here (not only in the Makefile) so that a
bare ``pytest`` run is just as safe, and they reach every subprocess a test
starts because subprocesses inherit ``os.environ``.
"""

import os
import random
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
if os.environ.get("ROS_DISTRO") == "humble":
    os.environ["ROS_LOCALHOST_ONLY"] = "1"
# A test-specific domain unless the caller (the Makefile) chose one for this run.
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(110, 160)))
os.environ.setdefault("MUJOCO_GL", "egl")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
