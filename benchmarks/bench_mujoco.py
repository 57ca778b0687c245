"""MuJoCo as a speed peer (issue 27, item 4): symdyn's generated C against MuJoCo's C, side by side in one
process (one C program linking both, one thread), per call, on the same robot in MuJoCo's coordinates
(--conventions mujoco: qpos, qvel, qacc and qfrc go into both unchanged).

    python benchmarks/bench_mujoco.py [--models humanoid,ant,solo12] [--repeat 7]

Rows (ns per call, the best of `repeat` runs of 20000 calls over 64 states; the median in brackets):
  ID   generated inverse_dynamics        | mj_kinematics + mj_comPos + mj_comVel + mj_rne(flg_acc=1)
  M    generated mass_matrix             | mj_kinematics + mj_comPos + mj_crb + mj_fullM (dense, both triangles)
  M^-1 generated mass_matrix_inverse     | mj_kinematics + mj_comPos + mj_crb + mj_factorM + mj_solveM (one vector)
  FD   generated forward_dynamics        | mj_forward with qfrc_applied (constraints and actuation off)
  batch FD per state: the generated forward_dynamics_batch over 4096 states against a loop of mj_forward.
  dID  generated inverse_dynamics_derivatives (dtau/dq, dtau/dv) | mjd_inverseFD (DfDq, DfDv: MuJoCo's finite
       differences of mj_inverse, eps 1e-6, forward differences: not the same accuracy, what MuJoCo offers)
Before timing, the generated functions are checked against MuJoCo (symdyn.oracle.mujoco) at 5 random states, the
derivatives against mjd_inverseFD (their own column: forward differences, about sqrt(eps) accuracy).
gymnasium's Humanoid and Ant need the MJCF reader (symdyn/readers/mjcf.py); a model symdyn cannot load is
reported and skipped.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

FUNCTIONS = ["inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "inverse_dynamics_derivatives"]
STATES, BATCH = 64, 4096
FLAGS = ["-O3", "-march=native", "-ffp-contract=fast", "-fno-math-errno", "-fno-tree-slp-vectorize"]


def _gym(name):
    import gymnasium
    return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / name


def _solo12():
    from conftest import erd_path
    return erd_path("solo_description/robots/solo12.urdf")


MODELS = {"humanoid": (lambda: _gym("humanoid.xml"), False), "ant": (lambda: _gym("ant.xml"), False),
          "solo12": (_solo12, True)}

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mujoco/mujoco.h>
#include "PREFIX.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
static double *Q, *V, *A, *OUT, BEST, MEDIAN;
static int NQ_, NV_, REPEAT;
static const int CALLS = 20000;

#define TIME(label, body) do { double t[64]; \
    for (int r = 0; r < REPEAT; ++r) { double t0 = now(); \
        for (int i = 0; i < CALLS; ++i) { const int s = i % STATES; body; } \
        t[r] = (now() - t0) / CALLS; } \
    qsort(t, REPEAT, sizeof(double), cmp); printf("%s %.1f %.1f\n", label, t[0], t[REPEAT / 2]); } while (0)

#define STATES 64
static void load(mjModel *m, mjData *d, int s, int vel) {
    mju_copy(d->qpos, Q + s * NQ_, NQ_);
    mju_copy(d->qvel, V + s * NV_, NV_);
    if (vel) mju_copy(d->qacc, A + s * NV_, NV_);
}

int main(int argc, char **argv) {
    char err[1000];
    mjModel *m = mj_loadXML(argv[1], 0, err, sizeof err);
    if (!m) { fprintf(stderr, "%s\n", err); return 1; }
    m->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_ACTUATION;
    mjData *d = mj_makeData(m);
    NQ_ = m->nq; NV_ = m->nv; REPEAT = atoi(argv[3]);
    const long n = BATCH_N;
    Q = malloc(sizeof(double) * n * NQ_); V = malloc(sizeof(double) * n * NV_); A = malloc(sizeof(double) * n * NV_);
    OUT = malloc(sizeof(double) * n * NV_ * NV_);
    FILE *f = fopen(argv[2], "rb");
    if (fread(Q, sizeof(double), n * NQ_, f) != (size_t)(n * NQ_) || fread(V, sizeof(double), n * NV_, f) != (size_t)(n * NV_)
        || fread(A, sizeof(double), n * NV_, f) != (size_t)(n * NV_)) return 2;
    fclose(f);
    double *M = malloc(sizeof(double) * NV_ * NV_), *x = malloc(sizeof(double) * NV_);
    double *DfDq = malloc(sizeof(double) * NV_ * NV_), *DfDv = malloc(sizeof(double) * NV_ * NV_);
    TIME("ID symdyn", PREFIX_inverse_dynamics(Q + s * NQ_, V + s * NV_, A + s * NV_, OUT));
    TIME("ID mujoco", (load(m, d, s, 1), mj_kinematics(m, d), mj_comPos(m, d), mj_comVel(m, d), mj_rne(m, d, 1, OUT)));
    TIME("M symdyn", PREFIX_mass_matrix(Q + s * NQ_, OUT));
    TIME("M mujoco", (load(m, d, s, 0), mj_kinematics(m, d), mj_comPos(m, d), mj_crb(m, d), mj_fullM(m, d, M)));
    TIME("Minv symdyn", PREFIX_mass_matrix_inverse(Q + s * NQ_, OUT));
    TIME("Minv mujoco", (load(m, d, s, 0), mj_kinematics(m, d), mj_comPos(m, d), mj_crb(m, d), mj_factorM(m, d),
                         mj_solveM(m, d, x, A + s * NV_, 1)));
    TIME("FD symdyn", PREFIX_forward_dynamics(Q + s * NQ_, V + s * NV_, A + s * NV_, OUT));
    TIME("FD mujoco", (load(m, d, s, 0), mju_copy(d->qfrc_applied, A + s * NV_, NV_), mj_forward(m, d)));
    m->opt.integrator = mjINT_EULER;      /* mjd_inverseFD refuses RK4 (gymnasium's Humanoid); mj_inverse ignores it */
    TIME("dID symdyn", PREFIX_inverse_dynamics_derivatives(Q + s * NQ_, V + s * NV_, A + s * NV_, OUT, OUT + NV_ * NV_));
    TIME("dID mujoco", (load(m, d, s, 1), mjd_inverseFD(m, d, 1e-6, 0, DfDq, DfDv, NULL, NULL, NULL, NULL, NULL)));
    {   /* batch: per state */
        double t[64];
        for (int r = 0; r < REPEAT; ++r) { double t0 = now(); PREFIX_forward_dynamics_batch(n, Q, V, A, OUT);
                                           t[r] = (now() - t0) / n; }
        qsort(t, REPEAT, sizeof(double), cmp); printf("batchFD symdyn %.1f %.1f\n", t[0], t[REPEAT / 2]);
        for (int r = 0; r < REPEAT; ++r) { double t0 = now();
            for (long s = 0; s < n; ++s) { load(m, d, s, 0); mju_copy(d->qfrc_applied, A + s * NV_, NV_); mj_forward(m, d);
                                           mju_copy(OUT + s * NV_, d->qacc, NV_); }
            t[r] = (now() - t0) / n; }
        qsort(t, REPEAT, sizeof(double), cmp); printf("batchFD mujoco %.1f %.1f\n", t[0], t[REPEAT / 2]);
    }
    return 0;
}
"""


