"""The stand-in UR controller: wire format, control-script emulation, the real ur_rtde client, fuzzing.

The real-client tests run the stand-in in a child process (ur_rtde's binding keeps the GIL while it
blocks, so it cannot share a process with the server) on its own loopback address 127.0.0.2 (ur_rtde
always uses ports 30004/29999/30003; 127.0.0.2 also exercises the client's remote-control check).
The fuzz tests run the stand-in in-process on free ports of 127.0.0.4 and talk raw sockets.
"""

import math
import random
import re
import socket
import struct
import time

import numpy as np
import pytest

from robot_dynamics_id.sim.ur_controller import StandInController, StandInProcess, get_personality
from robot_dynamics_id.sim.ur_controller import rtde_protocol as rp
from robot_dynamics_id.sim.ur_controller.control_script import (
    SCRIPT_DONE, SCRIPT_READY, ControlScript, Registers, ScriptError, parse_register_offsets)
from robot_dynamics_id.sim.ur_controller.script_port import complete_programs
from robot_dynamics_id.sim.ur_controller.servers import check_loopback

CLIENT_HOST = "127.0.0.2"
FUZZ_HOST = "127.0.0.4"
RECEIVE_FIELDS = ["timestamp", "actual_q", "actual_qd", "actual_current", "target_moment", "actual_TCP_force",
                  "robot_mode", "safety_mode", "runtime_state"]


# ---- wire format and script emulation (no sockets) ------------------------------------------------------
def test_framing_round_trip_and_partial_packages():
    buf = bytearray(rp.frame(86, struct.pack(">H", 2)) + rp.frame(118) + rp.frame(85, b"\x01abc")[:5])
    packages = rp.split_packages(buf)
    assert packages == [(86, b"\x00\x02"), (118, b"")]
    assert len(buf) == 5  # the incomplete third package stays buffered
    with pytest.raises(rp.ProtocolError, match="smaller than the 3-byte header"):
        rp.split_packages(bytearray(b"\x00\x01U"))


def test_field_types_match_the_rtde_guide():
    assert rp.output_field_type("timestamp") == "DOUBLE"
    assert rp.output_field_type("actual_q") == "VECTOR6D"
    assert rp.output_field_type("robot_mode") == "INT32"
    assert rp.output_field_type("runtime_state") == "UINT32"
    assert rp.output_field_type("output_int_register_0") == "INT32"
    assert rp.output_field_type("input_double_register_30") == "DOUBLE"  # inputs are readable as outputs
    assert rp.output_field_type("output_int_register_48") is None
    assert rp.output_field_type("no_such_field") is None
    assert rp.input_field_type("input_int_register_24") == "INT32"
    assert rp.input_field_type("output_int_register_0") is None  # outputs cannot be written
    recipe = rp.Recipe(3, ["timestamp", "actual_q", "robot_mode"], ["DOUBLE", "VECTOR6D", "INT32"])
    values = {"timestamp": 1.5, "actual_q": (1, 2, 3, 4, 5, 6), "robot_mode": 7}
    payload = rp.pack_values(recipe, values)
    assert payload[0] == 3 and len(payload) == 1 + 8 + 48 + 4
    assert rp.unpack_values(recipe, payload[1:]) == values


def test_register_offsets_and_program_splitting():
    text = ("def rtde_control():\n    global reg_offset_float = # float register offset\n24"
            "    global reg_offset_int = # int register offset\n24    x = 1\nend\n")
    assert parse_register_offsets(text) == (24, 24)
    programs, rest = complete_programs("junk\n" + text + "def half():\n  y = 2\n")
    assert programs == [text]
    assert rest.startswith("def half")


class _FakePlant:
    def __init__(self):
        self.calls = []

    def speed_j(self, qd, a):
        self.calls.append(("speed_j", list(qd), a))

    def speed_stop(self, a):
        self.calls.append(("speed_stop", a))

    def direct_torque(self, tau):
        self.calls.append(("direct_torque", list(tau)))

    def protective_stop(self):
        self.calls.append(("protective_stop",))


