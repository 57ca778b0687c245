"""The generated Python on other array libraries (array API standard) against numpy.

JAX (eager, jit, vmap, grad) and array-api-strict run every function of the Panda and of a
floating-base UR5; gradients through JAX are checked against central finite differences of the
numpy module and against the identities d(forward_dynamics)/d(tau) = M^-1, d(inverse_dynamics)/d(qdd)
= M and d(frame position)/dq = the frame Jacobian's linear rows. XLA compiles the Panda's large
straight-line functions slowly (seconds each), so jit runs on a few of them only. The module's
jax_jit (jax.jit with XLA's CPU options) runs on planar2.
"""
import inspect
import subprocess
import sys

import numpy as np
import pytest

import symdyn
from conftest import ROOT, function_args, relerr
from symdyn.compare import import_module_file
from symdyn.functions import FUNCTIONS
from symdyn.generate import render

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)   # float64, to compare with numpy at 1e-12
jnp = jax.numpy
xs = pytest.importorskip("array_api_strict")

TOL = 1e-12
CONFIGURATION = ("neutral", "integrate", "difference")


def _generate(tmp_path_factory, path, floating_base=False):
    model = symdyn.load_robot(path, floating_base=floating_base)
    name = path.stem + ("_floating" if floating_base else "")
    folder = tmp_path_factory.mktemp(name)
    (folder / f"{name}.py").write_text(render(model, ("python",))[f"{path.stem}.py"])
    return import_module_file(folder / f"{name}.py", f"array_api_{name}")


@pytest.fixture(scope="module")
def panda(tmp_path_factory):
    return _generate(tmp_path_factory, ROOT / "robots" / "panda.urdf")


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    return _generate(tmp_path_factory, ROOT / "robots" / "ur5.urdf", floating_base=True)


@pytest.fixture(scope="module", params=["panda", "floating"])
def module(request):
    return request.getfixturevalue(request.param)


def _states(m, count, seed=0):
    """(q, qd, x): configurations on the joints' groups (unit quaternions), two velocity-sized vectors."""
    rng = np.random.default_rng(seed)
    q = m.integrate(np.broadcast_to(m.neutral(), (count, m.NQ)), rng.uniform(-np.pi, np.pi, (count, m.NV)))
    return q, rng.normal(size=(count, m.NV)) * 2, rng.normal(size=(count, m.NV)) * 3


def _args(m, fn, count=3, seed=0):
    q, qd, x = _states(m, count, seed)
    params = np.broadcast_to(m.PARAMETERS, (count,) + m.PARAMETERS.shape)
    return function_args(fn, q, qd, x, len(m.FRAMES), params)


def _numpy(result):
    return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)


def _close(got, want):
    got, want = _numpy(got), _numpy(want)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    assert got.shape == want.shape and got.dtype == np.float64
    assert relerr(got, want) < TOL, relerr(got, want)


def _of_library(result, kind):
    """Every output is an array of the library it was computed with (not a numpy fallback)."""
    for r in result if isinstance(result, tuple) else (result,):
        assert isinstance(r, kind), type(r)


LIBRARIES = {"jax": (jnp.asarray, jax.Array), "array_api_strict": (xs.asarray, type(xs.asarray(0.0)))}


#: on eager JAX, the floating UR5 runs these only (each operation is dispatched, and compiled on first use)
FLOATING_ON_JAX = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "frame_jacobian", "centroidal_momentum_matrix")


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_function_on_the_library_equals_numpy(module, library):
    """Every function (batched; single states on array-api-strict only: eager JAX dispatches each of
    the thousands of operations), with f_ext, and the configuration functions."""
    convert, kind = LIBRARIES[library]
    for fn in FUNCTIONS:
        if library == "jax" and module.NQ != module.NV and fn.name not in FLOATING_ON_JAX:
            continue
        args = _args(module, fn)
        f = getattr(module, fn.name)
        got = f(*map(convert, args))
        _of_library(got, kind)
        _close(got, f(*args))
        if library != "jax":                                                    # one state: no batch axis
            _close(f(*[convert(a[1]) for a in args]), f(*[a[1] for a in args]))
    q, v, _ = _states(module, 3, seed=1)
    q1 = module.integrate(q, v)
    for got, want in ((module.integrate(convert(q), convert(v), 0.5), module.integrate(q, v, 0.5)),
                      (module.difference(convert(q), convert(q1)), module.difference(q, q1)),
                      (module.neutral(convert(q)), module.neutral())):
        _of_library(got, kind)
        _close(got, want)
    F = np.random.default_rng(2).normal(size=(3, len(module.FRAMES), 6))
    got = module.inverse_dynamics(*map(convert, (q, v, v)), f_ext=convert(F))
    _of_library(got, kind)
    _close(got, module.inverse_dynamics(q, v, v, f_ext=F))


