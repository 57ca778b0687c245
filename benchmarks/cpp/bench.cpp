// symdyn vs Pinocchio timing harness.
//
// How to (re)run: use the driver, which locates Pinocchio / Eigen / Boost in the
// installed cmeel packages, holds the compile flags, builds this file and prints
// a Markdown table:
//
//   python benchmarks/bench_c.py --robots panda ur5 xarm7              # Pinocchio only
//   python benchmarks/bench_c.py --generated generated --robots panda  # + generated R.c
//   python benchmarks/bench_c.py --show-cmd ...   # print compile/run commands
//
// Direct use (after building with the command that bench_c.py prints):
//
//   bench <urdf> <iterations> [locked_joint ...] [--name=R] [--reps=N] [--pool=N]
//         [--seed=N] [--cpu=N]
//
//   <iterations>   calls per timed repetition (rounded up to a whole number of
//                  passes over the state pool)
//   locked joints  joint names (space or comma separated) removed with
//                  pinocchio::buildReducedModel at the neutral configuration
//                  (q = 0 for revolute/prismatic joints), e.g. for panda:
//                  panda_finger_joint1 panda_finger_joint2
//   --reps=N       timed repetitions; the reported time is their median (11)
//   --pool=N       number of random states cycled through (1000)
//   --cpu=N        pin the process to CPU N (Linux)
//   --contacts=F,..  point contacts (CONTACT_3D, LOCAL_WORLD_ALIGNED) of these frames with the
//                  world: also times constraintDynamics and impulseDynamics (restitution 0.5),
//                  and with a module generated with the same contacts (R_NC, -DSYMDYN_NC=R_NC)
//                  R_constrained_forward_dynamics and R_impact
//
// Compiled with -DSYMDYN_ROBOT=R -DSYMDYN_HEADER='"R.h"' and linked with the
// generated R.c (compiled as C99), it also times R_inverse_dynamics, ... on the
// same states, interleaving Pinocchio and symdyn repetitions, and checks the
// results against Pinocchio. If the header's DOF macro is not R_DOF (e.g.
// PANDA_DOF), add -DSYMDYN_DOF=PANDA_DOF (bench_c.py does this automatically).
//
// With -DSYMDYN_DERIVATIVES=1 (the header declares R_inverse_dynamics_derivatives, R_forward_dynamics_
// derivatives) it times them against computeRNEADerivatives and computeABADerivatives too.
//
// Output: one JSON object per line on stdout:
//   {"robot", "dof", "function", "pinocchio_fn", "pinocchio_ns", "symdyn_ns",
//    "ratio", "max_rel_err"}
//   ratio       = pinocchio_ns / symdyn_ns  (> 1 means symdyn is faster)
//   max_rel_err = max over all pool states of ||x_symdyn - x_pin||_inf / ||x_pin||_inf
//                 (M and Minv from Pinocchio are symmetrized first)
//   symdyn_ns / ratio / max_rel_err are null without a generated module.
// Diagnostics go to stderr.

#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/impulse-dynamics.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/model.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#if defined(SYMDYN_ROBOT) != defined(SYMDYN_HEADER)
#error "define both SYMDYN_ROBOT and SYMDYN_HEADER, or neither"
#endif

#ifdef SYMDYN_ROBOT
extern "C" {
#include SYMDYN_HEADER
}
#define SYMDYN_CAT_(a, b) a##b
#define SYMDYN_CAT(a, b) SYMDYN_CAT_(a, b)
#define SYMDYN_FN(suffix) SYMDYN_CAT(SYMDYN_ROBOT, suffix)
// DOF macro of the generated header: R_DOF unless given (e.g. -DSYMDYN_DOF=PANDA_DOF)
#ifndef SYMDYN_DOF
#define SYMDYN_DOF SYMDYN_CAT(SYMDYN_ROBOT, _DOF)
#endif
#ifndef SYMDYN_NUM_PARAMS
#define SYMDYN_NUM_PARAMS SYMDYN_CAT(SYMDYN_ROBOT, _NUM_PARAMS)
#endif
// NQ macro of the generated header (floating bases: nq = nv + 1); DOF when absent
#ifndef SYMDYN_NQ
#define SYMDYN_NQ SYMDYN_DOF
#endif
#define SYMDYN_STR_(x) #x
#define SYMDYN_STR(x) SYMDYN_STR_(x)
#define HAVE_SYMDYN 1
#else
#define HAVE_SYMDYN 0
#endif
// -DSYMDYN_DERIVATIVES=1: the module also has <R>_inverse_dynamics_derivatives and
// <R>_forward_dynamics_derivatives (generated with --functions; bench_c.py sets it from the header)
#ifndef SYMDYN_DERIVATIVES
#define SYMDYN_DERIVATIVES 0
#endif
// -DSYMDYN_BASE_REGRESSOR=1 -DSYMDYN_NUM_BASE=<R>_NUM_BASE_PARAMS: the module has <R>_base_regressor and
// <R>_base_parameters (the default set; bench_c.py sets both from the header)
#ifndef SYMDYN_BASE_REGRESSOR
#define SYMDYN_BASE_REGRESSOR 0
#endif

