"""The RTDE handshake probe and the backend's bounds, against misbehaving peers on loopback (no ROS).

Each peer is a Python socket server on a 127.x address of its own (port 30004: ur_rtde has no port
argument). The probe must name the step the controller did not answer, within its deadline, and give up at
once when the caller stops; the backend must refuse a CB3 at 500 Hz and never wait on a silent controller.
"""

import subprocess
import sys
import time

import pytest
from fault_matrix import row
from rtde_peers import RtdePeer, free_loopback_host

from robot_dynamics_id.hardware.backend import BackendConfigurationError, BackendError
from robot_dynamics_id.hardware.config import check_robot_address
from robot_dynamics_id.hardware.rtde_backend import RtdeBackend
from robot_dynamics_id.hardware.rtde_probe import ControllerVersion, RtdeProbeError, probe_rtde
from robot_dynamics_id.parameters import ParameterError

FIELDS = ["timestamp", "actual_q"]


def _probe(host, **kwargs):
    return probe_rtde(host, fields=FIELDS, frequency_hz=500.0, **kwargs)


@pytest.mark.parametrize("answer, step", [
    (0, "the protocol-version request"),
    (1, "the version request"),
    (2, "the output set-up"),
    (3, "the start request"),
    (4, "with a first data package after the start"),
])
def test_a_peer_that_stops_answering_is_reported_at_the_step_it_stopped(answer, step):
    with RtdePeer(answer=answer) as peer:
        start = time.monotonic()
        with pytest.raises(RtdeProbeError) as info:
            _probe(peer.host, timeout_s=0.5)
        took = time.monotonic() - start
    assert f"did not answer {step} within 0.5 s" in str(info.value)
    assert peer.host in str(info.value)
    assert 0.5 <= took < 1.5  # the deadline, not ur_rtde's unbounded wait


def test_a_controller_that_answers_everything_gives_its_version():
    with RtdePeer(answer=10, data_packages=5, version=(5, 23, 1, 7)) as peer:
        version = _probe(peer.host, timeout_s=2.0)
        deadline = time.monotonic() + 2.0
        while len(peer.requests) < 5 and time.monotonic() < deadline:  # the peer's thread reads the pause
            time.sleep(0.01)
    assert version == ControllerVersion(5, 23, 1, 7) and not version.is_cb3
    assert [chr(k) for k in peer.requests[:5]] == ["V", "v", "O", "S", "P"]


def test_nothing_listening_is_a_refused_connection_named_as_such():
    host = free_loopback_host()
    with pytest.raises(RtdeProbeError, match="refuses connections on the RTDE port 30004"):
        _probe(host, timeout_s=1.0)


def test_a_stopping_caller_ends_the_probe_within_one_poll():
    with RtdePeer(answer=0) as peer:
        start = time.monotonic()
        with pytest.raises(BackendError, match="shutting down"):
            _probe(peer.host, timeout_s=30.0, should_stop=lambda: time.monotonic() - start > 0.2)
        assert time.monotonic() - start < 0.5


def test_a_cb3_at_500_hz_is_refused_with_the_rate_to_use():
    with RtdePeer(answer=10, data_packages=5, version=(3, 15, 7, 0)) as peer:
        backend = RtdeBackend(robot_ip=peer.host, rate_hz=500.0, answer_timeout_s=2.0)
        with pytest.raises(BackendError, match=r"is a CB3 \(software 3.15.7.0\)") as info:
            backend.connect()
        backend.disconnect()
    assert row("rtde_cb3_rate").phrase in str(info.value)


def test_an_e_series_at_the_cb3_rate_is_noted_once():
    # a CB3's parameter file on an e-Series runs: allowed, said (the robot loop logs the note when connected)
    with RtdePeer(answer=10, data_packages=5, version=(5, 23, 0, 0)) as peer:
        backend = RtdeBackend(robot_ip=peer.host, rate_hz=125.0, answer_timeout_s=2.0)
        backend._probe()
        backend._probe()  # a reconnection: not again
        backend.disconnect()
    assert len(backend.notes) == 1, backend.notes
    assert "is an e-Series (software 5.23.0.0), whose RTDE runs at 500 Hz, but rate_hz is 125" in backend.notes[0]


@pytest.mark.parametrize("version", [(3, 15, 7, 0), (5, 22, 1, 0)])
def test_torque_control_on_a_controller_without_direct_torque_is_refused(version):
    """A CB3, or an e-Series below PolyScope 5.23, runs a script whose direct_torque does nothing: a torque law
    would think it controls an arm that nothing moves."""
    with RtdePeer(answer=10, data_packages=5, version=version) as peer:
        backend = RtdeBackend(robot_ip=peer.host, rate_hz=125.0, supports_torque=True, answer_timeout_s=2.0)
        with pytest.raises(BackendConfigurationError, match=r"direct_torque needs an e-Series with PolyScope 5.23"):
            backend.connect()
        backend.disconnect()


def test_the_backend_reports_a_silent_controller_instead_of_hanging():
    with RtdePeer(answer=0) as peer:
        backend = RtdeBackend(robot_ip=peer.host, rate_hz=500.0, answer_timeout_s=0.5)
        start = time.monotonic()
        with pytest.raises(BackendError, match="did not answer the protocol-version request"):
            backend.connect()
        assert time.monotonic() - start < 1.5
        backend.disconnect()


def test_a_controller_that_hangs_after_the_probe_ends_the_process_after_the_bound():
    """The last resort: ur_rtde's own handshake blocks holding the GIL (the peer answers the probe's
    connection only); nothing in Python can interrupt it, so the process ends after native_call_bound_s."""
    with RtdePeer(answer=10, data_packages=5, answer_connections=1) as peer:
        code = ("from robot_dynamics_id.hardware.rtde_backend import RtdeBackend\n"
                f"RtdeBackend(robot_ip={peer.host!r}, rate_hz=500.0, native_call_bound_s=1.0).connect()\n"
                "print('connect returned')\n")
        start = time.monotonic()
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        took = time.monotonic() - start
    assert result.returncode == 1, result
    assert "Timeout (0:00:01)" in result.stderr and "_open_receive" in result.stderr, result.stderr
    assert "connect returned" not in result.stdout
    assert took < 10


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "localhost", "192.168.1.10"])
def test_addresses_that_work_are_accepted(address):
    assert check_robot_address(address) == address


@pytest.mark.parametrize("address, message", [
    ("not.an.ip", "does not resolve as a host name"),
    ("192.168.1.300", "not a valid IPv4 address"),
    ("bad host", "neither an IP address nor a host name"),
    ("", "neither an IP address nor a host name"),
])
def test_addresses_that_cannot_work_are_configuration_errors(address, message):
    with pytest.raises(ParameterError, match=message) as info:
        check_robot_address(address)
    assert "robot_ip" in str(info.value)
