"""The package layout: every sub-package ships (pyproject.toml lists it) and says in one line what it holds."""
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