namespace
{

typedef pinocchio::Model Model;
typedef pinocchio::Data Data;
typedef Eigen::Map<const Eigen::VectorXd> CVecMap;
// Pinocchio's precompiled (extern template) algorithms are instantiated for
// Eigen::Ref<const VectorXd> arguments; passing exactly that type makes every
// call go to libpinocchio_default (unless compiled with --pinocchio-inline,
// i.e. without PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION). Ref of a contiguous
// Map does not copy.
typedef Eigen::Ref<const Eigen::VectorXd> CRef;
typedef Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> RowMat;

// Keep the compiler from discarding/reordering work: the pointed-to memory is
// treated as read, and all memory as clobbered, at this point.
inline void escape(const void * p)
{
  asm volatile("" : : "g"(p) : "memory");
}

struct Options
{
  std::string urdf;
  long iterations = 0;
  std::vector<std::string> locked;
  std::string name;
  int reps = 11;
  int pool = 1000;
  unsigned long seed = 42;
  int cpu = -1;
  bool floating = false; // root joint: Pinocchio's free-flyer (q: xyz, quaternion xyzw)
  std::vector<std::string> contacts; // frames in point contact with the world
};

[[noreturn]] void usage(const char * msg)
{
  std::fprintf(
    stderr,
    "error: %s\nusage: bench <urdf> <iterations> [locked_joint ...] [--name=R] "
    "[--reps=N] [--pool=N] [--seed=N] [--cpu=N] [--floating] [--contacts=F,...]\n",
    msg);
  std::exit(2);
}

Options parse_args(int argc, char ** argv)
{
  Options o;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i)
  {
    std::string a = argv[i];
    auto val = [&](const char * key) -> const char * {
      size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char * v = val("--name="))
      o.name = v;
    else if (const char * v = val("--reps="))
      o.reps = std::atoi(v);
    else if (const char * v = val("--pool="))
      o.pool = std::atoi(v);
    else if (const char * v = val("--seed="))
      o.seed = std::strtoul(v, nullptr, 10);
    else if (const char * v = val("--cpu="))
      o.cpu = std::atoi(v);
    else if (a == "--floating")
      o.floating = true;
    else if (const char * v = val("--contacts="))
    {
      std::string list = v;
      for (size_t start = 0; start <= list.size();)
      {
        size_t end = std::min(list.find(',', start), list.size());
        if (end > start)
          o.contacts.push_back(list.substr(start, end - start));
        start = end + 1;
      }
    }
    else if (a.compare(0, 2, "--") == 0)
      usage(("unknown option " + a).c_str());
    else
      pos.push_back(a);
  }
  if (pos.size() < 2)
    usage("need <urdf> <iterations>");
  o.urdf = pos[0];
  o.iterations = std::atol(pos[1].c_str());
  if (o.iterations <= 0 || o.reps <= 0 || o.pool <= 0)
    usage("iterations, reps and pool must be positive");
  for (size_t i = 2; i < pos.size(); ++i)
  {
    // accept "a,b" as well as "a b"; "-" or "" mean no locked joint
    std::string s = pos[i];
    size_t start = 0;
    while (start <= s.size())
    {
      size_t end = s.find(',', start);
      if (end == std::string::npos)
        end = s.size();
      std::string tok = s.substr(start, end - start);
      if (!tok.empty() && tok != "-")
        o.locked.push_back(tok);
      start = end + 1;
    }
  }
  if (o.name.empty())
  {
#if HAVE_SYMDYN
    o.name = SYMDYN_STR(SYMDYN_ROBOT);
#else
    std::string stem = o.urdf.substr(o.urdf.find_last_of('/') + 1);
    o.name = stem.substr(0, stem.find('.'));
#endif
  }
  return o;
}