def test_control_script_handshake_follows_the_ur_rtde_script():
    regs, plant, log = Registers(), _FakePlant(), []
    script = ControlScript(registers=regs, plant=plant, supports_direct_torque=True,
                           log=lambda level, m: log.append(m))
    assert regs.output_int[0] == SCRIPT_READY
    # real-time speedJ: processed every cycle while the id stays, answered "ready"
    regs.input_int[0] = 9
    regs.input_double[:8] = [0.1, 0, 0, 0, 0, 0, 2.0, 0.0]
    script.cycle()
    script.cycle()
    assert plant.calls == [("speed_j", [0.1, 0, 0, 0, 0, 0], 2.0)] * 2 and regs.output_int[0] == SCRIPT_READY
    # non-real-time speedStop: once, "done" until the client clears the command
    regs.input_int[0], regs.input_double[0] = 15, 4.0
    script.cycle()
    script.cycle()
    assert plant.calls[2:] == [("speed_stop", 4.0)] and regs.output_int[0] == SCRIPT_DONE
    regs.input_int[0] = 0
    script.cycle()
    assert regs.output_int[0] == SCRIPT_READY
    # watchdog, unknown command, NaN, stop script
    regs.input_int[0], regs.input_double[0] = 35, 20.0
    script.cycle()
    assert script.watchdog == ("input_int_register_0", 20.0)
    regs.input_int[0] = 0
    script.cycle()
    regs.input_int[0] = 200
    script.cycle()
    assert regs.output_int[0] == SCRIPT_DONE and any("unknown command id 200" in m for m in log)
    regs.input_int[0] = 9
    regs.input_double[0] = math.nan
    with pytest.raises(ScriptError, match="not a finite number"):
        script.cycle()
    regs.input_int[0] = 0  # the client clears a command before the next non-real-time one
    script.cycle()
    regs.input_int[0] = 255
    script.cycle()
    assert not script.running


def test_upper_range_offset_and_direct_torque_gate():
    regs, plant = Registers(), _FakePlant()
    script = ControlScript(registers=regs, plant=plant, int_offset=24, float_offset=24, supports_direct_torque=False)
    assert regs.output_int[24] == SCRIPT_READY and regs.output_int[0] == 0
    regs.input_int[24] = 66
    regs.input_double[24:30] = [1.0] * 6
    script.cycle()
    assert plant.calls == []  # compiled as a no-op below PolyScope 5.26 (ur_rtde 1.6.5)


def test_command_line_refuses_a_non_loopback_address():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "robot_dynamics_id.sim.ur_controller", "--host", "10.1.2.3"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "not a loopback address" in result.stderr


def test_personalities_and_loopback_guard():
    assert get_personality("cb3").rate_hz == 125.0 and get_personality("cb3").version[0] == 3
    assert get_personality("e-series").rate_hz == 500.0 and get_personality("e").version[0] == 5
    with pytest.raises(ValueError, match="unknown controller personality"):
        get_personality("cb2")
    assert check_loopback("127.3.2.1") == "127.3.2.1"
    with pytest.raises(ValueError, match="not a loopback address"):
        check_loopback("10.0.0.1")


# ---- the real ur_rtde client against a stand-in process -------------------------------------------------------
@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    proc = StandInProcess(personality="e-series", host=CLIENT_HOST, unlock_delay_s=0.2,
                          log_dir=tmp_path_factory.mktemp("standin"))
    try:
        yield proc
    finally:
        assert proc.stop() == 0, proc.log()


def _dashboard(host, line):
    with socket.create_connection((host, 29999), timeout=5) as s:
        f = s.makefile("rwb")
        welcome = f.readline().decode()
        f.write((line + "\n").encode())
        f.flush()
        return welcome.strip(), f.readline().decode().strip()


