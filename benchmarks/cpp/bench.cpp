// symdyn vs Pinocchio timing harness: generated C and Pinocchio's C++ side by side in one process.
//
// How to (re)run: use the driver, which locates Pinocchio / Eigen / Boost in the installed cmeel
// packages, holds the compile flags, builds this file once, builds each generated module as a shared
// library and prints a Markdown table:
//
//   python benchmarks/bench_c.py --robots panda ur5 xarm7                 # Pinocchio only
//   python benchmarks/bench_c.py --generated GEN --robots panda           # + GEN/panda.c
//   python benchmarks/bench_c.py --show-cmd ...   # print compile/run commands
//
// Direct use (after building with the command that bench_c.py prints):
//
//   bench <urdf> <iterations> [locked_joint ...] [--name=R] [--reps=N] [--pool=N]
//         [--seed=N] [--cpu=N] [--floating] [--contacts=F,...]
//         [--module=R.so --prefix=R --sizes=nq,nv,np,nb,nf,nc --frames=F,...]
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
//   --floating     Pinocchio's model gets a free-flyer root (q: xyz, quaternion xyzw)
//   --contacts=F,..  point contacts (CONTACT_3D, LOCAL_WORLD_ALIGNED) of these frames with the
//                  world: also times constraintDynamics and impulseDynamics (restitution 0.5),
//                  and, when the module has them (generated with the same --contact),
//                  R_constrained_forward_dynamics and R_impact
//   --module=PATH  the generated R.c compiled as a shared library; its functions R_<name> are looked
//                  up by name (dlsym): those it has are timed beside Pinocchio's counterpart, on the
//                  same states, interleaved, and checked against it first. --sizes gives the module's
//                  R_NQ, R_NV, R_NUM_PARAMS, R_NUM_BASE_PARAMS (0: no base regressor), R_NF, R_NC;
//                  --frames its FRAMES in order (the frame Jacobians are compared frame by frame).
//
// Loading the module at run time keeps this file robot-independent: it is compiled once per set of
// flags (minutes: Pinocchio's templates), and each robot costs only the compile of its own C.
//
// Output: one JSON object per line on stdout:
//   {"robot", "dof", "function", "pinocchio_fn", "pinocchio_ns", "symdyn_ns", "ratio",
//    "pinocchio_min_ns", "symdyn_min_ns", "ratio_of_minima", "max_rel_err"}
//   ratio       = pinocchio_ns / symdyn_ns  (> 1 means symdyn is faster; medians of the repetitions)
//   ratio_of_minima = the same of the fastest repetitions (the least disturbed on a loaded machine)
//   max_rel_err = max over all pool states of ||x_symdyn - x_pin||_inf / ||x_pin||_inf
//                 (M and Minv from Pinocchio are symmetrized first)
//   symdyn_ns / ratio / max_rel_err are null where the module lacks the function.
// Diagnostics go to stderr.

#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/centroidal.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/impulse-dynamics.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/model.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef __linux__
#include <sched.h>
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
  std::string module;                // generated module, compiled as a shared library (--module=PATH)
  std::string prefix;                // its functions' prefix, e.g. panda for panda_inverse_dynamics
  std::vector<int> sizes;            // --sizes=nq,nv,np,nb,nf,nc of the module (its manifest / header)
  std::vector<std::string> frames;   // the module's FRAMES, in order (--frames=F,...)
};