Model load_model(const Options & o)
{
  Model full;
  if (o.floating)
    pinocchio::urdf::buildModel(o.urdf, pinocchio::JointModelFreeFlyer(), full);
  else
    pinocchio::urdf::buildModel(o.urdf, full);
  if (o.locked.empty())
    return full;
  std::vector<pinocchio::JointIndex> ids;
  for (const std::string & j : o.locked)
  {
    if (!full.existJointName(j))
      throw std::runtime_error("locked joint not in model: " + j);
    ids.push_back(full.getJointId(j));
  }
  // neutral == 0 for revolute / prismatic joints
  return pinocchio::buildReducedModel(full, ids, pinocchio::neutral(full));
}

// Pool of random states, stored state-major and contiguous: state s occupies
// [s*n, (s+1)*n) of each array.
struct StatePool
{
  int nq, nv, size;
  std::vector<double> q, qd, qdd, tau;
};

StatePool make_pool(const Model & model, Data & data, const Options & o)
{
  StatePool p;
  p.nq = model.nq;
  p.nv = model.nv;
  p.size = o.pool;
  p.q.resize(size_t(p.nq) * p.size);
  p.qd.resize(size_t(p.nv) * p.size);
  p.qdd.resize(size_t(p.nv) * p.size);
  p.tau.resize(size_t(p.nv) * p.size);

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // finite sampling range for q: joint limits, clipped to [-pi, pi]
  Eigen::VectorXd lo = model.lowerPositionLimit.cwiseMax(-M_PI);
  Eigen::VectorXd hi = model.upperPositionLimit.cwiseMin(M_PI);
  for (int i = 0; i < p.nq; ++i)
    if (!(lo[i] < hi[i]))
    {
      lo[i] = -M_PI;
      hi[i] = M_PI;
    }
  Eigen::VectorXd a2(p.nv);
  for (int s = 0; s < p.size; ++s)
  {
    Eigen::Map<Eigen::VectorXd> q(&p.q[size_t(s) * p.nq], p.nq);
    Eigen::Map<Eigen::VectorXd> qd(&p.qd[size_t(s) * p.nv], p.nv);
    Eigen::Map<Eigen::VectorXd> qdd(&p.qdd[size_t(s) * p.nv], p.nv);
    Eigen::Map<Eigen::VectorXd> tau(&p.tau[size_t(s) * p.nv], p.nv);
    if (p.nq == p.nv)
    {
      for (int i = 0; i < p.nq; ++i)
        q[i] = lo[i] + 0.5 * (u(rng) + 1.0) * (hi[i] - lo[i]);
    }
    else
    {
      // non-Euclidean configuration space (continuous joints, free-flyer: random
      // translation in [-pi, pi]^3 and a uniformly random unit quaternion)
      std::srand(unsigned(o.seed + s));
      q = pinocchio::randomConfiguration(model, lo, hi);
    }
    for (int i = 0; i < p.nv; ++i)
    {
      qd[i] = 2.0 * u(rng);  // rad/s
      qdd[i] = 5.0 * u(rng); // rad/s^2
      a2[i] = 5.0 * u(rng);
    }
    // torques that produce O(1) accelerations in forward dynamics
    tau = pinocchio::rnea(model, data, CRef(q), CRef(qd), CRef(a2));
  }
  return p;
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One timed repetition: `passes` sweeps over the state pool. Returns ns/call.
template<class F>
double time_rep(F & f, int pool, long passes)
{
  auto t0 = std::chrono::steady_clock::now();
  for (long p = 0; p < passes; ++p)
    for (int s = 0; s < pool; ++s)
      f(s);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(passes * pool);
}

std::string json_num(double x, const char * fmt = "%.2f")
{
  if (!std::isfinite(x))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

void emit(
  const Options & o,
  int dof,
  const char * fn,
  const char * pin_fn,
  double pin_ns,
  double sym_ns,
  double err)
{
  std::printf(
    "{\"robot\": \"%s\", \"dof\": %d, \"function\": \"%s\", \"pinocchio_fn\": \"%s\", "
    "\"pinocchio_ns\": %s, \"symdyn_ns\": %s, \"ratio\": %s, \"max_rel_err\": %s}\n",
    o.name.c_str(), dof, fn, pin_fn, json_num(pin_ns).c_str(), json_num(sym_ns).c_str(),
    json_num(pin_ns / sym_ns, "%.3f").c_str(), json_num(err, "%.3e").c_str());
  std::fflush(stdout);
}

// ||a - b||_inf / ||b||_inf (a, b same shape, same storage order as given)
template<class A, class B>
double rel_err(const Eigen::MatrixBase<A> & a, const Eigen::MatrixBase<B> & b)
{
  double den = b.template lpNorm<Eigen::Infinity>();
  double num = (a - b).template lpNorm<Eigen::Infinity>();
  if (!std::isfinite(num))
    return INFINITY;
  return num / std::max(den, 1e-300);
}

[[maybe_unused]] Eigen::MatrixXd symmetrize_upper(const Eigen::MatrixXd & m)
{
  Eigen::MatrixXd s = m;
  s.triangularView<Eigen::StrictlyLower>() = s.transpose().triangularView<Eigen::StrictlyLower>();
  return s;
}

} // namespace

int main(int argc, char ** argv)
{
  Options o = parse_args(argc, argv);

#ifdef __linux__
  if (o.cpu >= 0)
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      std::perror("sched_setaffinity");
  }
#endif

  Model model;
  try
  {
    model = load_model(o);
  }
  catch (const std::exception & e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  Data data(model);
  const int nq = model.nq, nv = model.nv;

  StatePool P = make_pool(model, data, o);
  const int pool = P.size;
  const long passes = std::max(1L, (o.iterations + pool - 1) / pool);

  std::fprintf(
    stderr, "# robot=%s nq=%d nv=%d locked=%zu pool=%d calls/rep=%ld reps=%d symdyn=%s\n",
    o.name.c_str(), nq, nv, o.locked.size(), pool, passes * pool, o.reps,
    HAVE_SYMDYN ? "yes" : "no");

  auto Q = [&](int s) { return CRef(CVecMap(&P.q[size_t(s) * nq], nq)); };
  auto V = [&](int s) { return CRef(CVecMap(&P.qd[size_t(s) * nv], nv)); };
  auto A = [&](int s) { return CRef(CVecMap(&P.qdd[size_t(s) * nv], nv)); };
  auto T = [&](int s) { return CRef(CVecMap(&P.tau[size_t(s) * nv], nv)); };

  // ---- Pinocchio kernels (default Convention::LOCAL for crba / aba) ----
  // rnea, aba and crba include model.armature; model.damping and model.friction (read from the
  // URDF's <dynamics>) are not used by Pinocchio's algorithms, so the joint friction
  // damping * v + friction * sign(v) is added to rnea and taken from the torques of aba here, as
  // symdyn's inverse and forward dynamics do.
  Eigen::VectorXd fbuf(nv), tbuf(nv);
  auto friction = [&](int s) -> const Eigen::VectorXd & {
    fbuf.noalias() = model.damping.cwiseProduct(V(s));
    fbuf.array() += model.friction.array() * V(s).array().sign();
    return fbuf;
  };
  auto pin_rnea = [&](int s) -> const Eigen::VectorXd & {
    pinocchio::rnea(model, data, Q(s), V(s), A(s));
    data.tau += friction(s);
    return data.tau;
  };
  auto pin_aba = [&](int s) -> const Eigen::VectorXd & {
    tbuf = T(s) - friction(s);
    return pinocchio::aba(model, data, Q(s), V(s), tbuf);
  };
  auto pin_id = [&](int s) { escape(pin_rnea(s).data()); };
  auto pin_Y = [&](int s) {
    escape(pinocchio::computeJointTorqueRegressor(model, data, Q(s), V(s), A(s)).data());
  };
  auto pin_M = [&](int s) { escape(pinocchio::crba(model, data, Q(s)).data()); };
  auto pin_Minv = [&](int s) { escape(pinocchio::computeMinverse(model, data, Q(s)).data()); };
  auto pin_fd = [&](int s) { escape(pin_aba(s).data()); };
  auto pin_g = [&](int s) { escape(pinocchio::computeGeneralizedGravity(model, data, Q(s)).data()); };
  auto pin_C = [&](int s) { escape(pinocchio::computeCoriolisMatrix(model, data, Q(s), V(s)).data()); };
  // derivatives: the viscous friction's diag(damping) is added to dtau/dv (cheap); forward dynamics'
  // -Minv diag(damping) on ddq/dv is left out of the timed call (it favours Pinocchio) and added in the check
  auto pin_drnea = [&](int s) {
    pinocchio::computeRNEADerivatives(model, data, Q(s), V(s), A(s));
    data.dtau_dv.diagonal() += model.damping;
    escape(data.dtau_dq.data());
    escape(data.dtau_dv.data());
  };
  auto pin_daba = [&](int s) {
    tbuf = T(s) - friction(s);
    pinocchio::computeABADerivatives(model, data, Q(s), V(s), tbuf);
    escape(data.ddq_dq.data());
    escape(data.ddq_dv.data());
    escape(data.Minv.data());
  };

  const double NaN = NAN;

#if HAVE_SYMDYN
  if (SYMDYN_NQ != nq || SYMDYN_DOF != nv)
  {
    std::fprintf(
      stderr, "error: generated module has nq=%d nv=%d but the Pinocchio model has nq=%d nv=%d\n",
      int(SYMDYN_NQ), int(SYMDYN_DOF), nq, nv);
    return 1;
  }
  const int n = nv;
  const int np = SYMDYN_NUM_PARAMS;   // regressor columns (-DSYMDYN_NUM_PARAMS=<R>_NUM_PARAMS)
  std::vector<double> out(size_t(n) * np);
  double * y = out.data();
  const double * q0 = P.q.data();
  const double * qd0 = P.qd.data();
  const double * qdd0 = P.qdd.data();
  const double * tau0 = P.tau.data();

  auto sym_id = [&](int s) {
    SYMDYN_FN(_inverse_dynamics)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, qdd0 + size_t(s) * n, y);
    escape(y);
  };
  auto sym_M = [&](int s) {
    SYMDYN_FN(_mass_matrix)(q0 + size_t(s) * nq, y);
    escape(y);
  };
  auto sym_Minv = [&](int s) {
    SYMDYN_FN(_mass_matrix_inverse)(q0 + size_t(s) * nq, y);
    escape(y);
  };
  auto sym_fd = [&](int s) {
    SYMDYN_FN(_forward_dynamics)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, tau0 + size_t(s) * n, y);
    escape(y);
  };
  auto sym_g = [&](int s) {
    SYMDYN_FN(_gravity)(q0 + size_t(s) * nq, y);
    escape(y);
  };
  auto sym_C = [&](int s) {
    SYMDYN_FN(_coriolis_matrix)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, y);
    escape(y);
  };
  auto sym_Y = [&](int s) {
    SYMDYN_FN(_regressor)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, qdd0 + size_t(s) * n, y);
    escape(y);
  };
