"""The documents cannot go stale on the function set: every function table in docs/*.md and README.md names
real functions with their real arguments, api.md documents every function a module can have, and the counts
the prose gives are the generator's (symdyn.functions); docs/contributing.md cites only paths and Python names that
exist."""
import re

import pytest

from conftest import ROOT, import_file
from symdyn.functions import ALL, ALL_BY_NAME, FUNCTIONS

#: the documents that describe symdyn today (docs/perf-history.md is a dated record: its counts are of their day)
DOCUMENTS = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "perf-history.md") + [ROOT / "README.md"]


def function_tables(text):
    """[(header line, [(name, arguments cell)])] of the markdown tables whose first columns are
    `function | arguments`."""
    tables = []
    for block in re.findall(r"(?m)^\| function \| arguments \|.*\n(?:\|.*\n?)+", text):
        rows = []
        for line in block.splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            name = re.fullmatch(r"`(\w+)`", cells[0])
            assert name, f"a row of a function table does not start with a `name`: {line[:80]}"
            rows.append((name.group(1), cells[1]))
        tables.append((block.splitlines()[0], rows))
    return tables


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_function_tables_name_real_functions_with_their_arguments(document):
    for _, rows in function_tables(document.read_text()):
        for name, arguments in rows:
            assert name in ALL_BY_NAME, f"{document.name}: `{name}` is not a function symdyn generates"
            if arguments.startswith("`"):
                assert arguments.strip("`") == ", ".join(ALL_BY_NAME[name].args), (document.name, name, arguments)


def test_api_documents_every_function_once():
    documented = [name for _, rows in function_tables((ROOT / "docs" / "api.md").read_text()) for name, _ in rows]
    assert sorted(documented) == sorted(fn.name for fn in ALL), set(documented) ^ {fn.name for fn in ALL}


def test_counts_in_the_prose_are_the_generators():
    """'these 22 functions ... and the 11 of the next section', 'the same 33 functions', 'all 33 functions':
    the numbers are those of symdyn.functions (the default set), not of the day they were written."""
    api = (ROOT / "docs" / "api.md").read_text()
    first, second = map(int, re.search(r"Every module has these (\d+) functions .*?and the (\d+) of", api).groups())
    tables = function_tables(api)
    assert (first, second) == (len(tables[0][1]), len(tables[1][1]))
    assert first + second == len(FUNCTIONS)
    found = 0
    for document in DOCUMENTS:
        for number in re.findall(r"\b(?:all|same|these|the) (\d+) (?:generated )?functions\b", document.read_text()):
            found += 1
            assert int(number) in (len(FUNCTIONS), first, second), f"{document.name}: '{number} functions'"
    assert found >= 2


def _history_notes():
    """The note names of docs/perf-history.md: each section heading's text before ': ' or ' ('."""
    text = (ROOT / "docs" / "perf-history.md").read_text()
    return {re.split(r": | \(", m)[0] for m in re.findall(r"(?m)^#{2,3} (?:\d+[a-z]?\. )?(.*)$", text)}


