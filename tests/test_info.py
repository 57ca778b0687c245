"""`symdyn info` and the progress bars of info and compare."""
import os
import re
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

import symdyn
from conftest import ERD_ARMS, ROOT, erd_path
from symdyn.cli import main
from symdyn.info import header_lines, joint_tree


def test_info_shows_robot_and_module_names_and_the_snap_saving():
    """xarm7.urdf: the URDF calls the robot UF_ROBOT, the files are xarm7.*; its 1.5708s would snap."""
    path = str(erd_path(ERD_ARMS["xarm7"]))
    out = CliRunner().invoke(main, ["info", path]).output
    assert out.startswith(f"robot 'UF_ROBOT' ({path}): 7 DOF (nq 7, nv 7)")
    assert "module xarm7: xarm7.py, xarm7.h, xarm7.c (C functions xarm7_*); with --params symbolic xarm7_params" in out
    table = int(re.search(r"^  mass_matrix +(\d+) ", out, re.M).group(1))
    before, after = map(int, re.search(r"mass_matrix (\d+) -> (\d+) mul", out).groups())
    assert "6 joint origin(s) within 1e-4" in out and before == table and after < before / 2
    total_before, total_after = map(int, re.search(r"all \d+ functions (\d+) -> (\d+) mul", out).groups())
    assert total_after < total_before
    # the saving is what --snap-right-angles gives: its table has the smaller count, and no "would" note
    snapped = CliRunner().invoke(main, ["info", path, "--snap-right-angles"]).output
    assert int(re.search(r"^  mass_matrix +(\d+) ", snapped, re.M).group(1)) == after
    assert "6 joint origin(s) snapped" in snapped and "would" not in snapped
    # without counts it still says so
    assert "--snap-right-angles would make them exact" in CliRunner().invoke(main, ["info", path, "--no-ops"]).output


def test_no_snap_note_when_nothing_would_snap():
    out = CliRunner().invoke(main, ["info", str(ROOT / "robots" / "panda.urdf"), "--no-ops"]).output
    assert "robot 'panda'" in out and "snap" not in out


def test_joint_tree_is_written_over_parent_indices():
    """A branching tree (as another reader may build): each joint under its parent, children in file order."""
    chain = symdyn.load_robot(ROOT / "robots" / "planar6.yaml")
    parents = [-1, 0, 1, 1, 3, 0]
    tree = replace(chain, joints=tuple(replace(j, parent=p) for j, p in zip(chain.joints, parents)))
    assert joint_tree(tree) == [(0, 0), (1, 1), (2, 2), (2, 3), (3, 4), (1, 5)]
    assert joint_tree(chain) == [(k, k) for k in range(6)]
    rows = [line for line in header_lines(tree, "tree.yaml") if "revolute" in line]
    names = [re.match(r"\s+(\d+)  ( *)(\S+)", row).groups() for row in rows]
    assert names == [("0", "", "joint1"), ("1", "  ", "joint2"), ("2", "    ", "joint3"), ("3", "    ", "joint4"),
                     ("4", "      ", "joint5"), ("5", "  ", "joint6")]


def test_nq_and_nv_are_shown_when_the_model_has_them():
    chain = symdyn.load_robot(ROOT / "robots" / "planar6.yaml")
    floating = SimpleNamespace(**{k: getattr(chain, k) for k in ("name", "joints", "dof", "total_mass", "provenance",
                                                                  "kinematic_frames", "constraints", "actuated",
                                                                  "mimic", "coulomb_smoothing", "conventions")},
                               nq=13, nv=12)
    assert "6 DOF (nq 13, nv 12)" in header_lines(floating, "x.yaml")[0]
    assert "6 DOF (nq 6, nv 6)" in header_lines(chain, "x.yaml")[0]


def _on_a_terminal(args):
    """Run `python -m symdyn ARGS` with stderr on a pseudo-terminal (stdout a pipe); returns (stdout, stderr)."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "symdyn", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:                               # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    proc.wait(timeout=300)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("command", [["info", "robots/planar6.yaml"], ["compare", "robots/planar6.yaml", "--no-c",
                                                                       "--states", "2"]], ids=["info", "compare"])
def test_progress_bar_on_a_terminal_only(command):
    code, out, err = _on_a_terminal(command)
    assert code == 0, out + err
    label = "tracing planar6" if command[0] == "info" else "comparing planar6"
    assert label in err and "100%" in err, err          # the bar, on stderr
    assert label not in out
    piped = subprocess.run([sys.executable, "-m", "symdyn", *command], cwd=ROOT, capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout == out   # no bar in a pipe or a log


def test_no_empty_progress_bar():
    code, out, err = _on_a_terminal(["info", "robots/planar2.yaml", "--no-ops"])     # nothing to trace
    assert code == 0 and "joint2" in out and err == "", err
