"""``rdi params [NODE] [--markdown]``: the parameters each node declares, from the nodes' own tables.

The README's parameter reference is this command's output, and a test checks
that the README and the config files agree with the tables, so none can drift.
"""

from __future__ import annotations

import argparse
import importlib

COMMAND = "params"
HELP = "list the ROS parameters of each node (name, type, default, unit, description)"

#: node executable -> (module, table attribute)
NODE_TABLES = {
    "ur_interface": ("robot_dynamics_id.hardware.config", "UR_INTERFACE_PARAMETERS"),
    "excitation": ("robot_dynamics_id.nodes.excitation", "EXCITATION_PARAMETERS"),
    "torque_logger": ("robot_dynamics_id.nodes.torque_logger", "TORQUE_LOGGER_PARAMETERS"),
    "identifier": ("robot_dynamics_id.nodes.identifier", "IDENTIFIER_PARAMETERS"),
    "osc_controller": ("robot_dynamics_id.nodes.osc_controller", "OSC_CONTROLLER_PARAMETERS"),
    "natural_oscillation": ("robot_dynamics_id.nodes.natural_oscillation", "NATURAL_OSCILLATION_PARAMETERS"),
}


def node_parameters(node: str):
    """The ParameterSpec table of a node executable."""
    if node not in NODE_TABLES:
        raise ValueError(f"unknown node {node!r}; nodes: {', '.join(NODE_TABLES)}")
    module, attr = NODE_TABLES[node]
    return getattr(importlib.import_module(module), attr)


def available_nodes() -> list[str]:
    """Nodes whose modules exist in this installation."""
    out = []
    for name, (module, _) in NODE_TABLES.items():
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            continue
        out.append(name)
    return out


def reference_markdown() -> str:
    """The README's parameter reference: one table per node."""
    from ..parameters import markdown_table

    parts = []
    for node in available_nodes():
        parts.append(f"#### `{node}`\n\n{markdown_table(node_parameters(node))}\n")
    return "\n".join(parts)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("node", nargs="?", help="one node (default: all)")


def run(args: argparse.Namespace) -> int:
    from ..parameters import markdown_table

    if args.node:
        print(markdown_table(node_parameters(args.node)))
    else:
        print(reference_markdown())
    return 0
