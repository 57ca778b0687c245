// Frame Jacobians and centroidal maps: symdyn-generated C99 against Pinocchio's C++, same process.
//
//   bench_kinematics <urdf> <frame,frame,...> <iterations> [--reps=N] [--floating]
//
// Compiled with -DSYMDYN_ROBOT=R -DSYMDYN_HEADER='"R.h"' -DSYMDYN_DOF=<R>_DOF -DSYMDYN_NF=<R>_NF
// [-DSYMDYN_NQ=<R>_NQ] and linked with the generated R.c, whose FRAMES must be the frames given on the
// command line, in that order (symdyn generate --frames). --floating: Pinocchio's model gets a
// free-flyer root (q: xyz, quaternion xyzw; symdyn generate --floating-base).
// Pinocchio: computeJointJacobians + getFrameJacobian(LOCAL_WORLD_ALIGNED) per frame; the
// centroidal map computeCentroidalMap; centerOfMass; jacobianCenterOfMass. Every symdyn output is
// checked against Pinocchio's on every state before timing. One JSON line per function.
#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <pinocchio/algorithm/center-of-mass.hpp>
#include <pinocchio/algorithm/centroidal.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include SYMDYN_HEADER
#ifndef SYMDYN_NQ
#define SYMDYN_NQ SYMDYN_DOF
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(suffix) CAT(SYMDYN_ROBOT, suffix)

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

static void escape(const void * p) { asm volatile("" : : "g"(p) : "memory"); }

template<class F>
static double time_rep(F & f, int pool, long passes)
{
  auto t0 = std::chrono::steady_clock::now();
  for (long p = 0; p < passes; ++p)
    for (int s = 0; s < pool; ++s)
      f(s);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(passes * pool);
}