def _mujoco_xml(model, work):
    """MuJoCo's model file: the MJCF itself, or the URDF as symdyn.oracle.mujoco builds it, saved as MJCF."""
    from symdyn.oracle import mujoco as oracle
    if Path(model.provenance.path).suffix.lower() != ".urdf":
        return Path(model.provenance.path)
    spec = oracle._urdf_spec(model.provenance.path, model.floating)
    spec.compile()
    out = work / "mujoco_model.xml"
    out.write_text(spec.to_xml())
    return out


def _check(model, lib, states=5):
    """Largest relative difference of the generated C from MuJoCo (symdyn.oracle.mujoco)."""
    from symdyn.multibody.lie import random_configuration
    from symdyn.oracle import mujoco as oracle
    ref, rng, worst, derivatives = oracle.functions(model), np.random.default_rng(1), 0.0, 0.0
    M = ref["mass_matrix"]
    ref["mass_matrix_inverse"] = lambda q: np.linalg.inv(M(q))
    for q in random_configuration(model, rng, states):
        v, a = rng.normal(size=(2, model.nv))
        for name, args in (("inverse_dynamics", (q, v, a)), ("mass_matrix", (q,)), ("mass_matrix_inverse", (q,)),
                           ("forward_dynamics", (q, v, a))):
            theirs = ref[name](*args)
            worst = max(worst, float(np.abs(getattr(lib, name)(*args) - theirs).max() / max(1, np.abs(theirs).max())))
        derivatives = max(derivatives, _derivatives_error(model, lib, q, v, a))
    return worst, derivatives