def test_broadcasting_between_arguments(panda):
    """One configuration against a batch of velocities, on JAX as on numpy: (5, 1, 7) x (4, 7) -> (5, 4, 7)."""
    q, qd, x = _states(panda, 5)
    args = (q[:, None, :], qd[:4], x[0])
    got = panda.inverse_dynamics(*map(jnp.asarray, args))
    assert got.shape == (5, 4, 7)
    _close(got, panda.inverse_dynamics(*args))
    with pytest.raises(ValueError, match="do not broadcast"):
        panda.inverse_dynamics(jnp.asarray(q), jnp.asarray(qd[:4]), jnp.asarray(x))


@pytest.mark.parametrize("name", ["inverse_dynamics", "frame_placement", "diagonalized_forward_dynamics"])
def test_jit_and_vmap_on_the_panda(panda, name):
    args = _args(panda, next(fn for fn in FUNCTIONS if fn.name == name), count=4)
    f = getattr(panda, name)
    want = f(*args)
    jargs = list(map(jnp.asarray, args))
    _close(jax.vmap(f)(*jargs), want)
    if name != "diagonalized_forward_dynamics":      # compiled in seconds; the two-output one in tens
        _close(jax.jit(f)(*jargs), want)


def test_jit_and_vmap_with_a_floating_base(floating):
    q, v, x = _states(floating, 4, seed=3)
    q1 = floating.integrate(q, v)
    jit_integrate, jit_difference = jax.jit(floating.integrate), jax.jit(floating.difference)
    _close(jit_integrate(jnp.asarray(q), jnp.asarray(v), 0.3), floating.integrate(q, v, 0.3))
    _close(jit_difference(jnp.asarray(q), jnp.asarray(q1)), floating.difference(q, q1))
    _close(jax.vmap(floating.difference)(jnp.asarray(q), jnp.asarray(q1)), floating.difference(q, q1))
    _close(jax.jit(floating.gravity)(jnp.asarray(q)), floating.gravity(q))
    _close(jax.vmap(floating.mass_matrix)(jnp.asarray(q)), floating.mass_matrix(q))


def _central_difference(f, x, h=1e-6):
    """d f / d x of a scalar function of one state, numerically."""
    out = np.empty(x.shape)
    for i in range(x.size):
        step = np.zeros(x.shape)
        step.flat[i] = h
        out.flat[i] = (f(x + step) - f(x - step)) / (2 * h)
    return out


@pytest.mark.parametrize("name", ["inverse_dynamics", "forward_dynamics", "diagonalized_forward_dynamics"])
def test_gradients_through_jax_equal_finite_differences(panda, name):
    """grad of a random weighting of the outputs, with respect to every argument, as central differences."""
    fn = next(fn for fn in FUNCTIONS if fn.name == name)
    args = [a[0] for a in _args(panda, fn, count=1, seed=4)]
    f = getattr(panda, name)
    weights = [np.random.default_rng(5 + k).normal(size=np.shape(r)) for k, r in
               enumerate(f(*args) if isinstance(f(*args), tuple) else (f(*args),))]

    def objective(lib_sum, *a):
        out = f(*a)
        return sum(lib_sum(w * r) for w, r in zip(weights, out if isinstance(out, tuple) else (out,)))

    grads = jax.grad(lambda *a: objective(jnp.sum, *a), argnums=tuple(range(len(args))))(*map(jnp.asarray, args))
    for k, (arg, g) in enumerate(zip(args, grads)):
        numeric = _central_difference(lambda x: objective(np.sum, *args[:k], x, *args[k + 1:]), arg)
        assert relerr(g, numeric) < 1e-6, (name, fn.args[k], relerr(g, numeric))


