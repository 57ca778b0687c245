"""The layout: every sub-package ships (pyproject.toml lists it) and says in one line what it holds; tests/README.md
says what every test file checks."""
import ast
import re

from conftest import ROOT


def test_every_subpackage_is_shipped_and_documented():
    """pyproject.toml finds every package under symdyn/ (and its templates as package data); each says
    what it holds in its docstring."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^\[tool\.setuptools\.packages\.find\]\ninclude = \["symdyn\*"\]', pyproject, re.M)
    assert re.search(r'^"\*" = \["\*\.jinja"\]', pyproject, re.M)
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "symdyn").rglob("__init__.py")}
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "symdyn").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert folders <= on_disk, f"folders of modules without __init__.py (not shipped): {sorted(folders - on_disk)}"
    for package in on_disk:
        init = ROOT / package.replace(".", "/") / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init.relative_to(ROOT)} has no docstring"


#: listed in tests/README.md before the branch that adds it is merged
LISTED_AHEAD = {"test_mjcf_vendor.py"}


def test_tests_readme_lists_exactly_the_test_files():
    """tests/README.md says what each test file checks: it names every tests/test_*.py once and no file that is
    not there (but test_mjcf_vendor.py, written on another branch), and names every helper module and data folder."""
    tests = ROOT / "tests"
    listed = re.findall(r"(?m)^- `([^`]+)`", (tests / "README.md").read_text())
    assert len(listed) == len(set(listed)), sorted(name for name in set(listed) if listed.count(name) > 1)
    present = {p.name for p in tests.glob("test_*.py")}
    listed_tests = {name for name in listed if name.startswith("test_")}
    assert present <= listed_tests, f"test files tests/README.md does not list: {sorted(present - listed_tests)}"
    assert listed_tests - present <= LISTED_AHEAD, f"listed but not there: {sorted(listed_tests - present - LISTED_AHEAD)}"
    others = {p.name + ("/" if p.is_dir() else "") for p in tests.iterdir()
              if not p.name.startswith(("test_", ".", "__")) and p.name != "README.md" and (p.is_dir() or p.suffix == ".py")}
    assert others == set(listed) - listed_tests, (sorted(others - set(listed)), sorted(set(listed) - listed_tests - others))
