// M^-1 and M of talos_reduced with a free-flyer root: symdyn's generated C against Pinocchio's
// computeMinverse and crba, same process, interleaved (RESULTS.md section 10). Only these two
// algorithms are compiled in, so the harness builds in a fraction of bench.cpp's time, and it is
// compiled ONCE and linked with the generated objects to compare (before / after a change):
//   g++ <bench_c.py's flags: -O3 -DNDEBUG -ffp-contract=fast -std=c++17 -march=native, its EIGEN_* and
//       Pinocchio defines without PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION, its include dirs>
//       -I<dir with talos_reduced.h> -c bench_minverse.cpp -o bench_minverse.o
//   gcc -O3 -DNDEBUG -ffp-contract=fast -std=c99 -march=native -c <gen>/talos_reduced.c -o talos.o
//   g++ -O3 bench_minverse.o talos.o -o bench_minverse -L<lib> -lpinocchio_parsers -lpinocchio_default
//   ./bench_minverse <example-robot-data>/talos_data/robots/talos_reduced.urdf TAG
// (talos_reduced.c from `symdyn generate talos_reduced.urdf --floating-base --lang c
//  --functions mass_matrix,mass_matrix_inverse,...`). Prints one JSON line per function: medians of
// 21 repetitions of 20000 calls over 1000 random configurations (pinocchio::randomConfiguration in
// [-3.14159, 3.14159]), the median per-repetition ratio, and the largest relative difference from
// Pinocchio (its upper triangle mirrored) over the 1000 configurations.
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" {
#include "talos_reduced.h"
}
static inline void escape(const void * p) { asm volatile("" : : "g"(p) : "memory"); }
template <class F> double time_rep(F f, int pool, int iters) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) f(i % pool);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
}
int main(int argc, char ** argv) {
  const char * tag = argc > 2 ? argv[2] : "?";
  pinocchio::Model model;
  pinocchio::urdf::buildModel(argv[1], pinocchio::JointModelFreeFlyer(), model);
  pinocchio::Data data(model);
  const int nq = model.nq, nv = model.nv, pool = 1000, iters = 20000, reps = 21;
  if (nq != TALOS_REDUCED_NQ || nv != TALOS_REDUCED_DOF) { std::fprintf(stderr, "size mismatch\n"); return 1; }
  std::vector<double> Q(size_t(pool) * nq);
  Eigen::VectorXd lo = Eigen::VectorXd::Constant(nq, -3.14159), hi = Eigen::VectorXd::Constant(nq, 3.14159);
  for (int s = 0; s < pool; ++s) {
    std::srand(unsigned(42 + s));
    Eigen::VectorXd q = pinocchio::randomConfiguration(model, lo, hi);
    std::copy(q.data(), q.data() + nq, &Q[size_t(s) * nq]);
  }
  std::vector<double> y(size_t(nv) * nv);
  auto q_of = [&](int s) { return Eigen::Map<const Eigen::VectorXd>(&Q[size_t(s) * nq], nq); };
  double err = 0, errM = 0;
  for (int s = 0; s < pool; ++s) {
    Eigen::MatrixXd P = pinocchio::computeMinverse(model, data, q_of(s));
    P.triangularView<Eigen::StrictlyLower>() = P.transpose().triangularView<Eigen::StrictlyLower>();
    talos_reduced_mass_matrix_inverse(&Q[size_t(s) * nq], y.data());
    Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> Y(y.data(), nv, nv);
    err = std::max(err, (Y - P).lpNorm<Eigen::Infinity>() / P.lpNorm<Eigen::Infinity>());
    Eigen::MatrixXd M = pinocchio::crba(model, data, q_of(s));
    M.triangularView<Eigen::StrictlyLower>() = M.transpose().triangularView<Eigen::StrictlyLower>();
    talos_reduced_mass_matrix(&Q[size_t(s) * nq], y.data());
    errM = std::max(errM, (Y - M).lpNorm<Eigen::Infinity>() / M.lpNorm<Eigen::Infinity>());
  }
  auto pin_Minv = [&](int s) { escape(pinocchio::computeMinverse(model, data, q_of(s)).data()); };
  auto sym_Minv = [&](int s) { talos_reduced_mass_matrix_inverse(&Q[size_t(s) * nq], y.data()); escape(y.data()); };
  auto pin_M = [&](int s) { escape(pinocchio::crba(model, data, q_of(s)).data()); };
  auto sym_M = [&](int s) { talos_reduced_mass_matrix(&Q[size_t(s) * nq], y.data()); escape(y.data()); };
  std::vector<double> a, b, c, d, r1, r2;
  for (int r = 0; r < reps; ++r) {
    double t1 = time_rep(pin_Minv, pool, iters), t2 = time_rep(sym_Minv, pool, iters);
    double t3 = time_rep(pin_M, pool, iters), t4 = time_rep(sym_M, pool, iters);
    a.push_back(t1); b.push_back(t2); c.push_back(t3); d.push_back(t4); r1.push_back(t1 / t2); r2.push_back(t3 / t4);
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  std::printf("{\"tag\": \"%s\", \"function\": \"mass_matrix_inverse\", \"pinocchio_ns\": %.1f, \"symdyn_ns\": %.1f, \"ratio\": %.3f, \"max_rel_err\": %.2e}\n",
              tag, med(a), med(b), med(r1), err);
  std::printf("{\"tag\": \"%s\", \"function\": \"mass_matrix\", \"pinocchio_ns\": %.1f, \"symdyn_ns\": %.1f, \"ratio\": %.3f, \"max_rel_err\": %.2e}\n",
              tag, med(c), med(d), med(r2), errM);
  return 0;
}
