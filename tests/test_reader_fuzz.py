"""Fuzzed robot files: whatever the bytes, load_robot returns a sound model or raises RobotFileError, one
printable line starting with the path (never another exception, never a warning).

Random text and bytes, and the bundled YAML and URDF files mutated as text (numbers replaced, lines deleted,
duplicated or swapped, garbage inserted, truncated) and as trees (keys and elements removed, values of
another type, attributes changed, tags renamed, elements moved). SYMDYN_FUZZ_EXAMPLES=5000 for a long run."""
import copy
import math
import os
import re
import warnings
import xml.etree.ElementTree as ET

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symdyn
from conftest import BUNDLED


YAML_SEEDS = [p for p in BUNDLED if p.suffix == ".yaml"]


URDF_SEEDS = [p for p in BUNDLED if p.suffix == ".urdf"]


# full-line comments dropped: mutating the bundled files' long headers would test little, slowly
YAML_TEXTS = ["\n".join(line for line in p.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#"))
              for p in YAML_SEEDS]


YAML_TREES = [yaml.safe_load(text) for text in YAML_TEXTS]


URDF_TEXTS = [re.sub(r"<!--.*?-->", "", p.read_text(encoding="utf-8"), flags=re.S) for p in URDF_SEEDS]


DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


REPLACEMENTS = ["nan", ".nan", ".inf", "-.inf", "inf", "-1", "0", "-0.0", "1e999", "1e-320", "1e300", "-1e300",
                "abc", "[]", "{}", "~", "null", "true", "'1'", "1" + "0" * 400, "0x1F", "1_000", "[1, 2]", "*x",
                "&a", "!!binary aGk=", "\t", ":", "- ", "\"", "'", "#", "\\", "\x00", "\u2028", "é", "",
                "9" * 5000, "2001-13-45", "2001-02-03", "!!float x", "!!bool x", "!!int x", "!!timestamp x", "!!set {a}",
                "<<: 5", "1:30", "0o9", "0x_", "1e-3", ".5e+3"]


# SYMDYN_FUZZ_EXAMPLES=5000 for a long run; the suite keeps it short
FUZZ = settings(max_examples=int(os.environ.get("SYMDYN_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _load_checked(path):
    """load_robot may succeed or raise RobotFileError (one line, starting with the path); nothing else."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a RuntimeWarning would be a second line on stderr
        try:
            model = symdyn.load_robot(path)
        except symdyn.RobotFileError as exc:
            message = str(exc)
            assert message.startswith(f"{path}: "), message
            assert len(message) > len(f"{path}: ") and message.isprintable(), repr(message)
            assert len(message.splitlines()) == 1
            return None
    assert model.dof >= 1
    assert all(math.isfinite(v) for body in model.bodies for v in body.params)
    assert all(body.mass >= 0 for body in model.bodies)          # 0: a virtual link (a warning if singular)
    assert all(len(w.splitlines()) == 1 and w.isprintable() for w in model.provenance.warnings)
    return model


def _mutate_text(data, text, replacements=REPLACEMENTS):
    """A few random edits of a text: numbers replaced, lines deleted/duplicated/swapped, garbage inserted."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        kind = data.draw(st.sampled_from(["number", "number", "delete", "duplicate", "swap", "insert", "indent",
                                          "truncate"]), label="kind")
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        if kind == "number":
            spans = [m.span() for m in NUMBER.finditer(lines[i])]
            if spans:
                a, b = data.draw(st.sampled_from(spans), label="span")
                new = data.draw(st.sampled_from(replacements) | st.from_regex(NUMBER, fullmatch=True), label="value")
                lines[i] = lines[i][:a] + new + lines[i][b:]
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = data.draw(st.integers(0, len(lines) - 1), label="other")
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            at = data.draw(st.integers(0, len(lines[i])), label="at")
            lines[i] = lines[i][:at] + data.draw(st.text(max_size=8) | st.sampled_from(replacements), label="junk") + \
                lines[i][at:]
        elif kind == "indent":
            lines[i] = data.draw(st.sampled_from(["", " ", "   ", "\t"]), label="indent") + lines[i].lstrip()
        else:
            lines = lines[:i]
        if not lines:
            lines = [""]
    return "\n".join(lines)


@FUZZ
@given(text=st.text(max_size=300), suffix=st.sampled_from([".yaml", ".urdf"]))
def test_fuzz_random_text(fuzz_dir, text, suffix):
    path = fuzz_dir / f"random{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


@FUZZ
@given(raw=st.binary(max_size=300), suffix=st.sampled_from([".yaml", ".yml", ".urdf"]))
def test_fuzz_random_bytes(fuzz_dir, raw, suffix):
    path = fuzz_dir / f"bytes{suffix}"
    path.write_bytes(raw)
    _load_checked(path)


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(YAML_TEXTS))))
def test_fuzz_mutated_yaml_text(fuzz_dir, data, seed):
    path = fuzz_dir / "mutated.yaml"
    path.write_text(_mutate_text(data, YAML_TEXTS[seed]), encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.integers(min_value=10 ** 300) |
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6) | st.sampled_from(["revolute", "fixed", "base"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)


def _paths(tree, prefix=()):
    """Every (container path, key) of a nested dict/list tree."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, value in items:
        yield prefix, key
        yield from _paths(value, prefix + (key,))


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(YAML_TEXTS))))
def test_fuzz_mutated_yaml_tree(fuzz_dir, data, seed):
    """Structural edits: delete a key or list entry, replace a value by any other type, duplicate an entry."""
    tree = copy.deepcopy(YAML_TREES[seed])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        paths = list(_paths(tree))
        if not paths:
            break
        prefix, key = data.draw(st.sampled_from(paths), label="where")
        parent = tree
        for step in prefix:
            parent = parent[step]
        kind = data.draw(st.sampled_from(["delete", "replace", "replace", "duplicate", "swap_type"]), label="kind")
        if kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "swap_type":
            value = parent[key]
            parent[key] = [value] if not isinstance(value, list) else (value[0] if value else {})
        else:
            parent[key] = data.draw(YAML_VALUES, label="value")
    path = fuzz_dir / "tree.yaml"
    path.write_text(yaml.dump(tree, Dumper=DUMPER, allow_unicode=True), encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


URDF_ATTRIBUTE = re.compile(r'="([^"]*)"')


URDF_REPLACEMENTS = REPLACEMENTS + ["revolute", "floating", "planar", "continuous", "fixed", "base_link",
                                    "0 0 0", "1 0", "0 0 1 0", "nan 0 0", "1e400 0 0", "&amp;", "&bogus;", "<", "&#0;"]


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(URDF_TEXTS))))
def test_fuzz_mutated_urdf_text(fuzz_dir, data, seed):
    """Attribute values replaced, lines deleted or swapped, garbage inserted, text truncated."""
    text = URDF_TEXTS[seed]
    for _ in range(data.draw(st.integers(1, 3), label="attribute edits")):
        spans = [m.span(1) for m in URDF_ATTRIBUTE.finditer(text)]
        a, b = data.draw(st.sampled_from(spans), label="attribute")
        text = text[:a] + data.draw(st.sampled_from(URDF_REPLACEMENTS), label="value") + text[b:]
    text = _mutate_text(data, text, URDF_REPLACEMENTS)
    path = fuzz_dir / "mutated.urdf"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(URDF_TEXTS))))
def test_fuzz_mutated_urdf_tree(fuzz_dir, data, seed):
    """Element edits: remove an element, drop or change an attribute, rename a tag, move an element."""
    root = ET.fromstring(URDF_TEXTS[seed])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        parents = [(parent, child) for parent in root.iter() for child in parent]
        parent, element = data.draw(st.sampled_from(parents), label="element")
        kind = data.draw(st.sampled_from(["remove", "attribute", "drop_attribute", "rename", "move"]), label="kind")
        if kind == "remove":
            parent.remove(element)
        elif kind == "attribute" and element.attrib:
            key = data.draw(st.sampled_from(sorted(element.attrib)), label="key")
            element.set(key, data.draw(st.sampled_from(URDF_REPLACEMENTS) | st.text(max_size=6), label="value"))
        elif kind == "drop_attribute" and element.attrib:
            del element.attrib[data.draw(st.sampled_from(sorted(element.attrib)), label="key")]
        elif kind == "rename":
            element.tag = data.draw(st.sampled_from(["link", "joint", "inertial", "origin", "axis", "mass", "robot",
                                                     "child", "parent", "bogus"]), label="tag")
        elif kind == "move":
            parent.remove(element)
            target = data.draw(st.sampled_from([e for e in root.iter()]), label="target")
            target.append(element)
    path = fuzz_dir / "tree.urdf"
    path.write_bytes(ET.tostring(root, encoding="utf-8"))
    _load_checked(path)
