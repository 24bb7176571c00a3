"""Which UR controller generation the stand-in pretends to be.

A CB3 (URControl 3.x, RTDE at 125 Hz, no direct torque, no remote-control mode)
or an e-Series (5.x, 500 Hz, direct_torque from PolyScope 5.23 on). The
versions, the dashboard's version string and serial number are what a client
reads to decide which features it may use.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PERSONALITIES", "Personality", "get_personality"]


@dataclass(frozen=True)
class Personality:
    """Controller generation facts a client can observe."""

    name: str
    #: URControl version (major, minor, bugfix, build) as RTDE GET_URCONTROL_VERSION reports it
    version: tuple[int, int, int, int]
    #: RTDE / control loop rate, Hz (CB3 125, e-Series 500; ur.md "Rates")
    rate_hz: float
    #: the dashboard's ``PolyscopeVersion`` reply
    polyscope_version: str
    #: the dashboard's ``get serial number`` reply (PolyScope >= 5.6 only)
    serial_number: str | None
    #: dashboard ``get robot model`` reply
    robot_model: str
    #: the controller runs direct_torque (PolyScope >= 5.23; ur.md "Torque control"). ur_rtde 1.6.5 puts
    #: the call into its script only for version >= 5.26 (a ``$5.26`` line tag), hence the e-Series default
    #: version 5.26; the stand-in follows the uploaded script either way.
    supports_direct_torque: bool
    #: e-Series has local/remote control; CB3 does not know the command
    has_remote_control: bool
    #: seconds after a protective stop before ``unlock protective stop`` is accepted (PolyScope: 5 s)
    protective_stop_unlock_delay_s: float = 5.0

    @property
    def version_string(self) -> str:
        return ".".join(str(v) for v in self.version)


PERSONALITIES: dict[str, Personality] = {
    "cb3": Personality(
        name="cb3", version=(3, 15, 7, 106331), rate_hz=125.0,
        polyscope_version="URSoftware 3.15.7.106331 (Mar 17 2021)", serial_number=None,
        robot_model="UR3", supports_direct_torque=False, has_remote_control=False),
    "e-series": Personality(
        name="e-series", version=(5, 26, 0, 130000), rate_hz=500.0,
        polyscope_version="URSoftware 5.26.0.130000 (Nov 01 2025)", serial_number="20235500123",
        robot_model="UR3", supports_direct_torque=True, has_remote_control=True),
}


def get_personality(name: str) -> Personality:
    """``cb3`` or ``e-series`` (``eseries`` and ``e`` accepted)."""
    key = {"eseries": "e-series", "e": "e-series", "e_series": "e-series"}.get(name.lower(), name.lower())
    if key not in PERSONALITIES:
        raise ValueError(f"unknown controller personality {name!r}: choose one of {sorted(PERSONALITIES)}")
    return PERSONALITIES[key]