def _wait(predicate, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


def test_real_client_streams_moves_stops_and_sees_faults(standin):
    import rtde_control
    import rtde_receive

    receive = rtde_receive.RTDEReceiveInterface(CLIENT_HOST, 500.0, RECEIVE_FIELDS)
    control = rtde_control.RTDEControlInterface(CLIENT_HOST, 500.0)
    try:
        assert control.isProgramRunning() and receive.isConnected()
        t0 = receive.getTimestamp()
        time.sleep(0.2)
        assert receive.getTimestamp() > t0
        q0 = np.array(receive.getActualQ())
        assert q0 == pytest.approx([0, -1.5708, 1.5708, -1.5708, -1.5708, 0], abs=1e-3)

        assert control.speedJ([0.3, 0, 0, 0, 0, 0], 10.0, 0.0)
        assert _wait(lambda: abs(receive.getActualQd()[0] - 0.3) < 0.01, 2.0), receive.getActualQd()
        assert control.speedStop(10.0)
        assert _wait(lambda: abs(standin.state()["qd_rad_s"][0]) < 1e-3, 2.0)
        assert any(c.startswith("speedStop") for _, c in standin.stops())

        assert control.directTorque([0.0] * 6)
        assert _wait(lambda: standin.state()["mode"] == "torque", 1.0)
        assert control.speedStop(10.0)
        assert _wait(lambda: standin.state()["mode"] == "velocity", 1.0)

        # controller-side watchdog: silence for > 1/f stops the program (and the arm)
        assert control.setWatchdog(20.0)
        assert control.speedJ([0.2, 0, 0, 0, 0, 0], 10.0, 0.0)
        assert _wait(lambda: not control.isProgramRunning(), 2.0)
        _, events = standin.events()
        assert any("RTDE input watchdog" in e[2] for e in events)
        assert _wait(lambda: abs(standin.state()["qd_rad_s"][0]) < 1e-3, 2.0)
        assert control.speedJ([0.2, 0, 0, 0, 0, 0], 10.0, 0.0) is False  # refused: script not running
        assert control.reuploadScript()
        assert _wait(control.isProgramRunning, 5.0)

        # protective stop: refused commands, unlock on the dashboard (not before the unlock delay)
        assert control.triggerProtectiveStop()
        assert _wait(lambda: receive.getSafetyMode() == 3, 2.0)  # PROTECTIVE_STOP
        assert control.speedJ([0.2, 0, 0, 0, 0, 0], 10.0, 0.0) is False
        welcome, reply = _dashboard(CLIENT_HOST, "unlock protective stop")
        assert welcome == "Connected: Universal Robots Dashboard Server"
        assert reply.startswith("Cannot unlock protective stop until")
        time.sleep(0.25)
        assert _dashboard(CLIENT_HOST, "unlock protective stop")[1] == "Protective stop releasing"
        assert _wait(lambda: receive.getSafetyMode() == 1, 2.0)
        assert control.reuploadScript()
        assert _wait(control.isProgramRunning, 5.0)
        assert control.speedJ([0.1, 0, 0, 0, 0, 0], 10.0, 0.0)
        assert control.speedStop(10.0)
    finally:
        control.disconnect()
        receive.disconnect()
    assert _wait(lambda: standin.state()["rtde_clients"] == 0, 3.0)


def test_dropped_receive_connection_is_reported_and_reconnects(standin):
    import rtde_receive

    receive = rtde_receive.RTDEReceiveInterface(CLIENT_HOST, 500.0, RECEIVE_FIELDS)
    try:
        assert receive.isConnected()
        assert int(standin.command("drop rtde").split()[1]) >= 1
        # the client notices; its getters keep returning the last sample (the backend checks for that)
        assert _wait(lambda: not receive.isConnected(), 2.0)
        stale = receive.getTimestamp()
        time.sleep(0.05)
        assert receive.getTimestamp() == stale
        assert receive.reconnect()
        assert _wait(lambda: receive.getTimestamp() != stale, 2.0)
        # a stalled stream: still "connected", timestamp frozen, then it resumes
        standin.command("stall 0.3")
        time.sleep(0.05)
        frozen = receive.getTimestamp()
        time.sleep(0.1)
        assert receive.isConnected() and receive.getTimestamp() == frozen
        assert _wait(lambda: receive.getTimestamp() != frozen, 2.0)
    finally:
        receive.disconnect()


def test_every_cycle_command_is_executed_when_the_loop_runs_in_step_with_the_controller(standin):
    """A loop in step with the controller (read the new sample, command, end the cycle) must get every
    command executed. ur_rtde's kickWatchdog writes the script's command register like speedJ does, so a
    kick sent right after a speedJ in the same controller cycle replaced it and the arm kept the previous
    velocity (joint 0 ran off to its limit in the soak benchmark). The backend kicks only in cycles
    without a command; here the commanded velocity flips every 0.2 s and the arm's reference must follow."""
    from robot_dynamics_id.hardware.rtde_backend import RtdeBackend

    backend = RtdeBackend(robot_ip=CLIENT_HOST, rate_hz=500.0, controller_watchdog_hz=10.0)
    backend.connect()
    try:
        followed = []
        for target in (0.2, -0.2, 0.2, -0.2):
            end = time.monotonic() + 0.2
            while time.monotonic() < end:
                backend.read()  # waits for the next sample: in step with the controller
                backend.speed_j(np.array([target, 0, 0, 0, 0, 0]), 10.0)
                backend.end_cycle()
            followed.append(standin.state()["reference_qd_rad_s"][0])
        backend.speed_stop(10.0)
        backend.end_cycle()
        # 0.4 rad/s change at 10 rad/s^2 takes 40 ms of the 200 ms each target is held
        assert followed == pytest.approx([0.2, -0.2, 0.2, -0.2], abs=1e-6), followed
        assert standin.wait_until(lambda: abs(standin.state()["qd_rad_s"][0]) < 1e-3, 2.0)
    finally:
        backend.disconnect()


@pytest.mark.parametrize("fault", ["unreachable 0.5", "drop rtde"])
def test_arm_stops_without_the_node_when_the_client_is_cut_off(standin, fault):
    """A moving arm stops without any help from the node when its RTDE client is cut off.

    ``unreachable``: every port closes, so nothing reaches the controller: the control script's RTDE
    watchdog (``setWatchdog``, 10 Hz here) sees no input update for 1/f, stops the program, and the arm
    ramps down at the stop deceleration. ``drop rtde``: the connections close but the controller stays
    reachable: ur_rtde's control interface reconnects at once and its reconnect stops the script before
    uploading it again (seen with ur_rtde 1.6.5), so the arm stops even sooner. Either way the stop lands
    within the watchdog time; the client here sends nothing after the fault (the node's dashboard stop is
    not used)."""
    from robot_dynamics_id.hardware.rtde_backend import RtdeBackend

    watchdog_hz = 10.0
    watchdog_cycles = 500.0 / watchdog_hz
    backend = RtdeBackend(robot_ip=CLIENT_HOST, rate_hz=500.0, controller_watchdog_hz=watchdog_hz)
    backend.connect()
    try:
        give_up = time.monotonic() + 5.0
        while time.monotonic() < give_up and abs(standin.state()["qd_rad_s"][0] - 0.3) > 0.01:
            for _ in range(5):
                backend.speed_j(np.array([0.3, 0, 0, 0, 0, 0]), 10.0)
                backend.end_cycle()
                time.sleep(0.002)
        assert abs(standin.state()["qd_rad_s"][0] - 0.3) < 0.01, "the arm did not reach 0.3 rad/s"
        tick_fault = standin.state()["ticks"]
        standin.command(fault)
        assert standin.wait_until(lambda: not standin.state()["program_running"], 2.0)
        time.sleep(0.15)
        records = [r for r in standin.stop_records() if r[0] >= tick_fault]
        assert records, standin.stops()
        stop_tick, _, cause, deceleration, _ = records[0]
        if fault.startswith("unreachable"):
            assert "RTDE input watchdog" in cause, records
            # no update for more than rate / f cycles: the stop lands on the first cycle past the limit, counted
            # from the last update the controller received (its own clock: how long before the fault this test
            # process sent that update depends on the scheduler, so the fault tick only bounds it from above)
            silent_cycles = int(re.search(r"for (\d+) cycles", cause).group(1))
            assert silent_cycles == watchdog_cycles + 1, cause
            assert 0 < stop_tick - tick_fault <= watchdog_cycles + 2, (stop_tick, tick_fault)
        else:
            assert stop_tick - tick_fault <= watchdog_cycles + 2, (records, standin.events()[1][-8:])
        rows = {row[0]: row for row in standin.velocity_trace(stop_tick - 1)}
        assert all(t in rows for t in range(stop_tick - 1, max(rows) + 1))
        ref_before = rows[stop_tick - 1][2]
        assert ref_before == pytest.approx(0.3, abs=0.01)
        zero = min(t for t, row in rows.items() if t >= stop_tick and row[2] < 1e-9)
        # ramps down at the stop deceleration: ref / (deceleration * period) cycles, then the servo settles
        assert zero - stop_tick + 1 == pytest.approx(ref_before / (deceleration * 0.002), abs=1.01)
        assert max(row[3] for t, row in rows.items() if t >= zero + 12) <= 0.005
        time.sleep(0.5)  # reachable again: the receive interface can be disconnected cleanly
    finally:
        backend.disconnect()
    assert standin.wait_until(lambda: standin.state()["rtde_clients"] == 0, 3.0), \
        "\n".join(map(str, standin.events()[1][-15:]))


def test_dashboard_answers_like_polyscope(standin):
    import re

    assert re.search(r"\d+\.\d+\.\d+\.\d+", _dashboard(CLIENT_HOST, "PolyscopeVersion")[1])
    assert _dashboard(CLIENT_HOST, "is in remote control")[1] == "true"
    assert _dashboard(CLIENT_HOST, "get serial number")[1].isdigit()
    assert _dashboard(CLIENT_HOST, "robotmode")[1] == "Robotmode: RUNNING"
    assert _dashboard(CLIENT_HOST, "make coffee")[1] == "could not understand: 'make coffee'"
    _, events = standin.events()
    assert any("rejected: dashboard command not understood: 'make coffee'" in e[2] for e in events)


# ---- fuzzing the stand-in's inputs (in-process, raw sockets, free ports) --------------------------------------------
@pytest.fixture()
def local_controller():
    controller = StandInController(host=FUZZ_HOST, rtde_port=0, dashboard_port=0, script_ports=(0,),
                                   control_port=0, protective_stop_unlock_delay_s=0.0, noise=False)
    controller.start()
    try:
        yield controller
    finally:
        controller.stop()


def _rtde(controller):
    return socket.create_connection((FUZZ_HOST, controller.port("rtde")), timeout=2)


def _request(sock, ptype, payload=b""):
    sock.sendall(rp.frame(ptype, payload))
    header = b""
    while len(header) < 3:
        header += sock.recv(3 - len(header))
    size, rtype = rp.HEADER.unpack(header)
    body = b""
    while len(body) < size - 3:
        body += sock.recv(size - 3 - len(body))
    return rtype, body


def test_rtde_handshake_in_use_and_data_packages(local_controller):
    c = local_controller
    with _rtde(c) as a, _rtde(c) as b:
        assert _request(a, 86, struct.pack(">H", 2)) == (86, b"\x01")
        assert _request(a, 118)[1] == struct.pack(">IIII", *c.personality.version)
        rtype, body = _request(a, 79, struct.pack(">d", 250.0) + b"timestamp,actual_q,output_int_register_0,")
        assert body == b"\x01DOUBLE,VECTOR6D,INT32"
        assert _request(a, 73, b"input_int_register_0,input_double_register_0")[1] == b"\x01INT32,DOUBLE"
        assert _request(b, 86, struct.pack(">H", 2))[1] == b"\x01"
        rtype, body = _request(b, 73, b"input_int_register_0")
        assert body == b"\x00IN_USE"  # the other connection holds the register
        assert _request(a, 83) == (83, b"\x01")
        a.sendall(rp.frame(85, b"\x01" + struct.pack(">id", 9, 0.25)))
        assert _wait(lambda: c.registers.input_int[0] == 9 and c.registers.input_double[0] == 0.25, 1.0)
        # output packages arrive at 250 Hz with the recipe's layout
        a.settimeout(2)
        data = b""
        while len(data) < 3 + 1 + 8 + 48 + 4:
            data += a.recv(4096)
        size, ptype = rp.HEADER.unpack_from(data)
        assert ptype == 85 and size == 3 + 1 + 8 + 48 + 4 and data[3] == 1


def test_fuzzed_inputs_are_rejected_logged_and_survived(local_controller):
    c = local_controller
    rng = random.Random(1234)
    before = c.rejections
    malformed = [
        rp.frame(86, b"\x00"),                                  # version request of wrong length
        rp.frame(86, struct.pack(">H", 9)),                     # unsupported protocol version
        rp.frame(79, struct.pack(">d", math.nan) + b"timestamp"),
        rp.frame(79, struct.pack(">d", 10000.0) + b"timestamp"),
        rp.frame(79, struct.pack(">d", 100.0) + b"timestamp,,actual_q"),
        rp.frame(79, struct.pack(">d", 100.0) + "zeit\u00df".encode()),
        rp.frame(79, struct.pack(">d", 100.0) + b"no_such_field"),
        rp.frame(73, b"output_int_register_0"),
        rp.frame(85, b""),
        rp.frame(85, b"\x07abc"),
        rp.frame(42, b"?"),
    ]
    for package in malformed:
        with _rtde(c) as s:
            s.sendall(rp.frame(86, struct.pack(">H", 2)) + package)
            time.sleep(0.01)
    for _ in range(30):  # random byte streams, some with broken size fields
        with _rtde(c) as s:
            s.sendall(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
    with socket.create_connection((FUZZ_HOST, c.port("dashboard")), timeout=2) as s:
        f = s.makefile("rwb")
        f.readline()  # welcome
        for _ in range(40):
            line = "zz" + "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(0, 60)))
            f.write(line.encode() + b"\n")
            f.flush()
            assert f.readline().startswith(b"could not understand: ")
        f.write(b"x" * 10000 + b"\n")  # longer than a dashboard line may be: connection closed
        f.flush()
        assert f.readline() == b""
    with socket.create_connection((FUZZ_HOST, c.port("script0")), timeout=2) as s:
        s.sendall(b"\x00\xff garbage that is not a program\n")
    with socket.create_connection((FUZZ_HOST, c.port("control")), timeout=2) as s:
        s.sendall(b"stall -1\nbogus\nstall nan\n")
        time.sleep(0.1)
    assert _wait(lambda: c.rejections >= before + len(malformed) + 40, 3.0), c.rejections - before
    rejected = [e for e in c.events if e.message.startswith("rejected:")]
    assert len(rejected) >= len(malformed) + 40
    assert c._thread is not None and c._thread.is_alive()
    ticks = c.ticks
    assert _wait(lambda: c.ticks > ticks + 50, 2.0)
    assert not any("control loop error" in e.message for e in c.events)
    # still a working controller
    with _rtde(c) as s:
        assert _request(s, 86, struct.pack(">H", 2)) == (86, b"\x01")
        assert _request(s, 79, struct.pack(">d", 500.0) + b"timestamp")[1] == b"\x01DOUBLE"


def test_numeric_ring_keeps_the_newest_rows_oldest_first():
    from robot_dynamics_id.sim.ur_controller.controller import _NumericRing

    ring = _NumericRing(4, 2)
    assert len(ring) == 0 and ring.rows().shape == (0, 2)
    for i in range(6):
        ring.append(i, 10 * i)
    assert len(ring) == 4
    np.testing.assert_array_equal(ring.rows(), [[2, 20], [3, 30], [4, 40], [5, 50]])
    rows = ring.rows()
    rows[:] = -1  # a copy: the caller cannot change the record
    assert ring.rows()[0, 0] == 2
