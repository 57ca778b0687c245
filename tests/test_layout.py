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


def _function_sizes():
    """(place, lines, named parameters) of every function in symdyn/ (self, cls, *args and **kwargs not counted:
    a keyword bag such as generate(..., **changes) forwards a LoadOptions' fields by name)."""
    for path in sorted((ROOT / "symdyn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                named = [x for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", node.end_lineno - first + 1, len(named)


def test_functions_are_small():
    """No function in symdyn/ is over 60 lines or takes more than 8 parameters (issue 25's limits): a longer
    one is split into named steps, a longer list of arguments grouped into a small frozen dataclass."""
    over = [f"{place} ({lines} lines, {params} parameters)" for place, lines, params in _function_sizes()
            if lines > 60 or params > 8]
    assert not over, "functions over 60 lines or 8 parameters: " + "; ".join(over)