static double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int main(int argc, char ** argv)
{
  if (argc < 4)
  {
    std::fprintf(stderr, "usage: %s URDF FRAME,... ITERATIONS [--reps=N]\n", argv[0]);
    return 2;
  }
  int reps = 11;
  bool floating = false;
  for (int i = 4; i < argc; ++i)
    if (std::string(argv[i]).rfind("--reps=", 0) == 0)
      reps = std::atoi(argv[i] + 7);
    else if (std::string(argv[i]) == "--floating")
      floating = true;
  pinocchio::Model model;
  if (floating)
    pinocchio::urdf::buildModel(argv[1], pinocchio::JointModelFreeFlyer(), model);
  else
    pinocchio::urdf::buildModel(argv[1], model);
  pinocchio::Data data(model);
  std::vector<pinocchio::FrameIndex> frames;
  std::stringstream names(argv[2]);
  for (std::string name; std::getline(names, name, ',');)
    frames.push_back(model.getFrameId(name, pinocchio::BODY));
  const int nq = model.nq, nv = model.nv, nf = int(frames.size());
  if (nq != SYMDYN_NQ || nv != SYMDYN_DOF || nf != SYMDYN_NF)
  {
    std::fprintf(stderr, "error: model nq %d nv %d frames %d, generated NQ %d DOF %d NF %d\n", nq, nv, nf,
                 int(SYMDYN_NQ), int(SYMDYN_DOF), int(SYMDYN_NF));
    return 1;
  }
  const int pool = 64;
  const long iterations = std::atol(argv[3]), passes = std::max(1L, iterations / pool);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-M_PI, M_PI);
  std::vector<double> qs(size_t(pool) * nq);
  for (double & x : qs)
    x = u(rng);
  if (floating)      // a unit quaternion: normalize the random 4-vector (the translation stays in [-pi, pi])
    for (int s = 0; s < pool; ++s)
    {
      Eigen::Map<Eigen::Vector4d> quat(&qs[size_t(s) * nq + 3]);
      quat.normalize();
    }
  auto Q = [&](int s) { return Eigen::Map<const Eigen::VectorXd>(&qs[size_t(s) * nq], nq); };

  pinocchio::Data::Matrix6x J(6, nv);
  std::vector<double> out(size_t(6 * nf) * nv + 64);
  double * y = out.data();

  auto pin_J = [&](int s) {
    pinocchio::computeJointJacobians(model, data, Q(s));
    for (int f = 0; f < nf; ++f)
    {
      J.setZero();
      pinocchio::getFrameJacobian(model, data, frames[f], pinocchio::LOCAL_WORLD_ALIGNED, J);
      escape(J.data());
    }
  };
  auto sym_J = [&](int s) { FN(_frame_jacobian)(&qs[size_t(s) * nq], y); escape(y); };
  auto pin_Ag = [&](int s) { escape(pinocchio::computeCentroidalMap(model, data, Q(s)).data()); };
  auto sym_Ag = [&](int s) { FN(_centroidal_momentum_matrix)(&qs[size_t(s) * nq], y); escape(y); };
  auto pin_com = [&](int s) { escape(pinocchio::centerOfMass(model, data, Q(s)).data()); };
  auto sym_com = [&](int s) { FN(_center_of_mass)(&qs[size_t(s) * nq], y); escape(y); };
  auto pin_Jc = [&](int s) { escape(pinocchio::jacobianCenterOfMass(model, data, Q(s)).data()); };
  auto sym_Jc = [&](int s) { FN(_com_jacobian)(&qs[size_t(s) * nq], y); escape(y); };

  // correctness on every state
  double err[4] = {0, 0, 0, 0};
  auto rel = [](const Eigen::MatrixXd & a, const Eigen::MatrixXd & b) {
    return (a - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
  };
  for (int s = 0; s < pool; ++s)
  {
    sym_J(s);
    pinocchio::computeJointJacobians(model, data, Q(s));
    for (int f = 0; f < nf; ++f)
    {
      J.setZero();
      pinocchio::getFrameJacobian(model, data, frames[f], pinocchio::LOCAL_WORLD_ALIGNED, J);
      err[0] = std::max(err[0], rel(Eigen::Map<RowMat>(y + size_t(6 * f) * nv, 6, nv), J));
    }
    sym_Ag(s);
    err[1] = std::max(err[1], rel(Eigen::Map<RowMat>(y, 6, nv), pinocchio::computeCentroidalMap(model, data, Q(s))));
    sym_com(s);
    err[2] = std::max(err[2], rel(Eigen::Map<Eigen::VectorXd>(y, 3), pinocchio::centerOfMass(model, data, Q(s))));
    sym_Jc(s);
    err[3] = std::max(err[3], rel(Eigen::Map<RowMat>(y, 3, nv), pinocchio::jacobianCenterOfMass(model, data, Q(s))));
  }

  const char * names_sym[4] = {"frame_jacobian", "centroidal_momentum_matrix", "center_of_mass", "com_jacobian"};
  const char * names_pin[4] = {"computeJointJacobians+getFrameJacobian", "computeCentroidalMap", "centerOfMass",
                               "jacobianCenterOfMass"};
  auto rep = [&](int k, bool symdyn, long np) -> double {
    switch (k)
    {
    case 0: return symdyn ? time_rep(sym_J, pool, np) : time_rep(pin_J, pool, np);
    case 1: return symdyn ? time_rep(sym_Ag, pool, np) : time_rep(pin_Ag, pool, np);
    case 2: return symdyn ? time_rep(sym_com, pool, np) : time_rep(pin_com, pool, np);
    default: return symdyn ? time_rep(sym_Jc, pool, np) : time_rep(pin_Jc, pool, np);
    }
  };
  for (int k = 0; k < 4; ++k)
  {
    rep(k, false, std::max(1L, passes / 4));
    rep(k, true, std::max(1L, passes / 4));
  }
  std::vector<double> tp[4], ts[4];
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 4; ++k)
    {
      bool first = r % 2 == 0;       // alternate which goes first
      double a = rep(k, !first, passes), b = rep(k, first, passes);
      (first ? tp : ts)[k].push_back(a);
      (first ? ts : tp)[k].push_back(b);
    }
  // the minima too: on a loaded machine the fastest repetition is the least disturbed one
  auto least = [](const std::vector<double> & v) { return *std::min_element(v.begin(), v.end()); };
  for (int k = 0; k < 4; ++k)
    std::printf("{\"function\": \"%s\", \"pinocchio_fn\": \"%s\", \"dof\": %d, \"frames\": %d, \"pinocchio_ns\": %.1f, "
                "\"symdyn_ns\": %.1f, \"ratio\": %.2f, \"pinocchio_min_ns\": %.1f, \"symdyn_min_ns\": %.1f, "
                "\"ratio_of_minima\": %.2f, \"max_rel_err\": %.2e}\n",
                names_sym[k], names_pin[k], nv, nf, median(tp[k]), median(ts[k]), median(tp[k]) / median(ts[k]),
                least(tp[k]), least(ts[k]), least(tp[k]) / least(ts[k]), err[k]);
  return 0;
}
