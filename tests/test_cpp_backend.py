"""The C++ wrapper (--lang cpp): compiled with g++ against Eigen, each function gives the values of the
generated Python and C modules, in Eigen's layouts (column-major matrices, one column per frame)."""
import shutil
import site
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT, relerr
from symdyn.cli import main
from symdyn.compare import import_module_file
from symdyn.functions import BY_NAME, FUNCTIONS, arg_dims, dims, resolve, sizes
from symdyn.generate import module_name, output_names, render

TOL = 1e-10
CXX = shutil.which("g++") or shutil.which("clang++")
CC = shutil.which("cc") or shutil.which("gcc")


def _eigen():
    """Eigen's include folder: the pip package cmeel-eigen (a test dependency), else the system's."""
    folders = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    for folder in [Path(d) / "cmeel.prefix" / "include" / "eigen3" for d in folders] + [Path("/usr/include/eigen3")]:
        if (folder / "Eigen" / "Core").is_file():
            return folder
    return None


EIGEN = _eigen()
needs_toolchain = pytest.mark.skipif(CXX is None or CC is None or EIGEN is None,
                                     reason="needs a C and a C++ compiler and Eigen (pip install cmeel-eigen)")

# (robot, load options, parameters): a 7-DoF arm with three frames; a floating base (nq != nv) with
# its parameters as an argument
CASES = {"panda": (ROOT / "robots" / "panda.urdf", {}, "numeric"),
         "planar2_floating_symbolic": (ROOT / "robots" / "planar2.yaml", {"floating_base": True}, "symbolic")}


def _driver(ns, functions, size):
    """C++ that reads each function's arguments from stdin (doubles, C layout) as dynamic Eigen
    objects, calls the wrapper and writes every output entry (i, j) row by row to stdout."""
    lines = [f'#include "{ns}.hpp"', "#include <cstdio>", "#include <Eigen/Core>",
             "static Eigen::VectorXd read(int n) { Eigen::VectorXd v(n); "
             "if (n && std::fread(v.data(), sizeof(double), n, stdin) != (size_t)n) throw 1; return v; }",
             "static void emit(double x) { std::fwrite(&x, sizeof x, 1, stdout); }",
             "template <typename D> static void emit(const Eigen::MatrixBase<D> &m) "
             "{ for (int i = 0; i < m.rows(); ++i) for (int j = 0; j < m.cols(); ++j) emit(m(i, j)); }",
             "template <typename T, std::size_t N> static void emit(const std::array<T, N> &a) "
             "{ for (const T &x : a) emit(x); }",
             "template <typename A, typename B> static void emit(const std::tuple<A, B> &t) "
             "{ emit(std::get<0>(t)); emit(std::get<1>(t)); }",
             "int main()", "{", f"    namespace m = symdyn::{ns};",
             "    { Eigen::VectorXd q = read(m::NQ), v = read(m::NV);",
             "      emit(m::neutral()); emit(m::integrate(q, v, 0.3)); emit(m::difference(q, m::integrate(q, v)));"
             " emit(m::parameters()); }"]
    for name, args in functions:
        body = []
        for a in args:
            n = int(np.prod(resolve(arg_dims(a), size)))
            if a == "f_ext":       # a block of a larger matrix: strided, the wrapper must copy it
                body.append(f"Eigen::MatrixXd big(7, m::NF); big.topRows(6) = Eigen::Map<const Eigen::MatrixXd>"
                            f"(read({n}).data(), 6, m::NF);")
            else:
                body.append(f"Eigen::VectorXd {a} = read({n});")
        call = ", ".join("big.topRows(6)" if a == "f_ext" else a for a in args)
        lines.append(f"    {{ {' '.join(body)} emit(m::{name}({call})); }}")
    return "\n".join(lines + ["    return 0;", "}", ""])


@pytest.fixture(scope="module", params=list(CASES))
def built(request, tmp_path_factory):
    """(model, Python module, C module, the driver's path, the functions with their arguments)."""
    path, options, params = CASES[request.param]
    model = symdyn.load_robot(path, **options)
    folder = tmp_path_factory.mktemp("cpp")
    files = render(model, ("python", "cpp"), params)
    for name, text in files.items():
        (folder / name).write_text(text)
    module = module_name(path, params)
    functions = [(fn.name, fn.signature(params)) for fn in FUNCTIONS]      # the default set, as generated
    python = import_module_file(folder / f"{module}.py", f"cpp_{module}")
    exe = folder / "driver"
    if CXX and CC and EIGEN:
        (folder / "driver.cpp").write_text(_driver(module, functions, sizes(model)))
        for cmd in ([CC, "-std=c99", "-O1", "-c", f"{module}.c", "-o", f"{module}.o"],
                    [CXX, "-std=c++11", "-O1", "-Wall", "-Wextra", "-pedantic", "-Werror", "-isystem", str(EIGEN),
                     "driver.cpp", f"{module}.o", "-lm", "-o", str(exe)]):
            result = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
            assert result.returncode == 0, result.stderr[-3000:]
    return model, python, symdyn.load_c(folder / f"{module}.c"), exe, functions, params


