"""The package layout: every sub-package ships (pyproject.toml lists it) and says in one line what it holds."""
import ast
import re

from conftest import ROOT


def test_every_subpackage_is_shipped_and_documented():
    listed = re.search(r"^packages = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.S | re.M)[1]
    listed = set(re.findall(r'"([\w.]+)"', listed))
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "symdyn").rglob("__init__.py")}
    assert on_disk <= listed, f"sub-packages missing from pyproject.toml: {sorted(on_disk - listed)}"
    for package in on_disk:
        init = ROOT / package.replace(".", "/") / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init.relative_to(ROOT)} has no docstring"
