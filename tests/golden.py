"""The golden files of generated/: one small robot kept byte-exact, a manifest for the other bundled robots.

generated/ holds planar2's .py, .h and .c as the generator writes them (a reader can open real output), and
generated/MANIFEST.json: for every bundled robot, the SHA-256 of each file it generates, and per function the
operation count and the SHA-256 of its Python and C text. A change of the generator shows up in the test as
the functions whose text or count moved, without committing megabytes of generated code (the Panda's C alone
is 1.5 MB). `python -m pytest tests/test_generated.py -k golden --update` rewrites both.
"""
import hashlib
import json
import re

from conftest import ROOT

#: the robot whose files are committed byte for byte (~200 KB for the three)
BYTE_EXACT = "planar2"
MANIFEST = ROOT / "generated" / "MANIFEST.json"


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def _python_functions(text):
    """{name: text} of the top-level `def`s of a generated Python module."""
    parts = re.split(r"(?m)^(?=def )", text)[1:]
    return {re.match(r"def (\w+)\(", p).group(1): p for p in parts}


def _c_functions(text, module, names):
    """{name: text} of a generated .c: every top-level definition whose identifier is the function's
    (module_name, sd_module_name_lanes, module_name_batch, ...), longest name first (mass_matrix_inverse is
    not mass_matrix's)."""
    chunks = re.split(r"(?m)^(?=(?:static |void |int |double |float )[^;\n]*\w+\([^;]*$)", text)
    out, ordered = {}, sorted(names, key=len, reverse=True)
    for chunk in chunks:
        ident = re.match(r"[^(\n]*?(\w+)\(", chunk)
        rest = ident and ident.group(1).removeprefix("sd_").removeprefix(module + "_")
        owner = next((n for n in ordered if rest == n or (rest or "").startswith(n + "_")), None)
        if owner:
            out[owner] = out.get(owner, "") + chunk
    return out


def _operations(python_text):
    found = re.search(r"Operations: ([^\n]*)\.", python_text)
    return found.group(1) if found else None


def robot_entry(robot_path, files):
    """The manifest entry of one robot from its rendered {filename: text}."""
    module = next(n for n in files if n.endswith(".py"))[:-3]
    py = _python_functions(files[f"{module}.py"])
    names = [n for n in py if not n.startswith("_") and _operations(py[n])]
    c = _c_functions(files.get(f"{module}.c", ""), module, names)
    return {"robot": robot_path.relative_to(ROOT).as_posix(),
            "files": {name: sha(text) for name, text in sorted(files.items())},
            "functions": {n: {"operations": _operations(py[n]), "python": sha(py[n])[:16],
                              "c": sha(c[n])[:16] if n in c else None} for n in sorted(names)}}


def read_manifest():
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"robots": {}}


def update_entry(stem, entry):
    """Replace one robot's entry; a lock beside the manifest keeps parallel workers (pytest -n) from losing
    each other's entries."""
    import fcntl
    import tempfile
    from pathlib import Path
    lock_path = Path(tempfile.gettempdir()) / f"symdyn-golden-{sha(str(ROOT))[:12]}.lock"   # not in generated/
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        robots = read_manifest()["robots"]
        robots[stem] = entry
        write_manifest(robots)


def write_manifest(robots):
    """Write MANIFEST.json with `robots` ({stem: entry}); deterministic (sorted keys, one entry per line)."""
    body = {"about": "generated/ keeps planar2 byte-exact; the other bundled robots are checked against these "
                     "hashes and operation counts (tests/golden.py; rewrite: pytest tests/test_generated.py -k "
                     "golden --update)",
            "byte_exact": BYTE_EXACT, "robots": dict(sorted(robots.items()))}
    MANIFEST.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8", newline="\n")


def differences(expected, actual):
    """Readable lines naming what moved between two manifest entries of one robot."""
    lines = []
    for name in sorted(set(expected["functions"]) | set(actual["functions"])):
        a, b = expected["functions"].get(name), actual["functions"].get(name)
        if a is None or b is None:
            lines.append(f"{name}: {'new' if a is None else 'gone'}")
        elif a != b:
            what = [k for k in ("operations", "python", "c") if a[k] != b[k]]
            ops = f" ({a['operations']} -> {b['operations']})" if "operations" in what else ""
            lines.append(f"{name}: {', '.join(what)} changed{ops}")
    moved = [f for f in set(expected["files"]) | set(actual["files"])
             if expected["files"].get(f) != actual["files"].get(f)]
    if moved and not lines:
        lines.append(f"files {', '.join(sorted(moved))} changed outside the functions (header, shared code)")
    return lines


_RENDERED = {}


def generated_file(name):
    """Path of a generated file of a bundled robot, e.g. "panda.c": the committed one for planar2, else
    rendered once per test process into a temporary folder (what `symdyn generate robots/<stem>.* --lang
    python,c --out generated` writes; the golden test checks that against the manifest)."""
    committed = ROOT / "generated" / name
    if committed.exists():
        return committed
    import tempfile
    from pathlib import Path

    import symdyn
    from symdyn.generate import render
    stem = name.rsplit(".", 1)[0]
    key = stem                                  # .py, .h and .c side by side (load_c of the .py's folder works)
    if key not in _RENDERED:
        robot = next(p for p in (ROOT / "robots").iterdir() if p.stem == stem and p.suffix in (".yaml", ".urdf"))
        folder = Path(tempfile.mkdtemp(prefix=f"symdyn-golden-{stem}-"))
        for file, text in render(symdyn.load_robot(robot), ("python", "c")).items():
            (folder / file).write_text(text, encoding="utf-8", newline="\n")
        _RENDERED[key] = folder
    return _RENDERED[key] / name