def _inputs(model, functions, params, rng):
    """One state's arguments for every function, by name."""
    size = sizes(model)
    values = {}
    for name, args in functions:
        values[name] = []
        for a in args:
            shape = resolve(arg_dims(a), size)
            if a == "params":
                x = np.array(model.parameters) * rng.uniform(0.5, 2.0)   # one factor: physical inertias
                if x[0] == 0:                  # a massless base (planar2's) would make M singular
                    x[:10] = [2.0, 0, 0, 0, 0.02, 0, 0.02, 0, 0, 0.02]
            elif a == "q":
                x = rng.uniform(-np.pi, np.pi, shape)
                if size["nq"] != size["nv"]:          # a unit quaternion for the free-flyer
                    x[3:7] /= np.linalg.norm(x[3:7])
            else:
                x = rng.normal(size=shape) * 2
            values[name].append(x)
    return values


def _cpp_layout(value, shape):
    """A Python output in the order the driver writes the C++ value: per-frame vectors are the
    columns of a 6 x NF matrix, written row by row."""
    return (np.swapaxes(value, -1, -2) if shape[0] == "nf" and len(shape) == 2 else value).ravel()


@needs_toolchain
def test_cpp_equals_python_and_c(built):
    model, python, c_module, exe, functions, params = built
    rng = np.random.default_rng(3)
    for trial in range(3):
        values = _inputs(model, functions, params, rng)
        q0, v0 = values["inverse_dynamics"][0], values["inverse_dynamics"][1]
        stdin = [q0, v0] + [x for name, _ in functions for x in values[name]]
        result = subprocess.run([str(exe)], input=np.concatenate([x.ravel() for x in stdin]).tobytes(),
                                capture_output=True)
        assert result.returncode == 0, result.stderr
        got = np.frombuffer(result.stdout, dtype=float)
        want = [python.neutral(), python.integrate(q0, v0, 0.3), python.difference(q0, python.integrate(q0, v0)),
                python.PARAMETERS]
        start = sum(x.size for x in want)
        assert relerr(got[:start], np.concatenate(want)) < TOL
        for name, args in functions:
            fn = BY_NAME[name]
            outs = [getattr(module, name)(*values[name]) for module in (python, c_module)]
            outs = [o if isinstance(o, tuple) else (o,) for o in outs]
            for k, shape in enumerate(dims(s) for s in fn.shapes):
                n = outs[0][k].size
                mine = got[start:start + n]
                start += n
                for reference in (outs[0][k], outs[1][k]):
                    assert relerr(mine, _cpp_layout(reference, shape)) < TOL, (name, trial)
        assert start == got.size


def test_cpp_writes_the_c_module_beside_the_header(tmp_path):
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    assert output_names(model, ("cpp",)) == ["planar2.h", "planar2.c", "planar2.hpp", "planar2.json"]
    assert list(render(model, ("cpp",), functions=["gravity"])) == ["planar2.h", "planar2.c", "planar2.hpp",
                                                                    "planar2.json"]
    result = CliRunner().invoke(main, ["generate", str(ROOT / "robots" / "planar2.yaml"), "--lang", "cpp,python",
                                       "--functions", "gravity", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planar2.c", "planar2.h", "planar2.hpp", "planar2.json", "planar2.py"]
    assert "python, c, cpp" in CliRunner().invoke(main, ["generate", "--help"]).output


def test_cpp_keyword_module_gets_its_own_namespace(tmp_path):
    robot = tmp_path / "new.yaml"
    robot.write_text((ROOT / "robots" / "planar2.yaml").read_text())
    text = render(symdyn.load_robot(robot), ("cpp",), functions=["gravity"])["new.hpp"]
    assert "namespace new_ {" in text and "new_gravity(q.data(), g.data());" in text


@needs_toolchain
def test_cpp_refuses_a_header_of_another_run(tmp_path):
    """The .hpp checks the .h's set identity at compile time, as the .c does."""
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    first = render(model, ("cpp",), functions=["gravity"])
    second = render(model, ("cpp",), functions=["gravity", "mass_matrix"])
    (tmp_path / "planar2.hpp").write_text(first["planar2.hpp"])
    (tmp_path / "planar2.h").write_text(second["planar2.h"])
    (tmp_path / "use.cpp").write_text('#include "planar2.hpp"\n')
    result = subprocess.run([CXX, "-std=c++11", "-isystem", str(EIGEN), "-fsyntax-only", "use.cpp"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode != 0 and "regenerate them together" in result.stderr
    (tmp_path / "planar2.h").write_text(first["planar2.h"])
    result = subprocess.run([CXX, "-std=c++11", "-isystem", str(EIGEN), "-fsyntax-only", "use.cpp"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
