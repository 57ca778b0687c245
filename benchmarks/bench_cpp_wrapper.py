"""Cost of the C++ (Eigen) wrapper over the C functions it calls: ns per call, same binary.

    python benchmarks/bench_cpp_wrapper.py [--robot robots/panda.urdf] [--states 1000] [--reps 200]

Generates the robot with --lang cpp into a temporary folder, compiles one program (g++ -O3
-march=native; the .c with load_c's flags) that times each function called directly in C on raw
arrays and through the wrapper on Eigen types (Eigen::Map inputs, results by value), on the same
random states, and prints a Markdown table (best of 5 runs of reps x states calls).
"""
import argparse
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import symdyn  # noqa: E402
from symdyn.generate import module_name, render  # noqa: E402

FUNCTIONS = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "forward_dynamics", "frame_jacobian")

PROGRAM = r"""
#include "{m}.hpp"
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
namespace r = symdyn::{m};
static double best(int runs, auto body) {{
    double t = 1e300;
    for (int k = 0; k < runs; ++k) {{
        auto a = std::chrono::steady_clock::now(); body();
        t = std::min(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }}
    return t;
}}
int main() {{
    const int S = {states}, R = {reps};
    std::mt19937 gen(1); std::uniform_real_distribution<double> u(-3, 3);
    std::vector<double> q(S * r::NQ), v(S * r::NV), w(S * r::NV);
    for (auto *x : {{&q, &v, &w}}) for (double &y : *x) y = u(gen);
    std::vector<double> out(r::NV * r::NV * 6 * r::NF + r::NV * r::NV);
    volatile double sink = 0;
    auto Q = [&](int i) {{ return Eigen::Map<const r::ConfigVector>(&q[i * r::NQ]); }};
    auto V = [&](int i) {{ return Eigen::Map<const r::TangentVector>(&v[i * r::NV]); }};
    auto W = [&](int i) {{ return Eigen::Map<const r::TangentVector>(&w[i * r::NV]); }};
{cases}
    return 0;
}}
"""
CASE = r"""
    {{
        double c = best(5, [&] {{ double s = 0; for (int k = 0; k < R; ++k) for (int i = 0; i < S; ++i) {{
            {m}_{f}({c_args}out.data()); s += out[0]; }} sink = sink + s; }});
        double e = best(5, [&] {{ double s = 0; for (int k = 0; k < R; ++k) for (int i = 0; i < S; ++i) {{
            const auto x = r::{f}({e_args}); s += {first}; }} sink = sink + s; }});
        std::printf("| {f} | %.1f | %.1f |\n", c / (S * R) * 1e9, e / (S * R) * 1e9);
    }}
"""
ARGS = {"inverse_dynamics": 3, "mass_matrix": 1, "coriolis_matrix": 2, "forward_dynamics": 3, "frame_jacobian": 1}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default=str(ROOT / "robots" / "panda.urdf"))
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    eigen = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "include" / "eigen3"
    if not (eigen / "Eigen" / "Core").is_file():
        eigen = Path("/usr/include/eigen3")
    model = symdyn.load_robot(args.robot)
    m = module_name(args.robot)
    folder = Path(tempfile.mkdtemp(prefix="bench-cpp-"))
    try:
        for name, text in render(model, ("cpp",), functions=list(FUNCTIONS)).items():
            (folder / name).write_text(text)
        cases = []
        for f in FUNCTIONS:
            n = ARGS[f]
            c_args = "".join(f"&{a}[i * r::{'NQ' if a == 'q' else 'NV'}], " for a in "qvw"[:n])
            e_args = ", ".join(f"{a.upper()}(i)" for a in "qvw"[:n])
            first = "x[0](0, 0)" if f == "frame_jacobian" else "x(0, 0)"
            cases.append(CASE.format(m=m, f=f, c_args=c_args, e_args=e_args, first=first))
        (folder / "bench.cpp").write_text(PROGRAM.format(m=m, states=args.states, reps=args.reps, cases="".join(cases)))
        flags = ["-O3", "-march=native"]
        subprocess.run(["cc", *flags, "-ffp-contract=fast", "-std=c99", "-c", f"{m}.c"], cwd=folder, check=True)
        subprocess.run(["g++", *flags, "-std=c++20", "-isystem", str(eigen), "bench.cpp", f"{m}.o", "-lm", "-o", "bench"],
                       cwd=folder, check=True)
        print(f"{model.name}: ns per call, C on raw arrays vs the C++ wrapper on Eigen types ({args.states} states x "
              f"{args.reps}, best of 5)\n\n| function | C | C++ (Eigen) |\n|---|---|---|", flush=True)
        subprocess.run([str(folder / "bench")], check=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
