"""The fault matrix: each fault, what the user sees, what is kept, the exit code, and the test that shows it.

docs/faults.md is generated from :data:`FAULTS` (``python test/faults/fault_matrix.py --write``), and
test/faults/test_fault_matrix.py checks that the page is current and that every row's test exists. The
acceptance tests take their expectations from here (:func:`row`): the exit code, and ``phrase``, which must
appear in what the user sees (stderr, the node's log, or the warnings of a read). A row cannot claim
what no test shows, and a behaviour that changes fails its test until the row says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "faults.md"
#: the exit column of a fault met while reading a recording: the read goes on, the warnings say what is lost
READ = "read goes on"


@dataclass(frozen=True)
class Fault:
    id: str
    area: str
    fault: str
    sees: str  # what the user sees; ``phrase`` is part of it, verbatim
    phrase: str
    kept: str
    exit: int | str | None  # None: the process keeps running; a text where no process ends (a read)
    test: str  # path::function of the test that shows it


_NATURAL_OSCILLATION_TEST = ("test/nodes/test_natural_oscillation_node.py::"
                             "test_no_torque_or_refused_commands_stop_the_trials_and_the_output_is_kept")
_TOPICS_TEST = ("test/nodes/test_osc_controller_topics.py::"
                "test_a_topics_controller_refuses_another_arm_and_stops_on_a_fault_or_a_silent_robot")

FAULTS: tuple[Fault, ...] = (
    # ---- the robot connection -------------------------------------------------------------------------------
    Fault("rtde_silent_controller", "robot connection",
          "the controller accepts TCP on port 30004 but never answers (hung controller, another device)",
          "within 2 s, a warning naming the address and the step not answered, e.g. \"accepts TCP on the RTDE "
          "port 30004 but did not answer the protocol-version request within 1.5 s\"; retried with back-off; "
          "Ctrl-C or SIGTERM end the node within 2 s",
          "accepts TCP on the RTDE port 30004 but did not answer the protocol-version request within 1.5 s",
          "nothing was commanded (never connected)", 0,
          "test/faults/test_fault_acceptance.py::test_a_silent_controller_is_reported_and_signals_end_the_node"),
    Fault("rtde_hang_inside_ur_rtde", "robot connection",
          "the controller answers the probe, then hangs inside ur_rtde's own handshake (which holds the GIL)",
          "after 5 s (native_call_bound_s) the process ends with \"Timeout (0:00:05)!\" and every thread's stack "
          "on stderr",
          "Timeout (0:00:0",
          "the controller's RTDE watchdog and the control process (its pipe closes) stop the arm", 1,
          "test/faults/test_rtde_probe.py::test_a_controller_that_hangs_after_the_probe_ends_the_process_after_the_bound"),
    Fault("rtde_address", "robot connection", "robot_ip:=not.an.ip (not an address, does not resolve)",
          "one line: \"configuration error: parameter 'robot_ip' = 'not.an.ip' is not an IP address and does not "
          "resolve as a host name\"; no retries",
          "parameter 'robot_ip' = 'not.an.ip' is not an IP address and does not resolve as a host name",
          "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("rtde_cb3_rate", "robot connection", "rate_hz 500 against a CB3 controller (RTDE at 125 Hz)",
          "the connection attempt is refused with \"is a CB3 (software 3.x), whose RTDE runs at 125 Hz, but rate_hz "
          "is 500: set rate_hz: 125\"",
          "whose RTDE runs at 125 Hz, but rate_hz is 500: set rate_hz: 125",
          "nothing was commanded", None,
          "test/faults/test_rtde_probe.py::test_a_cb3_at_500_hz_is_refused_with_the_rate_to_use"),
    Fault("controller_cb3_rate", "robot connection",
          "osc_controller (direct) with rate_hz 500 against a CB3 controller (the default config/ur3.yaml)",
          "\"controller stopped: cannot use the robot as configured: … whose RTDE runs at 125 Hz, but rate_hz is "
          "500: set rate_hz: 125\"", "whose RTDE runs at 125 Hz, but rate_hz is 500: set rate_hz: 125",
          "nothing was commanded", 2,
          "test/nodes/test_osc_controller_rtde.py::test_a_cb3_at_the_e_series_rate_ends_the_controller_with_exit_2"),
    Fault("rtde_second_client", "robot connection",
          "a second ur_interface (or osc_controller direct) started against a controller another client holds",
          "one line: \"cannot use the robot as configured: cannot start the ur_rtde control interface …. Another "
          "RTDE client may hold them: only one program may command the robot (…)\"; no retries",
          "Another RTDE client may hold them: only one program may command the robot",
          "nothing sent; the first client keeps the controller", 2,
          "test/nodes/test_ur_interface_rtde.py::"
          "test_a_second_client_of_the_controller_ends_with_exit_2_and_the_first_keeps_it"),
    Fault("rtde_program_stopped", "robot connection",
          "the control script stopped on the controller while connected (a stop on the pendant or dashboard; a "
          "stop by the RTDE watchdog while this PC sent nothing is restarted by itself)",
          "\"program stopped on the controller (…): the arm stays stopped; restart the control script when it is "
          "safe (ur_interface: ~/resend_robot_program, std_msgs/Empty)\"; status fault until then",
          "program stopped on the controller", "the arm stopped; no script upload and no motion until "
          "~/resend_robot_program", None,
          "test/nodes/test_ur_interface_rtde.py::test_faults_stop_the_arm_report_and_recover"),
    Fault("rtde_connection_lost", "robot connection",
          "the robot stops answering on the control connection (cable pulled, robot powered off or rebooted)",
          "status fault \"robot loop error: lost the control connection to the robot at IP (network cable, robot "
          "powered off or rebooted; ur_rtde: …)\" (ur_rtde's own text, often \"Timeout connecting to UR dashboard "
          "server\", follows); retried with back-off",
          "lost the control connection to the robot at", "the arm stopped by the controller's RTDE watchdog",
          None, "test/hardware/test_rtde_backend.py::"
          "test_a_dead_control_connection_is_said_as_lost_with_ur_rtde_text_kept"),
    # ---- signals: one shutdown path -------------------------------------------------------------------------
    Fault("signal_excitation_streaming", "Ctrl-C / SIGTERM",
          "Ctrl-C or SIGTERM to the excitation while it streams velocities",
          "\"stop requested (signal): cancelling\"; the commanded velocity ramps to zero over ramp_s on the robot's "
          "clock (as ~/cancel does)",
          "stop requested (signal): cancelling",
          "the arm at rest on its path; the bag being recorded keeps the ramp", 6,
          "test/faults/test_fault_acceptance.py::test_a_signal_ramps_the_streaming_excitation_out_and_exits_6"),
    Fault("signal_excitation_trajectory", "Ctrl-C / SIGTERM",
          "Ctrl-C to the excitation while the trajectory controller executes its trajectory",
          "an empty trajectory is sent (the controller stops along the path); \"cancelled\"",
          "cancelled", "the arm at rest on its path", 6,
          "test/nodes/test_excitation_driver.py::test_ctrl_c_sends_the_stop_and_exits_cancelled"),
    Fault("signal_ur_interface_trajectory", "Ctrl-C / SIGTERM",
          "Ctrl-C or SIGTERM to ur_interface while it executes a trajectory",
          "\"stop requested (signal): the running trajectory stops along its path\"; the trajectory ends as "
          "cancelled, then the node disconnects",
          "stop requested (signal): the running trajectory stops along its path",
          "the arm at rest on the trajectory's path (not a stop off the path)", 0,
          "test/faults/test_fault_acceptance.py::test_a_signal_stops_ur_interfaces_trajectory_along_its_path"),
    Fault("signal_torque_logger", "Ctrl-C / SIGTERM", "Ctrl-C, SIGTERM or SIGHUP (terminal closed) to torque_logger",
          "\"bag … closed: N messages\"", "closed:",
          "a finished bag: metadata.yaml written, every message received is in it", 0,
          "test/faults/test_fault_acceptance.py::test_a_signal_finishes_the_bag_with_its_metadata"),
    Fault("signal_natural_oscillation", "Ctrl-C / SIGTERM", "Ctrl-C or SIGTERM to natural_oscillation",
          "\"natural oscillation cancelled (signal): arm stopped\"; no command after the zero-velocity stop",
          "natural oscillation cancelled (signal): arm stopped",
          "the trials finished so far on ~/progress and in output_file (status cancelled)", 6,
          "test/faults/test_fault_acceptance.py::test_a_signal_cancels_natural_oscillation_with_exit_6"),
    # ---- compatibility --------------------------------------------------------------------------------------
    Fault("model_for_another_robot", "compatibility",
          "osc_controller with a model_file identified on a UR10e and robot ur3",
          "one line: \"model_file … was identified for ur10e, but parameter 'robot' is ur3\"",
          "was identified for ur10e, but parameter 'robot' is ur3", "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_a_model_or_trajectory_for_another_robot_is_refused"),
    Fault("trajectory_for_another_robot", "compatibility",
          "an excitation planned for a UR10e run with robot ur3",
          "one line: \"trajectory … was planned for ur10e, but parameter 'robot' is ur3\"",
          "was planned for ur10e, but parameter 'robot' is ur3", "nothing moved", 2,
          "test/faults/test_fault_acceptance.py::test_a_model_or_trajectory_for_another_robot_is_refused"),
    Fault("trajectory_for_another_interface", "compatibility",
          "an excitation planned for a UR3e sent to ur_interface configured for a UR3",
          "one line: \"the robot interface runs a ur3 (/ur_interface/status), but this trajectory is for ur3e: "
          "start ur_interface with this arm's parameter file (config:=…) …\"",
          "the robot interface runs a ur3 (/ur_interface/status), but this trajectory is for ur3e",
          "nothing sent, the arm at rest", 2,
          "test/faults/test_fault_acceptance.py::test_an_interface_of_another_arm_or_lower_limits_gets_nothing"),
    Fault("trajectory_faster_than_interface", "compatibility",
          "an excitation faster than ur_interface's limits x its velocity_scale (a new arm started at 0.25)",
          "one line before the move to the start: \"the robot interface (/ur_interface/status) would refuse this "
          "trajectory: the trajectory needs … rad/s on <joint name>, above its limit here …\"",
          "would refuse this trajectory: the trajectory needs", "nothing sent, the arm at rest", 2,
          "test/faults/test_fault_acceptance.py::test_an_interface_of_another_arm_or_lower_limits_gets_nothing"),
    Fault("collision_monitor_wrong_robot_node", "compatibility",
          "collision_monitor started with a robot_node that is not the robot node's name (/ur_iface)",
          "once monitoring: \"no one subscribes to /ur_iface/protective_stop: a collision would not stop the arm; "
          "set robot_node to the robot node's name (e.g. /ur_interface)\"; /diagnostics ERROR",
          "no one subscribes to /ur_iface/protective_stop", "it keeps reporting collisions", None,
          "test/nodes/test_collision_monitor.py::test_collision_monitor_beside_ur_interface_stops_the_arm_through_it"),
    Fault("natural_oscillation_without_torque", "compatibility",
          "natural_oscillation beside a robot node that takes no torque commands (a CB3, supports_torque false)",
          "one line: \"natural oscillation refused: the robot node does not take torque commands (…: supports_torque "
          "false); the trials are torque-controlled: …\"", "does not take torque commands", "nothing moved; "
          "output_file with status refused", 2, _NATURAL_OSCILLATION_TEST),
    Fault("natural_oscillation_commands_refused", "robot connection",
          "the robot node refuses natural_oscillation's torque commands, or faults, during the trials",
          "\"the robot node refused our commands (…/status: <its event>): stopped\"", "the robot node refused our "
          "commands", "the arm stopped; the trials so far in output_file (status stopped); never \"does not "
          "fall\" for torque that was not applied", 3, _NATURAL_OSCILLATION_TEST),
    Fault("collision_monitor_for_another_arm", "compatibility",
          "collision_monitor with a UR3 model beside a robot node whose status names a UR5e",
          "one line: \"the robot node runs a ur5e (/other_arm/status), the model is of a ur3: give the model "
          "identified on this arm; not monitoring: collision_monitor ends (exit code 2)\"",
          "the robot node runs a ur5e (/other_arm/status), the model is of a ur3", "no stop sent", 2,
          "test/nodes/test_collision_monitor.py::test_collision_monitor_names_missing_samples_and_ends_with_exit_2_beside_another_arm"),
    Fault("controller_for_another_interface", "compatibility",
          "osc_controller (robot_connection topics) with a UR5e model beside ur_interface running a UR3",
          "one line: \"controller stopped: the robot node runs a ur3 (/ur_interface/status), but the controller's "
          "model is of a ur5e: give ur_interface this arm's parameter file (config:=), or a model of the ur3\"",
          "runs a ur3 (/ur_interface/status), but the controller's model is of a ur5e", "nothing sent", 2,
          _TOPICS_TEST),
    Fault("controller_robot_fault_over_topics", "robot connection",
          "a protective stop (or fault) of ur_interface while osc_controller commands it over topics",
          "\"controller stopped: robot fault: <the fault> (/ur_interface/status)\"; it stays stopped (restart it), "
          "Ctrl-C then exits 1", "controller stopped: robot fault", "the arm stopped by the robot; no command "
          "after the stop", 1, _TOPICS_TEST),
    Fault("controller_robot_node_gone", "robot connection",
          "the robot node (ur_interface, the UR driver) dies or stalls while osc_controller commands it over topics",
          "after state_timeout_s (0.5 s): \"controller stopped: no joint state for 0.50 s (state_timeout_s 0.5): "
          "the robot node is gone or stalled\"; a zero velocity, then nothing (before: full-speed commands into "
          "the void)", "controller stopped: no joint state for", "no command but the stop", 1, _TOPICS_TEST),
    Fault("trajectory_without_robot", "compatibility",
          "a trajectory file that does not say which robot it was planned for (older or hand-written)",
          "a warning: \"does not say which robot it was planned for … only checked against the ur3 limits\"; "
          "it runs",
          "does not say which robot it was planned for", "the run, checked against the configured robot's limits",
          None, "test/faults/test_fault_acceptance.py::test_a_model_or_trajectory_for_another_robot_is_refused"),
    # ---- configuration --------------------------------------------------------------------------------------
    Fault("unknown_parameter", "configuration", "a misspelt parameter in a params file (wachdog_s)",
          "one line: \"unknown parameter 'wachdog_s' (in FILE): did you mean 'watchdog_s'?\"",
          "unknown parameter 'wachdog_s' (in ", "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("integer_for_double", "configuration", "rate_hz:=500 (an integer where a double is declared)",
          "accepted as 500.0: the node starts (\"… 500 Hz …\" in its first line)", "500 Hz", "the node runs", None,
          "test/faults/test_fault_acceptance.py::test_an_integer_for_a_double_is_accepted"),
    Fault("wrong_type", "configuration", "watchdog_s:=abc (text where a number is declared)",
          "one line: \"parameter 'watchdog_s' = 'abc' (on the command line) is a string, but watchdog_s must be a "
          "number with a decimal point\"",
          "parameter 'watchdog_s' = 'abc' (on the command line) is a string", "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("malformed_params_file", "configuration", "a params file that is not valid YAML",
          "one line naming the file and the line: \"parameter file FILE is not valid YAML at line 4, column 1\"",
          "is not valid YAML at line", "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("missing_params_file", "configuration", "a params file that does not exist (or is a directory)",
          "one line: \"parameter file FILE does not exist: check the path given to --params-file\"",
          "does not exist: check the path given to --params-file", "nothing started", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("bag_path_unusable", "configuration",
          "torque_logger's bag_path exists, lies inside another bag, or cannot be created",
          "one line before anything is recorded, e.g. \"parameter 'bag_path': … is inside the bag …; choose a "
          "directory outside it\"",
          "is inside the bag", "the existing bag untouched; nothing recorded", 2,
          "test/faults/test_fault_acceptance.py::test_configuration_mistakes_are_one_line_and_exit_2"),
    Fault("params_file_other_node", "configuration", "a params file whose section names another node (ur_inteface:)",
          "one line: \"parameter file FILE has no section for node 'ur_interface': its sections are "
          "['ur_inteface'] (did you mean …)\"; rcl alone would ignore the whole file",
          "has no section for node 'ur_interface'", "nothing started", 2,
          "test/faults/test_parameter_files.py::test_a_file_without_a_section_for_the_node_is_refused_naming_the_close_one"),
    Fault("limit_beyond_rating", "configuration",
          "a ur_interface limit beyond the robot's rating or in another unit (torque 100 Nm on a UR3, positions "
          "in degrees, accelerations in deg/s^2)",
          "one line naming the joint and the bound: \"parameter 'torque_limits_nm'[0] = 100 Nm is beyond the "
          "robot's rated torque: 56 Nm\"",
          "is beyond the robot's rated torque", "nothing started", 2,
          "test/hardware/test_config.py::test_a_limit_beyond_the_rating_is_refused_naming_joint_and_bound"),
    Fault("configuration_refused_by_robot", "robot connection",
          "the robot answers and refuses the configuration (rate_hz 500 on a CB3's RTDE)",
          "one error, not retried, and ur_interface ends: \"cannot use the robot as configured: … set rate_hz: "
          "125\"",
          "cannot use the robot as configured", "nothing was commanded", 2,
          "test/nodes/test_ur_interface_rtde.py::test_a_configuration_the_robot_refuses_ends_the_node_with_exit_2"),
    Fault("controller_doubtful_payload", "configuration",
          "osc_controller's payload_file is a doubtful rdi payload result (status: doubtful: an empty flange, too "
          "little wrist motion)",
          "one line: \"parameter 'payload_file': FILE is a doubtful estimate (…): the controller would compensate "
          "a tool that may not be the mounted one. …\"",
          "is a doubtful estimate", "nothing started", 2,
          "test/nodes/test_osc_parameters.py::test_a_doubtful_payload_file_is_refused_with_the_way_out"),
    Fault("controller_target_below_floor", "configuration",
          "a ~/target_frame goal that puts the motion point or the tool tip below osc_controller's "
          "target_min_z_m, or whose way there may sweep the tip below it",
          "\"target_frame refused: motion target […] m puts the tool tip at z = … m, below the floor "
          "target_min_z_m = … m (base frame); …\" (or the motion point; or \"on the way to motion target […] the "
          "tool tip may pass z = … m …: send an intermediate goal\") in the log and ~/state's events",
          "below the floor target_min_z_m", "the arm holds its pose or keeps its last goal; the controller runs", None,
          "test/nodes/test_osc_controller.py::test_bad_targets_are_refused_with_a_message_and_the_arm_holds"),
    Fault("controller_starts_below_floor", "configuration",
          "osc_controller started with the arm below its target_min_z_m (the tool tip lower than the floor)",
          "\"controller stopped: … the arm starts with its tool tip at z = … m, below target_min_z_m = … m: "
          "move it above the floor (freedrive or the pendant) before starting the controller\"",
          "move it above the floor", "nothing commanded; the node stays stopped", 1,
          "test/nodes/test_osc_controller.py::test_an_arm_that_starts_below_the_floor_is_not_held_there"),
    Fault("result_file_in_result_folder", "configuration",
          "rdi payload / drive-gains --out inside a folder that rdi identify (validate, export) replaces whole "
          "(the model's folder)",
          "one line: \"--out model/payload.yaml points into model, the result of rdi identify, which a new run "
          "replaces whole: write the file beside it (--out payload.yaml)\"",
          "which a new run replaces whole", "nothing written", 1,
          "test/identification/test_output_dir.py::test_a_file_is_never_written_into_a_folder_a_rerun_replaces"),
    # ---- noise on a fault -----------------------------------------------------------------------------------
    Fault("command_flood", "repeated faults", "a publisher stuck on NaN velocity commands at 500 Hz",
          "at most one line a second: \"velocity command refused: … (N more since HH:MM:SS.mmm)\"; "
          "~/status counts every refusal (rejected_commands)",
          "more since", "the arm stopped at the first bad command; the node keeps running", None,
          "test/faults/test_fault_acceptance.py::test_a_flood_of_bad_commands_is_one_line_a_second_with_a_count"),
    # ---- recordings -----------------------------------------------------------------------------------------
    Fault("truncated_bag", "recordings",
          "a finished bag whose .mcap or .db3 was cut short (a copy interrupted)",
          "first warning: \"only 50 % of /joint_states read: 1,500 of the 3,000 messages metadata.yaml lists; "
          "1,500 lost after t=3.00 s (the recording runs to t=6.00 s)\"",
          "of /joint_states read:", "every complete message before the cut (sqlite: every readable row)", READ,
          "test/io/test_bag_reader.py::test_truncated_and_corrupt_files"),
    Fault("damaged_db3", "recordings", "a .db3 damaged in its middle (bad sectors)",
          "the unreadable rows with the times around them (\"unreadable: rows 1456-1486 (between t=2.91 s and "
          "t=2.97 s)\") and the loss against metadata.yaml",
          "unreadable: rows", "the readable rows on both sides of the damage", READ,
          "test/io/test_bag_losses.py::test_a_sqlite_file_damaged_in_its_middle_keeps_both_sides_and_names_what_is_lost"),
    Fault("gap_in_joint_states", "recordings", "a 1 h gap in /joint_states",
          "\"1 gap(s) longer than 5 sample periods (the longest 3.6e+03 s, after t=2.998 s): identification "
          "splits the recording at it\"",
          "identification splits the recording at it", "both segments, identified separately, never joined", READ,
          "test/io/test_bag_losses.py::test_an_hour_long_gap_is_reported_as_the_split_identification_makes"),
    Fault("recorder_left_mid_run", "recordings", "torque_logger killed (or stopped) while the excitation runs",
          "within ~6 s (its graph entry, or 5 silent /diagnostics periods) the excitation stops the arm and exits "
          "4: \"excitation stopped: ['torque_logger'] stopped recording (no longer subscribed, or silent on "
          "/diagnostics): the rest of the run would not be recorded; record it again\"; identifying the bag: \"the "
          "recording ends before its excitation finished\" (exit 3)",
          "stopped recording", "the bag up to the kill (no metadata.yaml after SIGKILL)", 4,
          "test/nodes/test_experiment.py::test_logger_killed_mid_run_keeps_all_but_the_last_second"),
    Fault("disk_full_logger", "recordings", "the disk fills while torque_logger records",
          "one error: \"cannot write the bag BAG: No space left on device; recording stopped. What was written "
          "before (N messages) stays readable\"; no traceback",
          "recording stopped", "every message written before the disk filled (rdi identify reads it)", 1,
          "test/nodes/test_torque_logger_disk.py::test_a_full_disk_stops_recording_with_exit_1_and_no_traceback"),
    Fault("csv_two_recordings", "recordings", "a ur_rtde CSV whose clock jumps back (two recordings in one file)",
          "\"the timestamp jumps back by 0.252 s at line 22 (…): the file holds two recordings, or the controller "
          "restarted. Split it into one file per recording\"",
          "the file holds two recordings, or the controller restarted", "nothing identified", 1,
          "test/io/test_ur_csv.py::test_two_recordings_in_one_file_are_refused_not_interleaved"),
    Fault("gap_in_other_signal", "recordings", "a gap in /motor_currents while /joint_states go on",
          "\"the 500 joint-state sample(s) inside have no current_a (NaN, not interpolated)\"",
          "(NaN, not interpolated)", "every sample outside the gap", READ,
          "test/io/test_bag_losses.py::test_a_gap_in_another_signal_leaves_nan_and_is_split_not_interpolated"),
)


def row(fault_id: str) -> Fault:
    """The matrix row of ``fault_id`` (KeyError naming the known ids)."""
    for fault in FAULTS:
        if fault.id == fault_id:
            return fault
    raise KeyError(f"no fault {fault_id!r} in the matrix; known: {[f.id for f in FAULTS]}")


def render() -> str:
    """docs/faults.md."""
    lines = [
        "# Faults and bad input: what you see, what is kept, the exit code",
        "",
        "<!-- Generated from test/faults/fault_matrix.py (python test/faults/fault_matrix.py --write); "
        "test/faults/test_fault_matrix.py checks it. -->",
        "",
        "Every row is shown by the test named in its last column, through the real executables where a node is "
        "involved. Exit codes: 0 done (or a service ended by a signal), 1 error, 2 configuration (nothing was "
        "started), 3 not at the start pose / the arm was stopped, 4 aborted, 5 the robot's joint states stopped, "
        "6 cancelled by Ctrl-C / SIGTERM before the job finished; \"runs\": the fault does not end the process; "
        "\"read goes on\": the recording is read with the warnings shown (they come first in "
        "`Recording.warnings`, and `rdi identify` prints them).",
        "",
    ]
    area = None
    for fault in FAULTS:
        if fault.area != area:
            area = fault.area
            lines += ["", f"## {area[0].upper() + area[1:]}", "",
                      "| fault | what you see | what is kept | exit | shown by |", "|---|---|---|---|---|"]
        code = "runs" if fault.exit is None else str(fault.exit)
        path, _, name = fault.test.partition("::")
        cells = [fault.fault, fault.sees, fault.kept, code, f"`{Path(path).name}::{name}`"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.parent.mkdir(parents=True, exist_ok=True)
        DOC.write_text(render())
        print(f"wrote {DOC}")
    else:
        sys.stdout.write(render())