def test_citations_of_the_performance_history_name_its_sections():
    """Code, tests, templates and documents cite docs/perf-history.md "Name" (a section heading), not a section
    number that moves when sections are added, and not benchmarks/RESULTS.md (moved)."""
    notes = _history_notes()
    cited = 0
    for path in [*ROOT.glob("symdyn/**/*.py"), *ROOT.glob("templates/*"), *ROOT.glob("symdyn/**/*.jinja"),
                 *ROOT.glob("tests/*.py"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("benchmarks/*.md"),
                 *DOCUMENTS]:
        if path.name == "test_docs.py" or not path.is_file():
            continue
        text = path.read_text()
        assert "RESULTS.md" not in text, f"{path.relative_to(ROOT)} cites benchmarks/RESULTS.md (now perf-history)"
        for names in re.findall(r"perf-history\.md\)?\s+((?:\"[^\"]+\"(?:,| and)?\s*)+)", text):
            for name in re.findall(r"\"([^\"]+)\"", names):
                cited += 1
                name = " ".join(w for w in name.split() if w not in ("#", "#:", "*"))     # wrapped in a comment
                assert any(note.startswith(name) for note in notes), f"{path.relative_to(ROOT)}: no section \"{name}\""
        assert not re.search(r"perf-history\.md,? [Ss]ection \d", text), f"{path.relative_to(ROOT)}: a section number"
    assert cited >= 20


def test_benchmark_page_has_one_section_per_headline_of_run_all():
    """benchmarks/README.md's tables are rewritten by benchmarks/run_all.py between markers: every headline has
    its markers, each names its source or command, and the rewrite replaces exactly that part."""
    run_all = import_file(ROOT / "benchmarks" / "run_all.py", "run_all")
    text = run_all.README.read_text()
    for name in run_all.HEADLINES:
        body = text.split(f"<!-- run_all: {name} -->\n", 1)[1].split(f"<!-- /run_all: {name} -->", 1)[0]
        assert "benchmarks/" in body and "| " in body, name          # a command and a table
        rewritten = run_all.replace_section(text, name, "NEW TABLE")
        assert f"<!-- run_all: {name} -->\nNEW TABLE\n<!-- /run_all: {name} -->" in rewritten
        assert rewritten.replace("NEW TABLE", body.strip()) == text.replace(body, body.strip() + "\n")
    with pytest.raises(ValueError):
        run_all.replace_section("no markers", "batch", "x")


def test_bench_batch_before_after_table(capsys):
    """bench_batch.py --before: the last table gives, per function both modules have, the batch (one thread)
    and single-call ns of REF's module and this checkout's and before/after (made-up rounds, no compile)."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    bench_batch = import_file(ROOT / "benchmarks" / "bench_batch.py", "bench_batch")
    rounds = lambda loop, one: [[loop * 1e-9, one * 1e-9, one * 1e-9, 0.0, 1e-9, 7]] * 3   # (loop, one, many, ...)
    before = {"gravity": rounds(60, 30), "mass_matrix": rounds(50, 20)}
    after = {"gravity": rounds(40, 20), "regressor": rounds(100, 50)}
    args = type("Args", (), {"before": "HEAD~1"})
    bench_batch._print_before_after(None, ROOT / "panda.c", before, after, args)
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("panda: before = HEAD~1")
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| function")]
    assert rows == ["| gravity | 30 | 20 | 1.50 | 60 | 40 | 1.50 |"]       # only the functions both have


def test_bench_c_before_after_table():
    """bench_c.py --before (the README's "Before/after a change"): per-run ratios are combined into medians
    and ranges, and the table shows Pinocchio/before, Pinocchio/after and before/after for each function
    (no Pinocchio compile here: the harness's JSON rows are made up)."""
    bench_c = import_file(ROOT / "benchmarks" / "bench_c.py", "bench_c")
    args = bench_c.parse_args(["--before", "HEAD~1", "--robots", "panda"])
    assert args.generate and args.generated == args.build_dir / "generated"
    assert bench_c.parse_args([]).generated == ROOT / "generated" and not bench_c.parse_args([]).generate

    def run(pin, after, before):
        return {"robot": "panda", "dof": 7, "function": "gravity", "pinocchio_fn": "g", "pinocchio_ns": pin,
                "symdyn_ns": after, "ratio": pin / after, "ratio_of_minima": None, "max_rel_err": 1e-15,
                "before_ns": before, "before_min_ns": before, "before_max_rel_err": 2e-15}
    row = bench_c.aggregate([run(100.0, 20.0, 40.0), run(110.0, 25.0, 40.0), run(90.0, 20.0, 30.0)])
    assert row["ratio_before"] == 2.75 and row["speedup"] == 1.6 and row["before_ns"] == 40.0
    lacking = bench_c.aggregate([dict(run(100.0, 20.0, 1.0), before_ns=None, before_max_rel_err=None)])
    table = bench_c.before_after_table([row, lacking]).splitlines()
    assert table[0].startswith("| robot | nv | function | Pinocchio/before | Pinocchio/after | after/before")
    assert table[2] == ("| panda | 7 | gravity | 2.75 (2.50-3.00) | 4.50 (4.40-5.00) | 1.60 (1.50-2.00) | "
                        "100 / 40 / 20 | 2e-15 / 1e-15 |")
    assert table[3].split(" | ")[3:6] == ["—", "5.00", "—"]     # a function the before module lacks
    assert "before_ns" not in bench_c.aggregate([{k: v for k, v in run(1.0, 1.0, 1.0).items()
                                                  if not k.startswith("before")}])


def test_robot_format_refuses_no_joint_type_that_loads(tmp_path):
    """docs/robot-format.md's list of what the readers refuse named floating and planar joints after both
    loaded: every joint type of its YAML section loads, and a refusal clause naming one must say it loads."""
    import symdyn
    text = (ROOT / "docs" / "robot-format.md").read_text()
    types = re.search(r"type: \w+ +# ([\w |]+)\n", text).group(1).split(" | ")
    assert {"planar", "floating"} <= set(types)
    refused = text.split("## What the readers refuse", 1)[1].split("\n## ", 1)[0]
    for clause in re.split(r"[;\n]", refused):
        for kind in types:
            if re.search(rf"`?\b{kind}\b`? joints", clause):
                assert "load" in clause, f"robot-format.md refuses {kind} joints: {clause.strip()}"
    for kind in ("planar", "floating"):                  # and they do load
        robot = (f"name: r\nlinks:\n  - name: body\n    mass: 1.0\n    com: [0, 0, 0]\n"
                 f"    inertia: {{ixx: 0.1, iyy: 0.1, izz: 0.1}}\njoints:\n  - name: j\n    type: {kind}\n"
                 f"    parent: base\n    child: body\n")
        path = tmp_path / f"{kind}.yaml"
        path.write_text(robot)
        assert symdyn.load_robot(path).nv == {"planar": 3, "floating": 6}[kind]


# --- docs/contributing.md names only what exists ----------------------------------------------------------------

#: file suffixes: a dotted name in backticks ending in one is a file (`module.rs.jinja`), not a Python name
FILE_SUFFIXES = {"py", "jinja", "md", "json", "yaml", "yml", "urdf", "xml", "c", "h", "hpp", "rs"}


def _symdyn_modules():
    """{module's full dotted name, its name without "symdyn.", its last name, or the name of a class it
    defines: [module or class]} over the symdyn package."""
    import importlib
    import pkgutil

    import symdyn
    index = {"symdyn": [symdyn]}
    for info in pkgutil.walk_packages(symdyn.__path__, "symdyn."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for key in (info.name, info.name.rsplit(".", 1)[1], info.name.split(".", 1)[1]):
            index.setdefault(key, []).append(module)
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == info.name:
                index.setdefault(name, []).append(value)
    return index


def _has(owner, name):
    """`owner` (a module or class) has `name`: an attribute, a dataclass field, or an attribute its methods set."""
    import dataclasses
    import inspect
    if hasattr(owner, name):
        return True
    if dataclasses.is_dataclass(owner) and name in {f.name for f in dataclasses.fields(owner)}:
        return True
    return inspect.isclass(owner) and re.search(rf"\bself\.{name}\b\s*[,=]|\bself\.{name}, ", inspect.getsource(owner))


def _resolves(dotted, index):
    """A dotted name `a.b.c` whose longest prefix naming a symdyn module (or a top-level name of one) has
    the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        for owner in index.get(".".join(parts[:cut]), []):
            rest = parts[cut:]
            for name in rest[:-1]:
                owner = getattr(owner, name, None)
            if owner is not None and _has(owner, rest[-1]):
                return True
    return False


def test_contributing_names_only_what_exists():
    """Every symdyn/... path (a folder's file list on the same line of a code block included, `file.py:name`
    its name too), every file under tests/, benchmarks/ and docs/, and every dotted or CamelCase Python name in backticks outside code blocks exists."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    for match in re.finditer(r"(symdyn/[\w/.-]*[\w/])(?::(\w+))?([^\n]*)", text):
        path, name, after = ROOT / match.group(1), match.group(2), match.group(3)
        assert path.exists(), f"contributing.md: {match.group(1)} does not exist"
        if name:
            assert _resolves(".".join(path.relative_to(ROOT).with_suffix("").parts) + "." + name,
                             _symdyn_modules()), f"contributing.md: {match.group(0)}"
        if path.is_dir() and match.group(1).endswith("/"):   # `symdyn/codegen/c/   __init__.py parts.py ...`
            for word in re.findall(r"^\s+((?:[\w.]+\.\w+ ?)+)$", after)[:1]:
                for file in word.split():
                    assert (path / file).exists(), f"contributing.md: {match.group(1)}{file} does not exist"
    for other in re.findall(r"\b(?:tests|benchmarks|docs)/[\w/.-]+\.\w+", text):
        assert (ROOT / other).exists(), f"contributing.md: {other} does not exist"
    index = _symdyn_modules()
    prose = re.sub(r"(?ms)^ *```.*?^ *```", "", text)
    names = set(re.findall(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`", prose))
    names = {n for n in names if n.rsplit(".", 1)[1] not in FILE_SUFFIXES}
    assert len(names) >= 30                              # the pattern still finds the page's names
    missing = sorted(n for n in names if not _resolves(n, index))
    assert not missing, f"contributing.md names what does not exist: {missing}"
    classes = set(re.findall(r"`([A-Z][a-z]\w*)(?:\([^`]*\))?`", prose))
    assert {"Function", "Tree", "Backend"} <= classes
    missing = sorted(c for c in classes if c not in index)
    assert not missing, f"contributing.md names classes that do not exist: {missing}"