#if SYMDYN_BASE_REGRESSOR
  // base_regressor (n x b) beside the regressor: timed against the same computeJointTorqueRegressor,
  // checked as base_regressor @ base_parameters(PARAMETERS) = Pinocchio's rnea (+ friction)
  const int nb = SYMDYN_NUM_BASE;
  std::vector<double> beta(nb), tau_b(n);
  SYMDYN_FN(_base_parameters)(SYMDYN_FN(_parameters), beta.data());
  auto sym_Yb = [&](int s) {
    SYMDYN_FN(_base_regressor)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, qdd0 + size_t(s) * n, y);
    escape(y);
  };
#endif
  std::vector<double> dbuf(size_t(3) * n * n);
  double * d0 = dbuf.data();
  double * d1 = d0 + size_t(n) * n;
  double * d2 = d1 + size_t(n) * n;
#if SYMDYN_DERIVATIVES
  auto sym_drnea = [&](int s) {
    SYMDYN_FN(_inverse_dynamics_derivatives)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, qdd0 + size_t(s) * n, d0, d1);
    escape(d0);
    escape(d1);
  };
  auto sym_daba = [&](int s) {
    SYMDYN_FN(_forward_dynamics_derivatives)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, tau0 + size_t(s) * n, d0, d1, d2);
    escape(d0);
    escape(d1);
    escape(d2);
  };
