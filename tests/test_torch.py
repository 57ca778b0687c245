"""The generated Python on PyTorch tensors (CPU; CUDA where a GPU is present): the Panda's every
function against numpy, autograd gradients against central finite differences and against the
identities d(forward_dynamics)/d(tau) = M^-1, d(inverse_dynamics)/d(qdd) = M.

PyTorch is not in the test extra (pip would fetch a CUDA build of several GB): .ci/run installs the
CPU wheel from a local folder where there is one; without torch these tests are skipped.
"""
import numpy as np
import pytest

import golden
from conftest import function_args, relerr
from symdyn.compare import import_module_file
from symdyn.functions import FUNCTIONS

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")       # the generated module finds torch's namespace through it

TOL = 1e-12
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"))]
BY_NAME = {fn.name: fn for fn in FUNCTIONS}


@pytest.fixture(scope="module")
def panda():
    """The Panda's module as generate writes it (tests/test_generated.py checks it against the manifest)."""
    return import_module_file(golden.generated_file("panda.py"), "torch_panda")


def _args(m, fn, count=3, seed=0):
    rng = np.random.default_rng(seed)
    q, qd, x = rng.uniform(-np.pi, np.pi, (count, 7)), rng.normal(size=(count, 7)) * 2, rng.normal(size=(count, 7)) * 3
    return [np.array(a) for a in function_args(fn, q, qd, x, len(m.FRAMES), np.broadcast_to(m.PARAMETERS, (count, m.PARAMETERS.size)))]


def _tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _close(got, want, device, dtype=torch.float64, tol=TOL):
    got, want = _tuple(got), _tuple(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, torch.Tensor) and g.device.type == device and g.dtype == dtype, (type(g), g.dtype)
        assert tuple(g.shape) == np.shape(w)
        assert relerr(g.detach().cpu().numpy(), w) < tol, relerr(g.detach().cpu().numpy(), w)


@pytest.mark.parametrize("device", DEVICES)
def test_every_function_on_torch_equals_numpy(panda, device):
    """Batches of 3 states and single states, every function, f_ext, and the configuration functions."""
    def tensor(a):
        return torch.tensor(a, device=device)

    for fn in FUNCTIONS:
        args = _args(panda, fn)
        f = getattr(panda, fn.name)
        _close(f(*map(tensor, args)), f(*args), device)
        _close(f(*[tensor(a[1]) for a in args]), f(*[a[1] for a in args]), device)
    q, v, a = _args(panda, BY_NAME["inverse_dynamics"], seed=1)
    F = np.random.default_rng(2).normal(size=(3, len(panda.FRAMES), 6))
    _close(panda.inverse_dynamics(*map(tensor, (q, v, a)), f_ext=tensor(F)), panda.inverse_dynamics(q, v, a, f_ext=F), device)
    _close(panda.integrate(tensor(q), tensor(v), 0.5), panda.integrate(q, v, 0.5), device)
    _close(panda.difference(tensor(q), tensor(a)), panda.difference(q, a), device)
    _close(panda.neutral(tensor(q)), panda.neutral(), device)


def test_float32_tensors_stay_float32(panda):
    args = [torch.tensor(a, dtype=torch.float32) for a in _args(panda, BY_NAME["mass_matrix"])]
    M = panda.mass_matrix(*args)
    _close(M, panda.mass_matrix(*(a.double().numpy() for a in args)), "cpu", torch.float32, tol=1e-5)


def _central_difference(f, x, h=1e-6):
    out = np.empty(x.shape)
    for i in range(x.size):
        step = np.zeros(x.shape)
        step.flat[i] = h
        out.flat[i] = (f(x + step) - f(x - step)) / (2 * h)
    return out


@pytest.mark.filterwarnings("error::UserWarning")       # torch.asarray of a tensor that requires grad warns
@pytest.mark.parametrize("name", ["inverse_dynamics", "forward_dynamics", "diagonalized_forward_dynamics",
                                  "frame_placement"])
def test_autograd_equals_finite_differences(panda, name):
    """The gradient of a random weighting of the outputs with respect to every argument (one state)."""
    fn = BY_NAME[name]
    args = [a[0] for a in _args(panda, fn, count=1, seed=4)]
    f = getattr(panda, name)
    weights = [np.random.default_rng(5 + k).normal(size=np.shape(r)) for k, r in enumerate(_tuple(f(*args)))]

    def objective(*a):
        return sum((r * (torch.tensor(w) if isinstance(r, torch.Tensor) else w)).sum() for w, r in zip(weights, _tuple(f(*a))))

    leaves = [torch.tensor(a, requires_grad=True) for a in args]
    value = objective(*leaves)
    assert abs(float(value.detach()) - objective(*args)) <= 1e-12 * max(1.0, abs(objective(*args)))
    grads = torch.autograd.grad(value, leaves)
    for k, (arg, g) in enumerate(zip(args, grads)):
        numeric = _central_difference(lambda x: objective(*args[:k], x, *args[k + 1:]), arg)
        assert relerr(g.numpy(), numeric) < 1e-6, (name, fn.args[k], relerr(g.numpy(), numeric))


def test_autograd_jacobians_are_the_dynamics_identities(panda):
    q, qd, x = (torch.tensor(a[0]) for a in _args(panda, BY_NAME["inverse_dynamics"], count=1, seed=8))
    jacobian = torch.autograd.functional.jacobian
    Minv = jacobian(lambda tau: panda.forward_dynamics(q, qd, tau), x)
    M = jacobian(lambda qdd: panda.inverse_dynamics(q, qd, qdd), x)
    assert relerr(Minv.numpy(), panda.mass_matrix_inverse(q.numpy())) < TOL
    assert relerr(M.numpy(), panda.mass_matrix(q.numpy())) < TOL


def test_batched_gradients_and_vmap(panda):
    """A batch's gradient is the stack of the single states' (no mixing across the batch axis), and
    torch.func.vmap of a single-state call gives the batched call."""
    q, qd, x = (torch.tensor(a) for a in _args(panda, BY_NAME["inverse_dynamics"], count=4, seed=9))
    q.requires_grad_(True)
    (g,) = torch.autograd.grad(panda.inverse_dynamics(q, qd, x).square().sum(), q)
    for i in range(4):
        qi = q[i].detach().clone().requires_grad_(True)
        (gi,) = torch.autograd.grad(panda.inverse_dynamics(qi, qd[i], x[i]).square().sum(), qi)
        assert relerr(g[i].numpy(), gi.numpy()) < TOL
    got = torch.func.vmap(panda.mass_matrix)(q.detach())
    assert relerr(got.numpy(), panda.mass_matrix(q.detach().numpy())) < TOL