std::vector<std::string> split(const std::string & list)
{
  std::vector<std::string> out;
  for (size_t start = 0; start <= list.size();)
  {
    size_t end = std::min(list.find(',', start), list.size());
    if (end > start)
      out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

[[noreturn]] void usage(const char * msg)
{
  std::fprintf(
    stderr,
    "error: %s\nusage: bench <urdf> <iterations> [locked_joint ...] [--name=R] "
    "[--reps=N] [--pool=N] [--seed=N] [--cpu=N] [--floating] [--contacts=F,...]\n"
    "             [--module=R.so --prefix=R --sizes=nq,nv,np,nb,nf,nc --frames=F,...]\n",
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
      o.contacts = split(v);
    else if (const char * v = val("--module="))
      o.module = v;
    else if (const char * v = val("--prefix="))
      o.prefix = v;
    else if (const char * v = val("--frames="))
      o.frames = split(v);
    else if (const char * v = val("--sizes="))
      for (const std::string & x : split(v))
        o.sizes.push_back(std::atoi(x.c_str()));
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
  if (!o.module.empty() && (o.prefix.empty() || o.sizes.size() != 6))
    usage("--module needs --prefix and --sizes=nq,nv,np,nb,nf,nc");
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
    std::string stem = o.urdf.substr(o.urdf.find_last_of('/') + 1);
    o.name = o.prefix.empty() ? stem.substr(0, stem.find('.')) : o.prefix;
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

// One JSON line: the medians of the repetitions and their ratio, and the fastest repetitions and their ratio
// (on a loaded machine the fastest repetition of each side is its least disturbed one); ts empty: no symdyn.
void emit(const Options & o, int dof, const char * fn, const char * pin_fn, double err,
          const std::vector<double> & tp, const std::vector<double> & ts)
{
  const double pin_ns = median(tp), pin_min = *std::min_element(tp.begin(), tp.end());
  const double sym_ns = ts.empty() ? NAN : median(ts);
  const double sym_min = ts.empty() ? NAN : *std::min_element(ts.begin(), ts.end());
  std::printf(
    "{\"robot\": \"%s\", \"dof\": %d, \"function\": \"%s\", \"pinocchio_fn\": \"%s\", "
    "\"pinocchio_ns\": %s, \"symdyn_ns\": %s, \"ratio\": %s, \"pinocchio_min_ns\": %s, \"symdyn_min_ns\": %s, "
    "\"ratio_of_minima\": %s, \"max_rel_err\": %s}\n",
    o.name.c_str(), dof, fn, pin_fn, json_num(pin_ns).c_str(), json_num(sym_ns).c_str(),
    json_num(pin_ns / sym_ns, "%.3f").c_str(), json_num(pin_min).c_str(), json_num(sym_min).c_str(),
    json_num(pin_min / sym_min, "%.3f").c_str(), json_num(err, "%.3e").c_str());
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

// ---- the generated module, loaded at run time ----
typedef void (*Fn1)(const double *, double *);
typedef void (*Fn2)(const double *, const double *, double *);
typedef void (*Fn3)(const double *, const double *, const double *, double *);
typedef void (*Fn3x2)(const double *, const double *, const double *, double *, double *);
typedef void (*Fn3x3)(const double *, const double *, const double *, double *, double *, double *);

struct Module
{
  void * handle = nullptr;
  std::string prefix;
  int nq = 0, nv = 0, np = 0, nb = 0, nf = 0, nc = 0;

  // R_<name>, or nullptr when there is no module or it lacks the function
  template<class F>
  F get(const char * name) const
  {
    return handle ? reinterpret_cast<F>(dlsym(handle, (prefix + "_" + name).c_str())) : nullptr;
  }
};

Module load_module(const Options & o)
{
  Module m;
  if (o.module.empty())
    return m;
  m.handle = dlopen(o.module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m.handle)
    throw std::runtime_error(std::string("cannot load the module: ") + dlerror());
  m.prefix = o.prefix;
  m.nq = o.sizes[0], m.nv = o.sizes[1], m.np = o.sizes[2], m.nb = o.sizes[3], m.nf = o.sizes[4],
  m.nc = o.sizes[5];
  return m;
}

// One timed function: Pinocchio's repetition, symdyn's (empty without the function), the check's error.
struct Row
{
  std::string fn, pin_fn;
  std::function<double(long)> pin, sym;
  double err = NAN;
};

// Everything the kernels share: the model, its data, the states, the module and its output buffers.
struct Bench
{
  Model & model;
  Data & data;
  const StatePool & P;
  Module mod;
  int nq, nv, pool;
  std::vector<double> out, out2, out3;
  Eigen::VectorXd fbuf, tbuf;
  std::vector<Row> rows;

  Bench(Model & m, Data & d, const StatePool & p, const Module & md)
  : model(m), data(d), P(p), mod(md), nq(m.nq), nv(m.nv), pool(p.size), fbuf(m.nv), tbuf(m.nv)
  {
    size_t big = std::max({size_t(nv) * std::max(md.np, md.nb), size_t(6) * std::max(md.nf, 1) * nv,
                           size_t(nv) * nv, size_t(std::max(md.nc, 1))});
    out.resize(big + 64), out2.resize(size_t(nv) * nv + 64), out3.resize(size_t(nv) * nv + 64);
  }
  CRef Q(int s) const { return CRef(CVecMap(&P.q[size_t(s) * nq], nq)); }
  CRef V(int s) const { return CRef(CVecMap(&P.qd[size_t(s) * nv], nv)); }
  CRef A(int s) const { return CRef(CVecMap(&P.qdd[size_t(s) * nv], nv)); }
  CRef T(int s) const { return CRef(CVecMap(&P.tau[size_t(s) * nv], nv)); }
  const double * q(int s) const { return &P.q[size_t(s) * nq]; }
  const double * v(int s) const { return &P.qd[size_t(s) * nv]; }
  const double * a(int s) const { return &P.qdd[size_t(s) * nv]; }
  const double * t(int s) const { return &P.tau[size_t(s) * nv]; }
  Eigen::Map<const Eigen::VectorXd> yv() const { return Eigen::Map<const Eigen::VectorXd>(out.data(), nv); }
  Eigen::Map<const RowMat> ym(const std::vector<double> & b, int rows_, int off = 0) const
  {
    return Eigen::Map<const RowMat>(b.data() + off, rows_, nv);
  }

  // rnea, aba and crba include model.armature; model.damping and model.friction (read from the
  // URDF's <dynamics>) are not used by Pinocchio's algorithms, so the joint friction
  // damping * v + friction * sign(v) is added to rnea and taken from the torques of aba here, as
  // symdyn's inverse and forward dynamics do.
  const Eigen::VectorXd & friction(int s)
  {
    fbuf.noalias() = model.damping.cwiseProduct(V(s));
    fbuf.array() += model.friction.array() * V(s).array().sign();
    return fbuf;
  }
  const Eigen::VectorXd & rnea(int s)
  {
    pinocchio::rnea(model, data, Q(s), V(s), A(s));
    data.tau += friction(s);
    return data.tau;
  }
  const Eigen::VectorXd & aba(int s)
  {
    tbuf = T(s) - friction(s);
    return pinocchio::aba(model, data, Q(s), V(s), tbuf);
  }

  // Time `pin` (and `sym` when `have`); `check(s)` runs symdyn on state s and returns its error.
  template<class PinF, class SymF, class CheckF>
  void add(const char * fn, const char * pin_fn, PinF pin, bool have, SymF sym, CheckF check)
  {
    Row r;
    r.fn = fn, r.pin_fn = pin_fn;
    const int n = pool;
    r.pin = [pin, n](long passes) mutable { return time_rep(pin, n, passes); };
    if (have)
    {
      r.sym = [sym, n](long passes) mutable { return time_rep(sym, n, passes); };
      r.err = 0;
      for (int s = 0; s < pool; ++s)
        r.err = std::max(r.err, check(s));
    }
    rows.push_back(r);
  }
};

// ID, g, M, FD, M^-1, C
void add_dynamics(Bench & b)
{
  double * y = b.out.data();
  auto id = b.mod.get<Fn3>("inverse_dynamics");
  b.add("inverse_dynamics", "rnea", [&b](int s) { escape(b.rnea(s).data()); }, id != nullptr,
        [&b, id, y](int s) { id(b.q(s), b.v(s), b.a(s), y); escape(y); },
        [&b, id, y](int s) { id(b.q(s), b.v(s), b.a(s), y); return rel_err(b.yv(), b.rnea(s)); });
  auto g = b.mod.get<Fn1>("gravity");
  b.add("gravity", "computeGeneralizedGravity",
        [&b](int s) { escape(pinocchio::computeGeneralizedGravity(b.model, b.data, b.Q(s)).data()); }, g != nullptr,
        [&b, g, y](int s) { g(b.q(s), y); escape(y); },
        [&b, g, y](int s) {
          g(b.q(s), y);
          return rel_err(b.yv(), pinocchio::computeGeneralizedGravity(b.model, b.data, b.Q(s)));
        });
  auto M = b.mod.get<Fn1>("mass_matrix");
  b.add("mass_matrix", "crba", [&b](int s) { escape(pinocchio::crba(b.model, b.data, b.Q(s)).data()); },
        M != nullptr, [&b, M, y](int s) { M(b.q(s), y); escape(y); },
        [&b, M, y](int s) {
          M(b.q(s), y);
          return rel_err(b.ym(b.out, b.nv), symmetrize_upper(pinocchio::crba(b.model, b.data, b.Q(s))));
        });
  auto fd = b.mod.get<Fn3>("forward_dynamics");
  b.add("forward_dynamics", "aba", [&b](int s) { escape(b.aba(s).data()); }, fd != nullptr,
        [&b, fd, y](int s) { fd(b.q(s), b.v(s), b.t(s), y); escape(y); },
        [&b, fd, y](int s) { fd(b.q(s), b.v(s), b.t(s), y); return rel_err(b.yv(), b.aba(s)); });
  auto Mi = b.mod.get<Fn1>("mass_matrix_inverse");
  b.add("mass_matrix_inverse", "computeMinverse",
        [&b](int s) { escape(pinocchio::computeMinverse(b.model, b.data, b.Q(s)).data()); }, Mi != nullptr,
        [&b, Mi, y](int s) { Mi(b.q(s), y); escape(y); },
        [&b, Mi, y](int s) {
          Mi(b.q(s), y);
          return rel_err(b.ym(b.out, b.nv), symmetrize_upper(pinocchio::computeMinverse(b.model, b.data, b.Q(s))));
        });
  auto C = b.mod.get<Fn2>("coriolis_matrix");
  b.add("coriolis_matrix", "computeCoriolisMatrix",
        [&b](int s) { escape(pinocchio::computeCoriolisMatrix(b.model, b.data, b.Q(s), b.V(s)).data()); },
        C != nullptr, [&b, C, y](int s) { C(b.q(s), b.v(s), y); escape(y); },
        [&b, C, y](int s) {
          C(b.q(s), b.v(s), y);
          return rel_err(b.ym(b.out, b.nv), pinocchio::computeCoriolisMatrix(b.model, b.data, b.Q(s), b.V(s)));
        });
}

// J (every frame of FRAMES, LOCAL_WORLD_ALIGNED) and Ag
void add_kinematics(Bench & b, const std::vector<pinocchio::FrameIndex> & frames)
{
  double * y = b.out.data();
  auto Jbuf = std::make_shared<Data::Matrix6x>(6, b.nv);
  auto pin_J = [&b, frames, Jbuf](int s) {
    pinocchio::computeJointJacobians(b.model, b.data, b.Q(s));
    for (pinocchio::FrameIndex f : frames)
    {
      Jbuf->setZero();
      pinocchio::getFrameJacobian(b.model, b.data, f, pinocchio::LOCAL_WORLD_ALIGNED, *Jbuf);
      escape(Jbuf->data());
    }
  };
  auto J = b.mod.get<Fn1>("frame_jacobian");
  b.add("frame_jacobian", "computeJointJacobians+getFrameJacobian", pin_J, J != nullptr && !frames.empty(),
        [&b, J, y](int s) { J(b.q(s), y); escape(y); },
        [&b, J, y, frames](int s) {
          J(b.q(s), y);
          pinocchio::computeJointJacobians(b.model, b.data, b.Q(s));
          Data::Matrix6x Jp(6, b.nv);
          double e = 0;
          for (size_t f = 0; f < frames.size(); ++f)
          {
            Jp.setZero();
            pinocchio::getFrameJacobian(b.model, b.data, frames[f], pinocchio::LOCAL_WORLD_ALIGNED, Jp);
            e = std::max(e, rel_err(b.ym(b.out, 6, int(6 * f * b.nv)), Jp));
          }
          return e;
        });
  auto Ag = b.mod.get<Fn1>("centroidal_momentum_matrix");
  b.add("centroidal_momentum_matrix", "computeCentroidalMap",
        [&b](int s) { escape(pinocchio::computeCentroidalMap(b.model, b.data, b.Q(s)).data()); }, Ag != nullptr,
        [&b, Ag, y](int s) { Ag(b.q(s), y); escape(y); },
        [&b, Ag, y](int s) {
          Ag(b.q(s), y);
          return rel_err(b.ym(b.out, 6), pinocchio::computeCentroidalMap(b.model, b.data, b.Q(s)));
        });
}

// dID and dFD. The viscous friction's diag(damping) is added to Pinocchio's dtau/dv (cheap); forward
// dynamics' -Minv diag(damping) on ddq/dv is left out of the timed call (it favours Pinocchio) and added in
// the check.
void add_derivatives(Bench & b)
{
  double *d0 = b.out.data(), *d1 = b.out2.data(), *d2 = b.out3.data();
  auto pin_drnea = [&b](int s) {
    pinocchio::computeRNEADerivatives(b.model, b.data, b.Q(s), b.V(s), b.A(s));
    b.data.dtau_dv.diagonal() += b.model.damping;
    escape(b.data.dtau_dq.data());
    escape(b.data.dtau_dv.data());
  };
  auto pin_daba = [&b](int s) {
    b.tbuf = b.T(s) - b.friction(s);
    pinocchio::computeABADerivatives(b.model, b.data, b.Q(s), b.V(s), b.tbuf);
    escape(b.data.ddq_dq.data());
    escape(b.data.ddq_dv.data());
    escape(b.data.Minv.data());
  };
  auto did = b.mod.get<Fn3x2>("inverse_dynamics_derivatives");
  b.add("inverse_dynamics_derivatives", "computeRNEADerivatives", pin_drnea, did != nullptr,
        [&b, did, d0, d1](int s) { did(b.q(s), b.v(s), b.a(s), d0, d1); escape(d0); escape(d1); },
        [&b, did, d0, d1, pin_drnea](int s) mutable {
          did(b.q(s), b.v(s), b.a(s), d0, d1);
          pin_drnea(s);
          return std::max(rel_err(b.ym(b.out, b.nv), b.data.dtau_dq), rel_err(b.ym(b.out2, b.nv), b.data.dtau_dv));
        });
  auto dfd = b.mod.get<Fn3x3>("forward_dynamics_derivatives");
  b.add("forward_dynamics_derivatives", "computeABADerivatives", pin_daba, dfd != nullptr,
        [&b, dfd, d0, d1, d2](int s) { dfd(b.q(s), b.v(s), b.t(s), d0, d1, d2); escape(d0); escape(d1); escape(d2); },
        [&b, dfd, d0, d1, d2, pin_daba](int s) mutable {
          dfd(b.q(s), b.v(s), b.t(s), d0, d1, d2);
          pin_daba(s);
          Eigen::MatrixXd Minv = symmetrize_upper(b.data.Minv);
          Eigen::MatrixXd ddq_dv = b.data.ddq_dv - Minv * b.model.damping.asDiagonal();
          return std::max({rel_err(b.ym(b.out, b.nv), b.data.ddq_dq), rel_err(b.ym(b.out2, b.nv), ddq_dv),
                           rel_err(b.ym(b.out3, b.nv), Minv)});
        });
}

// Y (its first columns, Pinocchio's 10 per joint, are compared) and, when the module has it, the base
// regressor, checked as base_regressor @ base_parameters(PARAMETERS) = rnea (+ friction).
void add_regressors(Bench & b)
{
  double * y = b.out.data();
  auto pin_Y = [&b](int s) {
    escape(pinocchio::computeJointTorqueRegressor(b.model, b.data, b.Q(s), b.V(s), b.A(s)).data());
  };
  auto Y = b.mod.get<Fn3>("regressor");
  b.add("regressor", "computeJointTorqueRegressor", pin_Y, Y != nullptr,
        [&b, Y, y](int s) { Y(b.q(s), b.v(s), b.a(s), y); escape(y); },
        [&b, Y, y](int s) {
          Y(b.q(s), b.v(s), b.a(s), y);
          const auto & Yp = pinocchio::computeJointTorqueRegressor(b.model, b.data, b.Q(s), b.V(s), b.A(s));
          if (Yp.cols() > b.mod.np)
            return double(INFINITY);
          Eigen::Map<const RowMat, 0, Eigen::OuterStride<>> ys(y, b.nv, Yp.cols(), Eigen::OuterStride<>(b.mod.np));
          return rel_err(ys, Yp);
        });
  auto Yb = b.mod.get<Fn3>("base_regressor");
  auto base = b.mod.get<Fn1>("base_parameters");
  auto params = b.mod.get<const double *>("parameters");
  if (!Yb || !base || !params || b.mod.nb <= 0)
    return;
  auto beta = std::make_shared<std::vector<double>>(b.mod.nb);
  base(params, beta->data());
  b.add("base_regressor", "computeJointTorqueRegressor", pin_Y, true,
        [&b, Yb, y](int s) { Yb(b.q(s), b.v(s), b.a(s), y); escape(y); },
        [&b, Yb, y, beta](int s) {
          Yb(b.q(s), b.v(s), b.a(s), y);
          Eigen::Map<const RowMat> ym(y, b.nv, b.mod.nb);
          Eigen::VectorXd tau = ym * Eigen::Map<const Eigen::VectorXd>(beta->data(), b.mod.nb);
          return rel_err(tau, b.rnea(s));
        });
}

// constraintDynamics and impulseDynamics on point contacts (world-aligned), against the module's
// constrained_forward_dynamics and impact where it has them (same contacts: R_NC = 3 per frame)
struct Contacts
{
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(pinocchio::RigidConstraintModel) models;
  PINOCCHIO_STD_VECTOR_WITH_EIGEN_ALLOCATOR(pinocchio::RigidConstraintData) datas;
  // mu = 0 and one iteration: one exact Cholesky solve of the contact problem (the cheapest setting)
  pinocchio::ProximalSettings prox{1e-12, 0.0, 1};
  double restitution = 0.5;
  std::vector<double> lam;
};

void add_contacts(Bench & b, Contacts & c, const std::vector<std::string> & names)
{
  for (const std::string & f : names)
  {
    if (!b.model.existFrame(f))
      throw std::runtime_error("no frame " + f);
    const pinocchio::Frame & frame = b.model.frames[b.model.getFrameId(f)];
    c.models.push_back(pinocchio::RigidConstraintModel(
      pinocchio::CONTACT_3D, b.model, frame.parentJoint, frame.placement, pinocchio::LOCAL_WORLD_ALIGNED));
  }
  for (const auto & cm : c.models)
    c.datas.push_back(pinocchio::RigidConstraintData(cm));
  pinocchio::initConstraintDynamics(b.model, b.data, c.models, c.datas);
  auto pin_cfd = [&b, &c](int s) -> const Eigen::VectorXd & {
    b.tbuf = b.T(s) - b.friction(s);
    return pinocchio::constraintDynamics(b.model, b.data, b.Q(s), b.V(s), b.tbuf, c.models, c.datas, c.prox);
  };
  auto pin_imp = [&b, &c](int s) -> const Eigen::VectorXd & {
    return pinocchio::impulseDynamics(b.model, b.data, b.Q(s), b.V(s), c.models, c.datas, c.restitution, c.prox);
  };
  auto cfd = b.mod.get<Fn3x2>("constrained_forward_dynamics");
  auto imp = b.mod.get<Fn3x2>("impact");
  bool have = b.mod.nc == 3 * int(c.models.size());
  if ((cfd || imp) && !have)
    std::fprintf(stderr, "warning: the module has %d constraint rows, --contacts gives %d: Pinocchio only\n",
                 b.mod.nc, 3 * int(c.models.size()));
  c.lam.resize(size_t(std::max(b.mod.nc, 1)));
  double * y = b.out.data();
  double * lam = c.lam.data();
  const double * r = &c.restitution;
  auto lv = [&b, lam]() { return Eigen::Map<const Eigen::VectorXd>(lam, b.mod.nc); };
  b.add("constrained_forward_dynamics", "constraintDynamics", [pin_cfd](int s) { escape(pin_cfd(s).data()); },
        have && cfd, [&b, cfd, y, lam](int s) { cfd(b.q(s), b.v(s), b.t(s), y, lam); escape(y); escape(lam); },
        [&b, cfd, y, lam, lv, pin_cfd](int s) {
          cfd(b.q(s), b.v(s), b.t(s), y, lam);
          double e = rel_err(b.yv(), pin_cfd(s));
          return std::max(e, rel_err(lv(), b.data.lambda_c));
        });
  b.add("impact", "impulseDynamics", [pin_imp](int s) { escape(pin_imp(s).data()); }, have && imp,
        [&b, imp, y, lam, r](int s) { imp(b.q(s), b.v(s), r, y, lam); escape(y); escape(lam); },
        [&b, imp, y, lam, r, lv, pin_imp](int s) {
          imp(b.q(s), b.v(s), r, y, lam);
          double e = rel_err(b.yv(), pin_imp(s));
          return std::max(e, rel_err(lv(), b.data.impulse_c));
        });
}

// Each repetition runs every function once (round-robin), Pinocchio and symdyn alternating which goes first,
// so that transient interference (other load, frequency changes) is spread over all functions and both
// implementations; the median over repetitions then discards it.
void time_all(const std::vector<Row> & rows, const Options & o, int nv, long passes)
{
  const long warm = std::max(1L, passes / 4); // caches, branch predictors, page faults, CPU frequency
  for (const Row & r : rows)
  {
    r.pin(warm);
    if (r.sym)
      r.sym(warm);
  }
  const size_t NF = rows.size();
  std::vector<std::vector<double>> tp(NF), ts(NF);
  for (int rep = 0; rep < o.reps; ++rep)
    for (size_t k = 0; k < NF; ++k)
    {
      if (rep % 2 == 0 || !rows[k].sym)
        tp[k].push_back(rows[k].pin(passes));
      if (rows[k].sym)
        ts[k].push_back(rows[k].sym(passes));
      if (rep % 2 == 1 && rows[k].sym)
        tp[k].push_back(rows[k].pin(passes));
    }
  for (size_t k = 0; k < NF; ++k)
    emit(o, nv, rows[k].fn.c_str(), rows[k].pin_fn.c_str(), rows[k].err, tp[k], ts[k]);
}

std::vector<pinocchio::FrameIndex> frame_ids(const Model & model, const std::vector<std::string> & names)
{
  std::vector<pinocchio::FrameIndex> ids;
  for (const std::string & f : names)
  {
    if (!model.existFrame(f))
      throw std::runtime_error("no frame " + f + " in the Pinocchio model");
    ids.push_back(model.getFrameId(f));
  }
  return ids;
}

void pin_to_cpu(int cpu)
{
#ifdef __linux__
  if (cpu < 0)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    std::perror("sched_setaffinity");
#endif
}

} // namespace

int main(int argc, char ** argv)
{
  Options o = parse_args(argc, argv);
  pin_to_cpu(o.cpu);
  try
  {
    Model model = load_model(o);
    Data data(model);
    Module mod = load_module(o);
    if (mod.handle && (mod.nq != model.nq || mod.nv != model.nv))
      throw std::runtime_error("the module has nq=" + std::to_string(mod.nq) + " nv=" + std::to_string(mod.nv) +
                               ", the Pinocchio model nq=" + std::to_string(model.nq) +
                               " nv=" + std::to_string(model.nv));
    StatePool P = make_pool(model, data, o);
    const long passes = std::max(1L, (o.iterations + P.size - 1) / P.size);
    std::fprintf(stderr, "# robot=%s nq=%d nv=%d locked=%zu pool=%d calls/rep=%ld reps=%d module=%s\n",
                 o.name.c_str(), model.nq, model.nv, o.locked.size(), P.size, passes * P.size, o.reps,
                 mod.handle ? o.module.c_str() : "none");
    Bench b(model, data, P, mod);
    add_dynamics(b);
    add_kinematics(b, frame_ids(model, o.frames));
    add_derivatives(b);
    add_regressors(b);
    Contacts c;
    if (!o.contacts.empty())
      add_contacts(b, c, o.contacts);
    time_all(b.rows, o, model.nv, passes);
  }
  catch (const std::exception & e)
  {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