#else
  auto sym_drnea = [&](int) {};
  auto sym_daba = [&](int) {};
#endif

  // ---- correctness: every pool state, outside the timed loops ----
  double e_id = 0, e_M = 0, e_Minv = 0, e_fd = 0, e_g = 0, e_C = 0, e_Y = 0, e_drnea = NAN, e_daba = NAN, e_Yb = NAN;
  Eigen::MatrixXd yr(n, 10 * n);
  Eigen::Map<const Eigen::VectorXd> yv(y, n);
  Eigen::Map<const RowMat> ym(y, n, n);
  for (int s = 0; s < pool; ++s)
  {
    sym_id(s);
    e_id = std::max(e_id, rel_err(yv, pin_rnea(s)));
    sym_M(s);
    e_M = std::max(e_M, rel_err(ym, symmetrize_upper(pinocchio::crba(model, data, Q(s)))));
    sym_Minv(s);
    e_Minv = std::max(
      e_Minv,
      rel_err(ym, symmetrize_upper(pinocchio::computeMinverse(model, data, Q(s)))));
    sym_fd(s);
    e_fd = std::max(e_fd, rel_err(yv, pin_aba(s)));
    sym_g(s);
    e_g = std::max(e_g, rel_err(yv, pinocchio::computeGeneralizedGravity(model, data, Q(s))));
    sym_C(s);
    e_C = std::max(e_C, rel_err(ym, pinocchio::computeCoriolisMatrix(model, data, Q(s), V(s))));
    sym_Y(s);   // n x np, row-major; its first 10 n columns are the rigid-body ones
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 10 * n; ++j)
        yr(i, j) = y[size_t(i) * np + j];
    e_Y = std::max(e_Y, rel_err(yr, pinocchio::computeJointTorqueRegressor(model, data, Q(s), V(s), A(s))));
