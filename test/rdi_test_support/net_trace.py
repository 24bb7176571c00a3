"""Check from an strace log that a process sent nothing beyond loopback.

Used by the test that proves every ROS process of the package keeps DDS on
127.0.0.1 (Fast DDS multicasts discovery to 239.255.0.1 unless
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``). Parses the destination addresses
of ``sendto``/``sendmsg``/``sendmmsg``/``connect`` calls in
``strace -f -e trace=network`` output.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["destinations", "non_loopback_destinations"]

_CALL = re.compile(r"\b(sendto|sendmsg|sendmmsg|connect)\(")
_INET = re.compile(r'sin_addr=inet_addr\("([0-9.]+)"\)')
_INET6 = re.compile(r'inet_pton\(AF_INET6,\s*"([0-9a-fA-F:.]+)"')


def destinations(trace_text: str) -> list[tuple[str, str]]:
    """(call, address) for every IP destination in an strace log."""
    found = []
    for line in trace_text.splitlines():
        call = _CALL.search(line)
        if not call:
            continue
        for addr in _INET.findall(line) + _INET6.findall(line):
            found.append((call.group(1), addr))
    return found


def non_loopback_destinations(trace_text: str) -> list[tuple[str, str]]:
    """The destinations that are not loopback (127.0.0.0/8, ::1), e.g. DDS multicast 239.255.0.1."""
    bad = []
    for call, addr in destinations(trace_text):
        ip = ipaddress.ip_address(addr)
        if not ip.is_loopback and not (ip.version == 6 and ip.ipv4_mapped and ip.ipv4_mapped.is_loopback):
            bad.append((call, addr))
    return bad
