"""The README's commands, as a new user runs them: each succeeds and none changes a tracked file."""
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

GIT = shutil.which("git")
HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


def use_commands():
    """The `symdyn ...` lines of the README's Use section, comments removed."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use", 1)[1].split("\n## ", 1)[0]
    lines = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()]
    return [re.split(r"\s+#", line)[0].strip() for line in lines if line.startswith("symdyn ")]


def test_the_use_section_has_commands():
    commands = use_commands()
    assert len(commands) >= 5 and any("--params symbolic" in c for c in commands), commands


@pytest.mark.skipif(GIT is None or not (ROOT / ".git").exists(), reason="needs git and a checkout")
def test_readme_commands_leave_tracked_files_unchanged(tmp_path):
    """Run every command of the Use section in a copy of the repository (its files as they are now):
    all succeed, and `git status` shows no tracked file changed (the symbolic-parameter module once
    overwrote generated/ur5.py with functions of another signature)."""
    tracked = subprocess.run([GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    copy = tmp_path / "repo"
    for name in filter(None, tracked.split("\0")):
        source = ROOT / name
        if source.is_file():                      # a file deleted in the working tree is not copied
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git = [GIT, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=copy, check=True)
    subprocess.run([*git, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=copy, check=True)
    for command in use_commands():
        # `python -m symdyn` from the copy's root runs the copy's code (the shell expands robots/*.yaml)
        shell = f'"{sys.executable}" -m ' + command
        if command.startswith("symdyn compare") and not HAS_CC:
            shell += " --no-c"                    # a machine without a C compiler checks the Python module only
        result = subprocess.run(["bash", "-c", shell], cwd=copy, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    status = subprocess.run([GIT, "status", "--porcelain", "--untracked-files=no"], cwd=copy, capture_output=True,
                            text=True, check=True).stdout
    assert status == "", f"README commands changed tracked files:\n{status}"
    assert (copy / "generated" / "ur5_params.py").exists()     # the symbolic-parameter module, beside ur5.py