#if SYMDYN_BASE_REGRESSOR
    sym_Yb(s);
    for (int i = 0; i < n; ++i)
    {
      tau_b[i] = 0;
      for (int j = 0; j < nb; ++j)
        tau_b[i] += y[size_t(i) * nb + j] * beta[j];
    }
    e_Yb = std::max(s ? e_Yb : 0.0, rel_err(Eigen::Map<const Eigen::VectorXd>(tau_b.data(), n), pin_rnea(s)));
#endif
#if SYMDYN_DERIVATIVES
    Eigen::Map<const RowMat> m0(d0, n, n), m1(d1, n, n), m2(d2, n, n);
    sym_drnea(s);
    pin_drnea(s);
    e_drnea = std::max(s ? e_drnea : 0.0, std::max(rel_err(m0, data.dtau_dq), rel_err(m1, data.dtau_dv)));
    sym_daba(s);
    pin_daba(s);
    Eigen::MatrixXd Minv = symmetrize_upper(data.Minv);
    Eigen::MatrixXd ddq_dv = data.ddq_dv - Minv * model.damping.asDiagonal();
    e_daba = std::max(s ? e_daba : 0.0, std::max(std::max(rel_err(m0, data.ddq_dq), rel_err(m1, ddq_dv)),
                                                 rel_err(m2, Minv)));
#endif
  }
