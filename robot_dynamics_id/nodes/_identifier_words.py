"""The identifier node's words for the job's messages: its parameters where the job names ``rdi`` options.

The identification job (identification/job.py, payload_job.py, data_checks.py) is shared by ``rdi identify``
and the identifier node, and its messages name the fix as a command-line option (``pass --robot ur10e``). A
user of the node sets parameters instead, so the node rewrites each option it has a parameter for: a value
option followed by its value becomes ``robot:=ur10e`` (a list ``[...]``), a bare one the parameter's name, a switch
``name:=true``. Options inside a quoted ``rdi`` command (``rdi excite plan --kind payload``) are that command's
and stay as they are, as do options the node does not have.
"""

from __future__ import annotations

import re

#: ``rdi identify`` / ``rdi payload`` option -> the identifier node's parameter (IDENTIFIER_PARAMETERS)
VALUE_OPTIONS = {
    "data": "data_path", "robot": "robot", "urdf": "robot", "gravity": "gravity_m_s2", "out": "out_dir",
    "method": "method", "friction-model": "friction_model", "presliding-distance": "presliding_distance_rad",
    "validate": "validation_data_path", "drive-gains": "drive_gains_nm_per_a (or drive_gains_file)",
    "torque-source": "torque_source", "joint-states-effort": "joint_states_effort",
    "topic": "the *_topic parameters", "nan-policy": "nan_policy", "tool-frame": "tool_frame",
    "moving-threshold": "moving_threshold_rad_s", "model": "payload_model_file",
}
LIST_OPTIONS = {"drive-gains", "gravity", "presliding-distance"}  # comma-separated on the command line
SWITCHES = {"ur-driver-topics": "ur_driver_topics", "skip-robot-check": "skip_robot_check",
            "compare-baseline": "compare_baseline", "compare-ur-model": "compare_ur_model"}

# an option, then (optionally) a value: a word that is not prose ("--robot is", "--skip-robot-check if")
_OPTION = re.compile(r"--([a-z][a-z-]*)(?: (?!(?:if|is|and|or|the|to|with|apply|are|instead|on|in|of)\b)"
                     r"([A-Za-z0-9_./{}'\[\]-](?:[^\s,;:)`]|,(?=\S))*))?")
# a command the user is told to run: its options are its own (up to the end of the clause)
_COMMAND = re.compile(r"\brdi [a-z-]+(?: [a-z]+)?[^;,)`]*")


def _rewrite(match: re.Match) -> str:
    option, value = match.group(1), match.group(2)
    stop = "." if value and value.endswith(".") else ""  # the sentence's full stop
    value = value[:-1] if stop else value
    if option in SWITCHES:
        return f"{SWITCHES[option]}:=true" + (f" {value}" if value else "") + stop
    if option not in VALUE_OPTIONS:
        return match.group(0)
    name = VALUE_OPTIONS[option]
    if not value:
        return name + stop
    if option in LIST_OPTIONS and "{" not in value:
        value = f"[{value}]"
    return f"{name.split(' ')[0]}:={value}{stop}"


def as_node_parameters(text: str) -> str:
    """``text`` with the ``rdi`` options the node has parameters for named as those parameters."""
    out, end = [], 0
    for command in _COMMAND.finditer(text):
        out.append(_OPTION.sub(_rewrite, text[end:command.start()]))
        out.append(command.group(0))
        end = command.end()
    out.append(_OPTION.sub(_rewrite, text[end:]))
    return "".join(out)