def test_gradients_of_the_configuration_functions(floating):
    """Through the quaternion of the free-flyer: integrate and difference against finite differences,
    also at a zero velocity and between equal configurations (finite: no square root at zero)."""
    q, v, _ = _states(floating, 1, seed=6)
    q, v = q[0], v[0] * 0.5
    q1 = floating.integrate(q, v)
    w = np.random.default_rng(7).normal(size=floating.NQ)

    def moved(a, b):
        return w @ floating.integrate(a, b)

    def apart(a, b):
        return w[:floating.NV] @ floating.difference(a, b)

    for f, args in ((moved, (q, v)), (moved, (q, 0 * v)), (apart, (q, q1)), (apart, (q, q))):
        grads = jax.jit(jax.grad(f, argnums=(0, 1)))(*map(jnp.asarray, args))
        for k, g in enumerate(grads):
            numeric = _central_difference(lambda x: f(*args[:k], x, *args[k + 1:]), args[k])
            assert np.isfinite(g).all() and relerr(g, numeric) < 1e-6, (f.__name__, k, relerr(g, numeric))


def test_jax_jacobians_are_the_dynamics_identities(panda):
    """d(forward_dynamics)/d(tau) = M^-1 and d(inverse_dynamics)/d(qdd) = M (exact, up to rounding),
    d(frame position)/dq = the linear rows of the frame Jacobian (LOCAL_WORLD_ALIGNED)."""
    q, qd, x = (jnp.asarray(a[0]) for a in _states(panda, 1, seed=8))
    _close(jax.jacfwd(panda.forward_dynamics, argnums=2)(q, qd, x), panda.mass_matrix_inverse(np.asarray(q)))
    _close(jax.jacfwd(panda.inverse_dynamics, argnums=2)(q, qd, x), panda.mass_matrix(np.asarray(q)))
    position = jax.jacfwd(lambda a: panda.frame_placement(a)[:, :3, 3])(q)          # (nf, 3, n)
    _close(position, panda.frame_jacobian(np.asarray(q))[:, :3, :])


def test_float32_stays_float32(panda):
    """float32 arguments give float32 results (learning workloads), close to float64 ones."""
    args = [a.astype(np.float32) for a in _args(panda, FUNCTIONS[0])]
    tau32 = panda.inverse_dynamics(*args)
    assert tau32.dtype == np.float32
    assert relerr(tau32, panda.inverse_dynamics(*(a.astype(np.float64) for a in args))) < 1e-4
    assert panda.mass_matrix(jnp.asarray(args[0])).dtype == jnp.float32
    assert panda.inverse_dynamics([0] * 7, [0] * 7, [0] * 7).dtype == np.float64    # lists, integers


def test_no_numpy_in_the_generated_functions(module):
    """numpy appears only in the namespace lookup and numpy's own fast paths, never in a function."""
    for name in [fn.name for fn in FUNCTIONS] + ["integrate", "difference"]:
        source = inspect.getsource(getattr(module, name))
        assert "np." not in source, name


# jax_jit: the module's jax.jit with XLA's CPU options (docs/api.md, "JAX jit on the CPU")

@pytest.fixture(scope="module")
def planar2(tmp_path_factory):
    return _generate(tmp_path_factory, ROOT / "robots" / "planar2.yaml")


def test_importing_a_module_does_not_import_jax():
    """A module works with numpy alone: jax_jit imports jax when called, never at import."""
    code = ("import sys, importlib.util\n"
            "spec = importlib.util.spec_from_file_location('m', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(m)\n"
            "m.inverse_dynamics([0.1, 0.2], [0.0, 0.3], [1.0, 0.0])\n"
            "assert callable(m.jax_jit) and 'jax' not in sys.modules, sorted(sys.modules)\n")
    subprocess.run([sys.executable, "-c", code, str(ROOT / "generated" / "planar2.py")], check=True)