#endif

  // ---- contacts: constraintDynamics and impulseDynamics (point contacts, world-aligned) ----
  typedef pinocchio::RigidConstraintModel ContactModel;
  typedef pinocchio::RigidConstraintData ContactData;
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(ContactModel) contact_models;
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(ContactData) contact_datas;
  for (const std::string & f : o.contacts)
  {
    if (!model.existFrame(f))
    {
      std::fprintf(stderr, "error: no frame %s\n", f.c_str());
      return 1;
    }
    const pinocchio::Frame & frame = model.frames[model.getFrameId(f)];
    contact_models.push_back(ContactModel(
      pinocchio::CONTACT_3D, model, frame.parentJoint, frame.placement, pinocchio::LOCAL_WORLD_ALIGNED));
  }
  for (const ContactModel & cm : contact_models)
    contact_datas.push_back(ContactData(cm));
  // mu = 0 and one iteration: one exact Cholesky solve of the contact problem (the cheapest setting)
  pinocchio::ProximalSettings prox(1e-12, 0.0, 1);
  const double restitution = 0.5;
  if (!contact_models.empty())
    pinocchio::initConstraintDynamics(model, data, contact_models, contact_datas);
  auto pin_cfd_eval = [&](int s) -> const Eigen::VectorXd & {
    tbuf = T(s) - friction(s);
    return pinocchio::constraintDynamics(model, data, Q(s), V(s), tbuf, contact_models, contact_datas, prox);
  };
  auto pin_imp_eval = [&](int s) -> const Eigen::VectorXd & {
    return pinocchio::impulseDynamics(model, data, Q(s), V(s), contact_models, contact_datas, restitution, prox);
  };
  auto pin_cfd = [&](int s) { escape(pin_cfd_eval(s).data()); };
  auto pin_imp = [&](int s) { escape(pin_imp_eval(s).data()); };

  // ---- timing ----
  // Each repetition runs every function once (round-robin), Pinocchio and
  // symdyn alternating which goes first, so that transient interference (other
  // load, frequency changes) is spread over all functions and both
  // implementations; the median over repetitions then discards it.
  std::vector<const char *> fn_names = {"inverse_dynamics", "mass_matrix", "mass_matrix_inverse",
                                        "forward_dynamics", "gravity", "coriolis_matrix", "regressor"};
  std::vector<const char *> pin_names = {"rnea", "crba", "computeMinverse", "aba",
                                         "computeGeneralizedGravity", "computeCoriolisMatrix",
                                         "computeJointTorqueRegressor"};
  std::vector<std::function<double(long)>> pin_reps = {
    [&](long np) { return time_rep(pin_id, pool, np); },   [&](long np) { return time_rep(pin_M, pool, np); },
    [&](long np) { return time_rep(pin_Minv, pool, np); }, [&](long np) { return time_rep(pin_fd, pool, np); },
    [&](long np) { return time_rep(pin_g, pool, np); },    [&](long np) { return time_rep(pin_C, pool, np); },
    [&](long np) { return time_rep(pin_Y, pool, np); }};
  // the derivatives: timed for symdyn when the module has them (SYMDYN_DERIVATIVES)
  fn_names.push_back("inverse_dynamics_derivatives");
  pin_names.push_back("computeRNEADerivatives");
  pin_reps.push_back([&](long np) { return time_rep(pin_drnea, pool, np); });
  fn_names.push_back("forward_dynamics_derivatives");
  pin_names.push_back("computeABADerivatives");
  pin_reps.push_back([&](long np) { return time_rep(pin_daba, pool, np); });
  fn_names.push_back("base_regressor");   // timed for symdyn when the module has it (SYMDYN_BASE_REGRESSOR)
  pin_names.push_back("computeJointTorqueRegressor");
  pin_reps.push_back([&](long np) { return time_rep(pin_Y, pool, np); });
  if (!contact_models.empty())
  {
    fn_names.push_back("constrained_forward_dynamics");
    pin_names.push_back("constraintDynamics");
    pin_reps.push_back([&](long np) { return time_rep(pin_cfd, pool, np); });
    fn_names.push_back("impact");
    pin_names.push_back("impulseDynamics");
    pin_reps.push_back([&](long np) { return time_rep(pin_imp, pool, np); });
  }
  const int NF = int(fn_names.size());
  std::vector<std::function<double(long)>> sym_reps(NF, [&](long) { return NaN; });
  std::vector<double> errs(NF, NaN);
