"""Output folders: checked before any work, complete or absent afterwards."""

from pathlib import Path

import pytest

from robot_dynamics_id.identification.output_dir import (MARKER, OutputDirError, check_output_dir, check_output_file,
                                                         discard_staging, staged_output, staging_path)


def test_bad_output_paths_are_refused_in_one_line(tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(OutputDirError, match="is a file"):
        check_output_dir(a_file)
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: {}")
    with pytest.raises(OutputDirError, match="points into the bag"):
        check_output_dir(bag / "out")
    with pytest.raises(OutputDirError, match="points into the input data"):
        check_output_dir(bag, inputs=[bag])
    csv = tmp_path / "data" / "run.csv"
    csv.parent.mkdir()
    csv.write_text("timestamp\n")
    with pytest.raises(OutputDirError, match="folder holding the input"):
        check_output_dir(csv.parent, inputs=[csv])
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(OutputDirError, match="not an earlier rdi result") as info:
        check_output_dir(foreign)
    assert "\n" not in str(info.value) and (foreign / "notes.txt").read_text() == "keep me"
    assert check_output_dir(tmp_path / "new" / "deeper") == (tmp_path / "new" / "deeper").resolve()


def test_a_file_is_never_written_into_a_folder_a_rerun_replaces(tmp_path):
    """`rdi payload --out model` wrote model/payload.yaml; the next `rdi identify --out model` replaced the folder and
    the payload with it, without a word."""
    with staged_output(tmp_path / "model", command="identify") as stage:
        (stage / "model.yaml").write_text("x")
    for out in (tmp_path / "model", tmp_path / "model" / "payload.yaml"):
        with pytest.raises(OutputDirError, match=r"the result of rdi identify, which a new run replaces whole: "
                                                 r"write the file beside it \(--out .*payload.yaml\)"):
            check_output_file(out, default_name="payload.yaml", earlier_result=lambda path: True, what="payload file")
    assert check_output_file(tmp_path, default_name="payload.yaml", earlier_result=lambda path: True,
                             what="payload file") == (tmp_path / "payload.yaml").resolve()
    from robot_dynamics_id.cli import main  # as rdi payload says it: exit 1, nothing written

    assert main(["payload", "--model", str(tmp_path / "model" / "model.yaml"), "--data", str(tmp_path / "run.csv"),
                 "--out", str(tmp_path / "model")]) == 1
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == [MARKER, "model.yaml"]


def test_unwritable_parent_is_refused(tmp_path, monkeypatch):
    import robot_dynamics_id.identification.output_dir as output_dir

    locked = tmp_path / "locked"
    locked.mkdir()
    # the permission test itself, as os.access answers it for an unprivileged user (root may write anywhere)
    monkeypatch.setattr(output_dir.os, "access", lambda path, mode: Path(path) != locked)
    with pytest.raises(OutputDirError, match="permission denied"):
        check_output_dir(locked / "out")
    check_output_dir(tmp_path / "out")


def test_a_finished_job_appears_whole_and_replaces_only_an_earlier_result(tmp_path):
    out = tmp_path / "result"
    with staged_output(out, command="identify") as stage:
        (stage / "model.yaml").write_text("first")
        assert not out.exists()  # nothing under the final name while the job runs
    assert (out / "model.yaml").read_text() == "first" and (out / MARKER).is_file()
    check_output_dir(out)  # an earlier result may be replaced ...
    with staged_output(out, command="identify") as stage:
        (stage / "model.yaml").write_text("second")
    assert (out / "model.yaml").read_text() == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result"]  # no staging or replaced folder left


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_job_leaves_nothing(tmp_path, error):
    out = tmp_path / "result"
    with pytest.raises(error):
        with staged_output(out, command="identify") as stage:
            (stage / "model.yaml").write_text("half")
            raise error()
    assert list(tmp_path.iterdir()) == []


def test_an_earlier_result_survives_an_interrupted_rerun(tmp_path):
    out = tmp_path / "result"
    with staged_output(out, command="validate") as stage:
        (stage / "metrics.json").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with staged_output(out, command="validate") as stage:
            raise KeyboardInterrupt
    assert (out / "metrics.json").read_text() == "old"


def test_a_staging_folder_can_be_discarded_by_its_process(tmp_path):
    out = tmp_path / "result"
    staging_path(out).mkdir()
    assert discard_staging(out) and not staging_path(out).exists()
    assert not discard_staging(out)


def test_a_result_that_also_holds_the_users_files_is_not_replaced(tmp_path):
    """A lab put its notes and photos into an identify result; the next `rdi identify --out` into it deleted them
    with exit 0. The marker lists what the result wrote; anything else makes the folder the user's."""
    out = tmp_path / "rep"
    with staged_output(out, command="identify") as stage:
        (stage / "model.yaml").write_text("first")
        (stage / "plots").mkdir()
    check_output_dir(out, command="identify")  # only what the result wrote: replaceable
    (out / "lab_notes.txt").write_text("keep me")
    (out / "photos").mkdir()
    with pytest.raises(OutputDirError, match=r"holds an earlier result of rdi identify and also lab_notes.txt, "
                                             r"photos, which rdi did not write: .* move them out or choose a new "
                                             r"folder") as info:
        check_output_dir(out, command="identify")
    assert "\n" not in str(info.value)
    # put there while a job ran: the result is left in its staging folder, the user's files stay
    (out / "photos").rmdir()
    with pytest.raises(OutputDirError, match="filled by something else while the job ran"):
        with staged_output(out, command="identify") as stage:
            (stage / "model.yaml").write_text("second")
    assert (out / "lab_notes.txt").read_text() == "keep me" and (out / "model.yaml").read_text() == "first"
    assert (staging_path(out) / "model.yaml").read_text() == "second"


def test_a_result_folder_is_never_written_inside_another_result(tmp_path):
    """`rdi validate --out model/val` beside an identify result: the next identify replaced model/ and the
    validation with it."""
    with staged_output(tmp_path / "model", command="identify") as stage:
        (stage / "model.yaml").write_text("x")
    with pytest.raises(OutputDirError, match=r"points into .*model, the result of rdi identify, which a new run "
                                             r"replaces whole: write the result beside it \(--out .*val\)"):
        check_output_dir(tmp_path / "model" / "val", command="validate")
    check_output_dir(tmp_path / "val", command="validate")