def test_jax_jit_passes_the_cpu_options(planar2, monkeypatch):
    """Fusion off by default, the older loop emitter for one state, the caller's options last;
    plain jax.jit on another backend and, for one state, with a jaxlib that lacks the emitter flag."""
    assert planar2._jax_emitter_option(jax) == {"xla_cpu_use_fusion_emitters": False}   # this jaxlib knows it
    seen, jit = [], jax.jit
    monkeypatch.setattr(jax, "jit", lambda f, **kw: seen.append(kw.get("compiler_options")) or jit(f, **kw))
    planar2.jax_jit("gravity")
    planar2.jax_jit(planar2.gravity, one_state=True)
    planar2.jax_jit("gravity", compiler_options={"xla_disable_hlo_passes": "", "xla_cpu_enable_fast_math": False})
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    planar2.jax_jit("gravity")
    assert seen == [{"xla_disable_hlo_passes": "fusion"}, {"xla_cpu_use_fusion_emitters": False},
                    {"xla_disable_hlo_passes": "", "xla_cpu_enable_fast_math": False}, None]
    with pytest.raises(ValueError, match="no function 'NV'"):
        planar2.jax_jit("NV")
    monkeypatch.setattr(planar2, "_JAX_EMITTER_OPTION", [])                 # a jaxlib without the emitter flag

    def without_the_flag(f, compiler_options=None, **kw):
        if "xla_cpu_use_fusion_emitters" in (compiler_options or {}):
            raise RuntimeError("INVALID_ARGUMENT: No such compile option: 'xla_cpu_use_fusion_emitters'")
        seen.append(compiler_options)
        return jit(f, compiler_options=compiler_options, **kw)

    monkeypatch.setattr(jax, "jit", without_the_flag)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    _close(planar2.jax_jit("gravity", one_state=True)(jnp.asarray([0.3, -1.2])), planar2.gravity([0.3, -1.2]))
    assert seen[4:] == [None]


def test_jax_jit_equals_numpy_and_compiles_without_fusions(planar2):
    """Both option sets, batched and single states, to 1e-12; with the default set no fusion of
    operations is left in the compiled program (plain jax.jit has them: the pass name is right)."""
    for name in ("inverse_dynamics", "mass_matrix", "forward_dynamics", "frame_jacobian"):
        fn = next(fn for fn in FUNCTIONS if fn.name == name)
        args = _args(planar2, fn, count=4)
        want = getattr(planar2, name)(*args)
        jargs = list(map(jnp.asarray, args))
        jitted = planar2.jax_jit(name)
        _close(jitted(*jargs), want)
        _close(planar2.jax_jit(getattr(planar2, name), one_state=True)(*(a[2] for a in jargs)), want[2])
        if name == "inverse_dynamics":
            # a fusion of several operations is a "fused_computation"; one operation alone is "wrapped"
            assert "fused_computation" in jax.jit(planar2.inverse_dynamics).lower(*jargs).compile().as_text()
            assert "fused_computation" not in jitted.lower(*jargs).compile().as_text()


def test_jax_jit_of_grad_vmap_and_scan(planar2):
    """What an optimizer or an MPC compiles: a gradient (against central differences), a vmap of
    single-state calls, a rollout of forward_dynamics under lax.scan (against numpy's loop)."""
    q, qd, tau = (a[0] for a in _states(planar2, 1, seed=9))
    weights = np.random.default_rng(10).normal(size=planar2.NV)

    def cost(q, qd, tau, lib_sum=jnp.sum):
        return lib_sum(weights * planar2.forward_dynamics(q, qd, tau))

    grads = planar2.jax_jit(jax.grad(cost, argnums=(0, 1, 2)))(*map(jnp.asarray, (q, qd, tau)))
    args = [q, qd, tau]
    for k, g in enumerate(grads):
        numeric = _central_difference(lambda x: cost(*args[:k], x, *args[k + 1:], lib_sum=np.sum), args[k])
        assert relerr(g, numeric) < 1e-6, (k, relerr(g, numeric))
    batch = _states(planar2, 5, seed=11)
    _close(planar2.jax_jit(jax.vmap(planar2.forward_dynamics))(*map(jnp.asarray, batch)),
           planar2.forward_dynamics(*batch))

    def rollout(q, qd, tau, steps=20, dt=0.01):
        def step(state, _):
            q, qd = state
            qd = qd + dt * planar2.forward_dynamics(q, qd, tau)
            return (q + dt * qd, qd), None
        return jax.lax.scan(step, (q, qd), None, length=steps)[0]

    for one_state in (True, False):
        got = planar2.jax_jit(rollout, one_state=one_state)(*map(jnp.asarray, (q, qd, tau)))
        want_q, want_qd = q, qd
        for _ in range(20):
            want_qd = want_qd + 0.01 * planar2.forward_dynamics(want_q, want_qd, tau)
            want_q = want_q + 0.01 * want_qd
        _close(got, (want_q, want_qd))
