"""``rdi export``: where it writes (never into a bag, the model's own folder or someone's files) and what it says."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.cli import main
from robot_dynamics_id.io.model_file import DynamicModel


@pytest.fixture
def model_path(tmp_path):
    return DynamicModel.nominal("ur3").save(tmp_path / "model" / "model.yaml")


def test_export_writes_a_complete_folder_and_replaces_only_its_own(tmp_path, model_path, capsys):
    out = tmp_path / "export"
    assert main(["export", "--model", str(model_path), "--out", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir())
    assert "physical_parameters.yaml" in written and "ur3_identified.urdf" in written
    assert main(["export", "--model", str(model_path), "--out", str(out), "--tf-prefix", "left/"]) == 0  # again
    assert "left/base_link" in (out / "ur3_identified.urdf").read_text()
    printed = capsys.readouterr()
    assert "note:" not in printed.err  # nominal masses: nothing to say
    assert "xacro ur.urdf.xacro ur_type:=ur3 name:=ur" in printed.out


@pytest.mark.parametrize("where, expected", [
    ("bag", "points into the bag"),
    ("model", "is the folder holding the input"),
    ("foreign", "holds files that are not an earlier rdi result"),
])
def test_export_refuses_a_bag_the_models_folder_and_foreign_files(tmp_path, model_path, capsys, where, expected):
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine\n")
    out = {"bag": tmp_path / "bag", "model": model_path.parent, "foreign": tmp_path / "foreign"}[where]
    before = sorted(p.name for p in out.iterdir())
    assert main(["export", "--model", str(model_path), "--out", str(out)]) == 1
    assert expected in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_tf_prefix_that_is_no_ros_name_is_refused(tmp_path, model_path, capsys):
    assert main(["export", "--model", str(model_path), "--out", str(tmp_path / "e"), "--tf-prefix", "bad prefix/"]) == 1
    assert "--tf-prefix 'bad prefix/' is not a ROS name prefix" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


def test_single_link_masses_far_from_nominal_are_noted_not_hidden(tmp_path, capsys):
    nominal = DynamicModel.nominal("ur3")
    masses = nominal.link_mass_kg.copy()
    masses[2] *= 0.02  # the forearm: 25 g, as an identification may split the elbow's mass
    inertia = nominal.link_inertia_kgm2.copy()
    inertia[2] *= 0.02
    path = replace(nominal, link_mass_kg=masses, link_inertia_kgm2=inertia).save(tmp_path / "m" / "model.yaml")
    assert main(["export", "--model", str(path), "--out", str(tmp_path / "e")]) == 0
    err = capsys.readouterr().err
    assert "note: Single link masses far from the nominal ur3's: link 3 0.0252 kg (0.02x nominal)" in err
    assert np.isclose(DynamicModel.load(path).link_mass_kg[2], 0.0252)


def test_export_never_replaces_another_commands_result(tmp_path, model_path, capsys):
    identified = tmp_path / "identified"  # an identify result: its marker names the command
    identified.mkdir()
    (identified / "model.yaml").write_text(model_path.read_text())
    (identified / ".rdi-output.json").write_text('{"command": "identify", "complete": true}\n')
    assert main(["export", "--model", str(model_path), "--out", str(identified)]) == 1
    assert "holds the result of rdi identify: choose a new folder" in capsys.readouterr().err
    assert sorted(p.name for p in identified.iterdir()) == [".rdi-output.json", "model.yaml"]


def test_an_inconsistent_model_is_refused_and_a_doubtful_one_exits_3(tmp_path, capsys):
    nominal = DynamicModel.nominal("ur3")
    inertia = nominal.link_inertia_kgm2.copy()
    inertia[1] = np.diag([-0.09, -0.05, 0.06])  # what --method wls may give: no body has it
    wls = replace(nominal, link_inertia_kgm2=inertia, provenance={"method": "wls"}).save(tmp_path / "w" / "model.yaml")
    assert main(["export", "--model", str(wls), "--out", str(tmp_path / "e")]) == 1
    assert "link(s) [1] are not physically consistent" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()
    doubtful = replace(nominal, provenance={"status": "doubtful", "problems": ["training fit below zero: elbow"]})
    path = doubtful.save(tmp_path / "d" / "model.yaml")
    assert main(["export", "--model", str(path), "--out", str(tmp_path / "e")]) == 3
    assert "DOUBTFUL: the model was identified as doubtful: training fit below zero: elbow" in capsys.readouterr().err
    assert (tmp_path / "e" / "physical_parameters.yaml").is_file()