#if HAVE_SYMDYN
  sym_reps = {
    [&](long np) { return time_rep(sym_id, pool, np); },   [&](long np) { return time_rep(sym_M, pool, np); },
    [&](long np) { return time_rep(sym_Minv, pool, np); }, [&](long np) { return time_rep(sym_fd, pool, np); },
    [&](long np) { return time_rep(sym_g, pool, np); },    [&](long np) { return time_rep(sym_C, pool, np); },
    [&](long np) { return time_rep(sym_Y, pool, np); }};
  errs = {e_id, e_M, e_Minv, e_fd, e_g, e_C, e_Y, e_drnea, e_daba, e_Yb};
  sym_reps.push_back([&](long np) { return SYMDYN_DERIVATIVES ? time_rep(sym_drnea, pool, np) : NaN; });
  sym_reps.push_back([&](long np) { return SYMDYN_DERIVATIVES ? time_rep(sym_daba, pool, np) : NaN; });
#if SYMDYN_BASE_REGRESSOR
  sym_reps.push_back([&](long np) { return time_rep(sym_Yb, pool, np); });
#else
  sym_reps.push_back([&](long) { return NaN; });
#endif
  bool sym_contacts = false;
#ifdef SYMDYN_NC
  std::vector<double> lam(size_t(SYMDYN_NC));
  auto sym_cfd = [&](int s) {
    SYMDYN_FN(_constrained_forward_dynamics)(
      q0 + size_t(s) * nq, qd0 + size_t(s) * n, tau0 + size_t(s) * n, y, lam.data());
    escape(y);
    escape(lam.data());
  };
  auto sym_imp = [&](int s) {
    SYMDYN_FN(_impact)(q0 + size_t(s) * nq, qd0 + size_t(s) * n, &restitution, y, lam.data());
    escape(y);
    escape(lam.data());
  };
  if (!contact_models.empty())
  {
    if (int(SYMDYN_NC) != 3 * int(contact_models.size()))
    {
      std::fprintf(stderr, "error: the module has %d constraint rows, --contacts gives %d\n", int(SYMDYN_NC),
                   3 * int(contact_models.size()));
      return 1;
    }
    double e_cfd = 0, e_lam = 0, e_imp = 0, e_P = 0;
    Eigen::Map<const Eigen::VectorXd> lv(lam.data(), SYMDYN_NC);
    for (int s = 0; s < pool; ++s)
    {
      sym_cfd(s);
      e_cfd = std::max(e_cfd, rel_err(yv, pin_cfd_eval(s)));
      e_lam = std::max(e_lam, rel_err(lv, data.lambda_c));
      sym_imp(s);
      e_imp = std::max(e_imp, rel_err(yv, pin_imp_eval(s)));
      e_P = std::max(e_P, rel_err(lv, data.impulse_c));
    }
    std::fprintf(stderr, "# contacts: lambda max rel err %.3e, impulse %.3e\n", e_lam, e_P);
    sym_reps.push_back([&](long np) { return time_rep(sym_cfd, pool, np); });
    sym_reps.push_back([&](long np) { return time_rep(sym_imp, pool, np); });
    errs.push_back(std::max(e_cfd, e_lam));
    errs.push_back(std::max(e_imp, e_P));
    sym_contacts = true;
  }
#endif
  if (!contact_models.empty() && !sym_contacts)
  {
    sym_reps.resize(NF, [&](long) { return NaN; });
    errs.resize(NF, NaN);
  }
#endif
  // warm-up: caches, branch predictors, page faults, CPU frequency
  const long warm = std::max(1L, passes / 4);
  for (int k = 0; k < NF; ++k)
  {
    pin_reps[k](warm);
    if (HAVE_SYMDYN)
      sym_reps[k](warm);
  }
  std::vector<std::vector<double>> tp(NF), ts(NF);
  for (int r = 0; r < o.reps; ++r)
    for (int k = 0; k < NF; ++k)
    {
      if (!HAVE_SYMDYN)
        tp[k].push_back(pin_reps[k](passes));
      else if (r % 2 == 0)
      {
        tp[k].push_back(pin_reps[k](passes));
        ts[k].push_back(sym_reps[k](passes));
      }
      else
      {
        ts[k].push_back(sym_reps[k](passes));
        tp[k].push_back(pin_reps[k](passes));
      }
    }
  for (int k = 0; k < NF; ++k)
    emit(
      o, nv, fn_names[k], pin_names[k], median(tp[k]), HAVE_SYMDYN ? median(ts[k]) : NaN,
      errs[k]);

  return 0;
}