def _derivatives_error(model, lib, q, v, a):
    """Relative difference of the generated dtau/dq, dtau/dv from mjd_inverseFD's (forward differences, eps 1e-6; MuJoCo's
    matrices are transposed: DfDq[i, j] = d f_j / d q_i)."""
    import mujoco
    from symdyn.oracle import mujoco as oracle
    m = oracle.mujoco_model(model)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_ACTUATION
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER     # mjd_inverseFD refuses RK4; mj_inverse ignores it
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
    DfDq, DfDv = np.zeros((m.nv, m.nv)), np.zeros((m.nv, m.nv))
    mujoco.mjd_inverseFD(m, d, 1e-6, 0, DfDq, DfDv, None, None, None, None, None)
    ours = lib.inverse_dynamics_derivatives(q, v, a)
    return max(float(np.abs(x - y.T).max() / max(1, np.abs(y).max())) for x, y in zip(ours, (DfDq, DfDv)))


def _identity_layout(model):
    from symdyn.oracle import mujoco as oracle
    lay = oracle.Layout(model, oracle.mujoco_model(model))
    return np.array_equal(lay.q, np.arange(model.nq)) and np.array_equal(lay.v, np.arange(model.nv))


def bench(name, repeat, work):
    import mujoco
    from symdyn.codegen.c.loader import load_c
    from symdyn.generate import module_name, render
    from symdyn.multibody.lie import random_configuration
    from symdyn.readers.load import load_robot
    path, floating = MODELS[name]
    try:
        model = load_robot(path(), floating_base=floating, conventions="mujoco")
    except Exception as exc:                    # no MJCF reader yet: say so, go on
        return {"model": name, "skipped": str(exc).splitlines()[0][:160]}
    if not _identity_layout(model):
        return {"model": name, "skipped": "symdyn's joint order differs from MuJoCo's"}
    prefix = module_name(model.provenance.path)
    t = time.perf_counter()
    files = render(model, ("c",), functions=FUNCTIONS)
    generation = time.perf_counter() - t
    for fname, text in files.items():
        (work / fname).write_text(text)
    t = time.perf_counter()
    subprocess.run(["gcc", *FLAGS, "-c", str(work / f"{prefix}.c"), "-o", str(work / f"{prefix}.o")], check=True)
    compile_s = time.perf_counter() - t
    accuracy = _check(model, load_c(work / f"{prefix}.c"))
    rng = np.random.default_rng(0)
    q = random_configuration(model, rng, BATCH)
    (np.concatenate([q.ravel(), rng.normal(size=(2, BATCH, model.nv)).ravel()])).astype(np.float64).tofile(
        work / "states.bin")
    mjdir = Path(mujoco.__file__).parent
    lib = next(mjdir.glob("libmujoco.so*"))
    source = HARNESS.replace("PREFIX", prefix).replace("BATCH_N", str(BATCH))
    (work / "harness.c").write_text(source)
    exe = work / f"harness_{prefix}"
    subprocess.run(["gcc", *FLAGS, f"-I{mjdir / 'include'}", f"-I{work}", str(work / "harness.c"),
                    str(work / f"{prefix}.o"), str(lib), f"-Wl,-rpath,{mjdir}", "-lm", "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), str(_mujoco_xml(model, work)), str(work / "states.bin"), str(repeat)],
                         capture_output=True, text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    times = {}
    for line in out.stdout.splitlines():
        label, who, best, median = line.split()
        times[(label, who)] = (float(best), float(median))
    return {"model": name, "nq": model.nq, "nv": model.nv, "generation": generation, "compile": compile_s,
            "accuracy": accuracy, "times": times}


def table(results):
    rows = ["| model | nq | nv | function | symdyn ns | MuJoCo ns | MuJoCo / symdyn |", "|---|---|---|---|---|---|---|"]
    for r in results:
        if "skipped" in r:
            rows.append(f"| {r['model']} | | | skipped: {r['skipped']} | | | |")
            continue
        for label in ("ID", "M", "Minv", "FD", "batchFD", "dID"):
            (sb, sm), (mb, mm) = r["times"][(label, "symdyn")], r["times"][(label, "mujoco")]
            rows.append(f"| {r['model']} | {r['nq']} | {r['nv']} | {label} | {sb:.0f} ({sm:.0f}) | {mb:.0f} ({mm:.0f}) "
                        f"| {mb / sb:.1f}x |")
    rows += ["", "| model | generation (s) | compile of the C, gcc -O3 (s) | largest relative difference from MuJoCo "
             "| dID from mjd_inverseFD |", "|---|---|---|---|---|"]
    rows += [f"| {r['model']} | {r['generation']:.1f} | {r['compile']:.1f} | {r['accuracy'][0]:.1e} | "
             f"{r['accuracy'][1]:.1e} |" for r in results if "skipped" not in r]
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    import mujoco
    print(f"MuJoCo {mujoco.__version__}, gcc {' '.join(FLAGS)}, one thread; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-mujoco-") as tmp:
        for name in args.models.split(","):
            work = Path(tmp) / name
            work.mkdir()
            results.append(bench(name, args.repeat, work))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(table(results))


if __name__ == "__main__":
    sys.exit(main())
