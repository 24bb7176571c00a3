"""Fault tests: the helpers beside these tests (misbehaving RTDE peers, the fault matrix) import by name."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
