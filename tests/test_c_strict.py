"""Generated C as users build it: warning-free strict compiles (gcc, clang; C99 -Wall -Wextra -Werror -pedantic,
load_c's flags with lanes and lane parts) and address and undefined-behaviour sanitizers on a driver."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import symdyn
from conftest import BUNDLED, ROOT
from symdyn.generate import module_name, render
from test_generated import rendered

STRICT = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]


def write_c(path, folder, params="numeric"):
    name = module_name(path, params)
    files = rendered(path, ("c",), params) if params != "numeric" else rendered(path)
    for suffix in (".h", ".c", ".json"):
        (folder / f"{name}{suffix}").write_text(files[f"{name}{suffix}"])
    return folder / f"{name}.c"


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_strict_compile(path, compiler, tmp_path):
    for params in ("numeric", "symbolic") if path.name == "puma560.yaml" else ("numeric",):
        c_file = write_c(path, tmp_path, params)
        result = subprocess.run([compiler, *STRICT, "-c", str(c_file), "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[:2000]


#: modules as users compile them, lanes and parts on: a chain, a tree, a floating base, an MJCF free joint, and the smallest module with
#: lane parts (the Panda's forward dynamics derivatives, 1935 statements: above the tuning's lane_statements; the
#: UR5's are 1268 since they come from the analytical derivatives)
STRICT_MODULES = {"chain": ("robots/planar6.yaml", {}, None),
                  "tree": ("tests/data/two_branches.urdf", {}, None),
                  "floating": ("tests/data/two_branches.urdf", {"floating_base": True}, None),
                  "lane-parts": ("robots/panda.urdf", {}, ("forward_dynamics_derivatives",)),
                  # MuJoCo's coordinates: the free joint's quaternion (w, x, y, z) moves without the free-flyer's
                  # rotation of its position step (sd_quat_rotate was left unused: -Wunused-function)
                  "mujoco-free": ("tests/data/mjcf/free.xml", {}, None),
                  # a quadruped's legs in loops (codegen/c/branch_lanes.py): their tables, loops and copies out, and
                  # scalar statements between loops (forward dynamics); lane parts too (the Coriolis matrix)
                  "branch-lanes": ("robots/mjcf/menagerie/unitree_go2/go2.xml", {},
                                   ("inverse_dynamics", "forward_dynamics", "coriolis_matrix"))}


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("case", STRICT_MODULES)
def test_strict_compile_as_load_c_builds(case, compiler, tmp_path):
    """Strict C99 warnings as errors with load_c's own flags (-O3, -march=native, -fopenmp): the batch entries'
    lanes and lane parts included (the conftest's SYMDYN_NO_LANES only changes what load_c compiles)."""
    from symdyn.codegen.c import loader as cload
    from symdyn.generate import render
    path, options, functions = STRICT_MODULES[case]
    model = symdyn.load_robot(ROOT / path, **options)
    files = render(model, ("c",), functions=functions)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    c_file = next(tmp_path / name for name in files if name.endswith(".c"))
    source = c_file.read_text()
    assert "_lanes(long sd_first" in source
    assert ("_lanes2(" in source) == (case in ("lane-parts", "branch-lanes"))
    assert "for (int sd_l = 0;" in source or case != "branch-lanes"
    flags = [*STRICT[:1], *STRICT[2:], *cload.OPT_FLAGS, "-fopenmp", *(cload.GCC_FLAGS if compiler == "gcc" else ())]
    for build in (flags, [*STRICT, "-fopenmp"]):      # load_c's, and a plain -O2 OpenMP build (clang: -Wpass-failed)
        result = subprocess.run([compiler, *build, "-c", str(c_file), "-o", str(tmp_path / "x.o")], capture_output=True,
                                text=True)
        assert result.returncode == 0, result.stderr[:2000]


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "%(m)s.h"
int main(void) {
    enum { N = %(M)s_DOF };
    double *q = malloc(N * sizeof *q), *v = malloc(N * sizeof *v), *a = malloc(N * sizeof *a);
    double *out = malloc(N * N * sizeof *out);
    double sum = 0;
    for (int i = 0; i < N; ++i) { q[i] = 0.3 * i - 1; v[i] = 0.5 - 0.1 * i; a[i] = 0.2 * i; }
    %(m)s_inverse_dynamics(q, v, a, out);        sum += out[N - 1];
    %(m)s_forward_dynamics(q, v, a, out);        sum += out[N - 1];
    %(m)s_mass_matrix(q, out);                   sum += out[N * N - 1];
    %(m)s_mass_matrix_inverse(q, out);           sum += out[N * N - 1];
    %(m)s_coriolis_matrix(q, v, out);            sum += out[N * N - 1];
    %(m)s_gravity(q, out);                       sum += out[0];
    %(m)s_innovations_factor_inverse(q, out);    sum += out[0];
    %(m)s_coriolis_nu(q, v, out);                sum += out[0];
    %(m)s_coriolis_eta(q, v, out);               sum += out[0];
    %(m)s_udu_factor(q, out);                    sum += out[1];
    %(m)s_diagonalized_forward_dynamics(q, v, a, out, out + N);  sum += out[0] + out[2 * N - 1];
    printf("%%.17g\n", sum);
    free(q); free(v); free(a); free(out);
    return 0;
}
"""


#: what DRIVER calls: the module is generated with these alone (a sanitized -O1 build of the default set, the
#: derivatives included, took gcc about 3 minutes; it checks nothing more, since only what runs is checked)
DRIVEN = re.findall(r"%\(m\)s_(\w+)\(", DRIVER)


def test_address_and_undefined_behaviour_sanitizers(tmp_path):
    path = ROOT / "robots" / "panda.urdf"
    name = module_name(path)
    files = render(symdyn.load_robot(path), ("c",), functions=DRIVEN)
    for file_name, text in files.items():
        (tmp_path / file_name).write_text(text)
    c_file = tmp_path / f"{name}.c"
    (tmp_path / "main.c").write_text(DRIVER % {"m": name, "M": name.upper()})
    exe = tmp_path / "main"
    flags = ["-std=c99", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    build = subprocess.run(["gcc", *flags, str(c_file), str(tmp_path / "main.c"), "-o", str(exe), "-lm"], capture_output=True, text=True)
    if build.returncode != 0 and "asan" in build.stderr.lower():
        pytest.skip("AddressSanitizer runtime not available")
    assert build.returncode == 0, build.stderr[:2000]
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[:2000]
    assert np.isfinite(float(run.stdout))
