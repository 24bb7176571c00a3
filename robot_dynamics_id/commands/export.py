"""``rdi export``: write an identified model in another package's form (ur_description).

A model that is not physically consistent (``--method wls|ols|irls``) is refused (exit 1); one that identify
called doubtful is exported with its problems repeated and exit 3. ``--out`` never replaces the result of another
rdi command (the identified model among them).
"""

from __future__ import annotations

import argparse

COMMAND = "export"
HELP = ("write an identified model in ur_description's form: physical_parameters.yaml, a URDF in its frames, "
        "joint_dynamics.yaml, friction and drive gains")

FORMATS = ("ur_description",)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model.yaml written by rdi identify")
    parser.add_argument("--format", default="ur_description", choices=FORMATS,
                        help="ur_description: Universal_Robots_ROS2_Description's physical_parameters.yaml and "
                             "frames (default)")
    parser.add_argument("--out", required=True, help="output folder: new, empty or an earlier rdi result (replaced "
                                                     "when the export is complete)")
    parser.add_argument("--tf-prefix", default="", help="prefix of link and joint names in the URDF, as the UR driver's")


def run(args: argparse.Namespace) -> int:
    import sys

    import numpy as np

    from ..identification.data_checks import link_mass_notes
    from ..identification.output_dir import check_output_dir, staged_output
    from ..io.model_file import DynamicModel
    from ..io.ur_description import export_ur_description
    from ..robots.model import STANDARD_GRAVITY_M_S2

    out = check_output_dir(args.out, inputs=[args.model], command="export")  # not a bag, a model, foreign files
    model = DynamicModel.load(args.model)
    bad = np.flatnonzero(~model.is_physically_consistent())
    if bad.size:
        raise ValueError(f"{args.model}: link(s) {bad.tolist()} are not physically consistent (a mass or inertia no "
                         f"body has; method {model.provenance.get('method', 'unknown')}): ur_description, Gazebo and "
                         "MoveIt need real bodies; identify with --method consistent (the default)")
    with staged_output(out, command="export") as staging:
        paths = {name: out / path.name
                 for name, path in export_ur_description(model, staging, tf_prefix=args.tf_prefix).items()}
    for note in link_mass_notes(model.link_mass_kg, model.kinematics()):
        print(f"note: {note}", file=sys.stderr)
    gravity = model.gravity_m_s2
    if not np.allclose(gravity, STANDARD_GRAVITY_M_S2, atol=1e-9):
        listed = ", ".join(f"{v:g}" for v in gravity)
        print(f"warning: the model was identified for gravity ({listed}) m/s² in the base frame (a tilted, wall or "
              "ceiling mount); a URDF does not hold it: mount base_link in your world with the same rotation",
              file=sys.stderr)
    for name, path in paths.items():
        print(f"{name}: {path}")
    doubtful = model.provenance.get("status") == "doubtful"
    for problem in model.provenance.get("problems") or [] if doubtful else []:
        print(f"rdi export: DOUBTFUL: the model was identified as doubtful: {problem}", file=sys.stderr)
    prefix = f"tf_prefix:={args.tf_prefix} " if args.tf_prefix else ""
    print(f"with ur_description: xacro ur.urdf.xacro ur_type:={model.kinematics().description.name} name:=ur {prefix}"
          f"physical_params:={paths['physical_parameters'].resolve()}  (or copy it over "
          "config/<ur_type>/physical_parameters.yaml)")
    return 3 if doubtful else 0
