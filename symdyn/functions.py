"""The function set of a generated module, defined once for the numeric engine and the generator.

Each function is a trace: given a context, the robot's Tree (multibody.chain), the transforms X(q) and the other
input vectors, it runs the recursions and returns a vector or a matrix of scalars, nested lists of
another shape (frames: "nf,4,4", "nf,6,nv", ...; see `dims`), or, for a function with several
outputs (shape a tuple), a tuple of them.

Sizes are named: nq (configuration), nv (velocity, = DOF), nf (the selected frames, FRAMES),
np (the standard parameters, PARAMETERS), b (the base parameters) and nc (the constraint rows:
3 per point contact, 6 per 6-D contact; symdyn.multibody.constraints).
The constraint functions (CONSTRAINED) belong to the set of a model with constraints only
(`functions_for(model)`).
A function named `X_fext` is X with external wrenches at the frames: the modules' X takes them
as an optional last argument f_ext.

FUNCTIONS is the default set; the functions of OPTIONAL (derivatives of the dynamics, energies) are
generated when named (--functions); the numeric engine has them all (ALL).
"""
from dataclasses import dataclass, replace
from typing import Callable, Tuple

from .recursions import coriolis_matrix as _cm
from .recursions import coriolis_nu as _cn
from .recursions import (centroidal, constrained_dynamics, crba, derivatives, diagonalized_dynamics, frames,
                         innovations, kalman_smoother, loop_closure, ltdl, minverse, operational_space, rnea, udu)
from .recursions import friction as _fr
from .recursions import regressor as _reg
from .recursions.riccati import Riccati
from .scalars.scalar import exact_zero

#: the shape of each argument in named sizes; any other argument is ("nv",).
#: np: the standard parameters (10 per body, then 4 per joint); b: the base parameters (computed on first use)
#: gains: Baumgarte's (Kp, Kd); error: the constraints' position error phi (nc); restitution: e (one number)
ARG_DIMS = {"q": ("nq",), "f_ext": ("nf", 6), "params": ("np",), "gains": (2,), "error": ("nc",),
            "restitution": (1,)}
SHAPES = {"scalar": (), "vector": ("nv",), "matrix": ("nv", "nv"), "regressor": ("nv", "np"),
          "base_regressor": ("nv", "b"), "base_parameters": ("b",)}
FEXT = "_fext"
#: numeric: the parameters folded into the code; symbolic: passed as the argument PARAMS
PARAM_MODES = ("numeric", "symbolic")
PARAMS = "params"
BAUMGARTE = "_baumgarte"


@dataclass(frozen=True)
class Function:
    name: str
    args: Tuple[str, ...]        # "q" first (..., nq); other shapes in ARG_DIMS
    output: object               # the result's name (the C out pointer, the Python variable); a tuple of
                                 # names for several outputs
    shape: object                # "vector" (..., nv), "matrix" (..., nv, nv), named sizes "nf,6,nv";
                                 # a tuple of them: several outputs
    trace: Callable
    doc: str
    gravity: bool = False        # does the result include gravity?
    parametric: bool = True      # built on the model's parameters (symbolic mode passes them as `params`)
    reduced: bool = False        # already in the reduced coordinates of mimic joints (for_model)
    forms: Tuple[str, ...] = ()  # alternative forms of the same numbers (trace's `form`); the numeric
                                 # engine takes the default, the generator prices each (generator.trace)
    form_applies: Callable = None  # (model, form) -> False where the form would trace the first form's
                                   # program on that model (the generator does not trace it twice)
    convention: str = ""         # "mujoco": already in MuJoCo's coordinates (symdyn.conventions, for_model)
    pinocchio: str = ""          # Pinocchio's counterpart, the oracle checks it against (symdyn.oracle.pinocchio)
    mujoco: str = ""             # MuJoCo's quantity, in MuJoCo's coordinates (symdyn.oracle.mujoco)

    def counterpart(self, oracle):
        """This function's counterpart in `oracle` ("pinocchio" or "mujoco"); "" when it has none."""
        return {"pinocchio": self.pinocchio, "mujoco": self.mujoco}[oracle]

    def in_form(self, form):
        """This function traced in one of its forms."""
        trace = self.trace
        return replace(self, trace=lambda *a: trace(*a, form=form), forms=())

    @property
    def shapes(self):
        """One shape kind per output."""
        return self.shape if isinstance(self.shape, tuple) else (self.shape,)

    @property
    def outputs(self):
        """One name per output."""
        return self.output if isinstance(self.output, tuple) else (self.output,)

    def signature(self, params_mode="numeric"):
        """The arguments of the generated function: the standard parameters come last in
        symbolic-parameter mode (for the functions built on them)."""
        return self.args + (PARAMS,) if params_mode == "symbolic" and self.parametric else self.args


def dims(shape):
    """The named sizes of one output: "vector" ("nv",), "matrix" ("nv", "nv"), "nf,6,nv" ("nf", 6, "nv")."""
    if shape in SHAPES:
        return SHAPES[shape]
    return tuple(int(d) if d.isdigit() else d for d in shape.split(","))


def out_dims(fn):
    """The named sizes of each of a function's outputs."""
    return [dims(shape) for shape in fn.shapes]


def arg_dims(arg):
    return ARG_DIMS.get(arg, ("nv",))


class _Sizes(dict):
    """Named sizes; b (the number of base parameters) is computed on first use."""
    def __init__(self, model, **kw):
        super().__init__(**kw)
        self._model = model

    def __missing__(self, key):
        if key != "b" or self._model is None:
            raise KeyError(key)
        from .recursions.base_parameters import base_parameters
        self["b"] = len(base_parameters(self._model).kept)
        return self["b"]


def sizes(model, nparams=None):
    """{named size: int} of a model."""
    from .multibody.constraints import constraint_rows
    nv = model.dof
    return _Sizes(model, nq=model.nq, nv=nv, nf=len(model.kinematic_frames),
                  np=len(model.parameters) if nparams is None else nparams,
                  nc=constraint_rows(model.constraints))


def resolve(dims, size):
    """Named sizes ("nv", "6*nf", or numbers) -> a shape tuple."""
    def one(d):
        if not isinstance(d, str):
            return d
        factor, _, name = d.rpartition("*")
        return int(factor or 1) * size[name]
    return tuple(one(d) for d in dims)


def flatten(result):
    """A (nested) result as one flat list, row-major."""
    if isinstance(result, (list, tuple)):
        return [x for item in result for x in flatten(item)]
    return [result]


def arguments(fn, q, vectors, f_ext, params=None, extra=None):
    """fn's arguments: q, the velocity-sized `vectors` in order, f_ext and the standard parameters
    `params` where it takes them, and the others of ARG_DIMS (gains, error, restitution) from `extra`."""
    rest = iter(vectors)
    given = {"q": q, "f_ext": f_ext, "params": params, **(extra or {})}
    return [given[a] if a in given else next(rest) for a in fn.args]


def nest(items, shape):
    """A flat row-major list as nested lists of `shape` (the inverse of flatten)."""
    if len(shape) <= 1:
        return items
    step = len(items) // shape[0]
    return [nest(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def fext_variant(name):
    """The name of the function taking external wrenches, if `name` has one."""
    return name + FEXT if name + FEXT in BY_NAME else None


def baumgarte_variant(name):
    """The name of the stabilized function taking (gains, error), if `name` has one: the modules' `name`
    takes them as optional keyword arguments."""
    return name + BAUMGARTE if name + BAUMGARTE in ALL_BY_NAME else None


def _zeros(chain):
    return [0] * chain.nv


def _inverse_dynamics(ctx, chain, X, qd, qdd):
    """RNEA, then friction and the rotors' Ia qdd at the joints."""
    return _fr.add_joint_forces(ctx, chain, rnea.inverse_dynamics(ctx, chain, X, qd, qdd), qd, qdd, X)


def _mass_matrix(ctx, chain, X):
    """CRBA, and the rotor inertias on the diagonal."""
    M = crba.mass_matrix(ctx, chain, X)
    for k, i in _fr.rotors(chain):
        if not exact_zero(chain.armature[k]):
            M[i][i] = ctx.bind(M[i][i] + chain.armature[k])
    return M


#: forward dynamics: the Kalman filter and smoother, or M's L^T D L solve on inverse dynamics' bias (ltdl.py)
FD_FORMS = ("kalman", "mass_matrix_solve")


def _forward_dynamics(ctx, chain, X, qd, tau, form=FD_FORMS[0], fb=None):
    """The accelerations the forces left after friction give (the armature is in D, and in M's diagonal);
    fb: external forces on the bodies."""
    tau = _fr.subtract_friction(ctx, chain, tau, qd, X)
    if form == "mass_matrix_solve":
        bias = rnea.inverse_dynamics(ctx, chain, X, qd, _zeros(chain), f_ext=fb)
        return ltdl.forward_dynamics(ctx, _mass_matrix(ctx, chain, X), bias, tau, ltdl.dof_parents(chain))
    return kalman_smoother.forward_dynamics(ctx, chain, X, Riccati(ctx, chain, X), qd, tau, f_ext=fb)


def _forward_dynamics_fext(ctx, chain, X, qd, tau, f_ext, form=FD_FORMS[0]):
    return _forward_dynamics(ctx, chain, X, qd, tau, form, frames.body_wrenches(ctx, chain, X, f_ext))


def _base_regressor(ctx, chain, X, qd, qdd):
    from .recursions.base_parameters import base_parameters
    kept = base_parameters(chain.model).kept
    return [[row[i] for i in kept] for row in _reg.regressor(ctx, chain, X, qd, qdd)]


def _base_parameter_values(ctx, chain, X, params):
    from .recursions.base_parameters import base_parameters
    return base_parameters(chain.model).apply(ctx, params)


def _wrenches(fn):
    """A trace whose last argument, f_ext (nf x 6), becomes spatial forces on the bodies."""
    return lambda ctx, chain, X, *v: fn(ctx, chain, X, *v[:-1], frames.body_wrenches(ctx, chain, X, v[-1]))


def _diagonalized(fn):
    """A trace that needs the Riccati quantities."""
    return lambda ctx, chain, X, *v: fn(ctx, chain, X, Riccati(ctx, chain, X), *v)


FUNCTIONS = (
    Function("inverse_dynamics", ("q", "qd", "qdd"), "tau", "vector",
             _inverse_dynamics,
             "Joint forces tau = M(q) qdd + C(q, qd) qd + g(q) + friction(qd) (recursive Newton-Euler; "
             "M includes the rotor inertias).", gravity=True, pinocchio="rnea", mujoco="qfrc_inverse"),
    Function("mass_matrix", ("q",), "M", "matrix", _mass_matrix,
             "Joint-space mass matrix M(q), symmetric (composite bodies, Rodriguez 1987 eq. 32), rotor inertias "
             "on the diagonal.", pinocchio="crba", mujoco="mj_fullM"),
    Function("mass_matrix_inverse", ("q",), "Minv", "matrix",
             lambda ctx, chain, X, form=minverse.FORMS[0]: minverse.mass_matrix_inverse(
                 ctx, chain, X, Riccati(ctx, chain, X), form),
             "M(q)^-1 = U^-T D^-1 U^-1 from the inverse of the tree's factor of M (Jain & Rodriguez; entries "
             "summed over common ancestors): no linear solve.", forms=minverse.FORMS,
             form_applies=minverse.form_applies, pinocchio="computeMinverse"),
    Function("forward_dynamics", ("q", "qd", "tau"), "qdd", "vector",
             _forward_dynamics,
             "Joint accelerations qdd = M^-1 (tau - C(q, qd) qd - g(q) - friction(qd)) (Kalman filter, "
             "Bryson-Frazier smoother; or M's sparse L^T D L solve where that is cheaper).",
             gravity=True, forms=FD_FORMS, pinocchio="aba", mujoco="qacc"),
    Function("gravity", ("q",), "g", "vector",
             lambda ctx, chain, X: rnea.inverse_dynamics(ctx, chain, X, _zeros(chain), _zeros(chain)),
             "Generalized gravity g(q): the joint forces that hold the arm still.", gravity=True,
             pinocchio="computeGeneralizedGravity", mujoco="qfrc_bias at rest"),
    Function("coriolis_matrix", ("q", "qd"), "C", "matrix",
             lambda ctx, chain, X, qd: _cm.coriolis_matrix(ctx, chain, X, qd),
             "Coriolis matrix C(q, qd) in Christoffel form: C qd = velocity products, M_dot - 2C skew.",
             pinocchio="computeCoriolisMatrix"),
    Function("nonlinear_effects", ("q", "qd"), "b", "vector",
             lambda ctx, chain, X, qd: _inverse_dynamics(ctx, chain, X, qd, _zeros(chain)),
             "Bias forces C(q, qd) qd + g(q) + friction(qd) (inverse dynamics at zero acceleration).", gravity=True,
             pinocchio="nonLinearEffects", mujoco="qfrc_bias - qfrc_passive"),
    Function("articulated_inertia", ("q",), "D", "vector",
             _diagonalized(lambda ctx, chain, X, ric: [d for k in range(chain.n) for d in ric.d(k)]),
             "D(k) = H P H*: articulated inertia about each joint axis (Riccati recursion); D = diag of M's UDU^T.",
             pinocchio="cholesky.decompose (D)"),
    Function("innovations_factor", ("q",), "m", "matrix",
             _diagonalized(lambda ctx, chain, X, ric: innovations.innovations_factor(ctx, chain, X, ric)),
             "m = [I + H phi K] D^1/2, with M = m m* (upper triangular: a joint comes after its parent)."),
    Function("innovations_factor_inverse", ("q",), "ell", "matrix",
             _diagonalized(lambda ctx, chain, X, ric: innovations.innovations_factor_inverse(ctx, chain, X, ric)),
             "l = m^-1 = D^-1/2 [I - H psi K], with M^-1 = l* l."),
    Function("total_rates", ("q", "qd"), "nu", "vector",
             _diagonalized(lambda ctx, chain, X, ric, qd: innovations.total_rates(ctx, chain, X, ric, qd)),
             "Total joint rates nu = m* qd (kinetic energy = nu . nu / 2)."),
    Function("joint_rates", ("q", "nu"), "qd", "vector",
             _diagonalized(lambda ctx, chain, X, ric, nu: innovations.joint_rates(ctx, chain, X, ric, nu)),
             "Joint rates qd = l* nu (inverse of total_rates)."),
    Function("working_moments", ("q", "tau"), "eps", "vector",
             _diagonalized(lambda ctx, chain, X, ric, tau: innovations.working_moments(ctx, chain, X, ric, tau)),
             "Working moments eps = l tau. Gravity and friction are not included: pass tau - gravity(q) - friction(qd)."),
    Function("applied_moments", ("q", "eps"), "tau", "vector",
             _diagonalized(lambda ctx, chain, X, ric, eps: innovations.applied_moments(ctx, chain, X, ric, eps)),
             "Joint forces tau = m eps (inverse of working_moments)."),
    Function("coriolis_nu", ("q", "nu"), "Cnu", "vector",
             _diagonalized(lambda ctx, chain, X, ric, nu: _cn.coriolis_nu(
                 ctx, chain, X, ric, innovations.joint_rates(ctx, chain, X, ric, nu))),
             "C(theta, nu) of the diagonalized equations nu_dot + C(theta, nu) = l (tau - g(q) - friction(qd)) "
             "(Jain & Rodriguez, Alg. 7.1); nu . C(theta, nu) = 0."),
    Function("coriolis_eta", ("q", "eta"), "Cbar", "vector",
             _diagonalized(lambda ctx, chain, X, ric, eta: _cn.coriolis_eta(
                 ctx, chain, X, ric, diagonalized_dynamics.rates_from_eta(ctx, chain, X, ric, eta))),
             "Cbar(theta, eta) of the un-normalized equations D eta_dot + Cbar(theta, eta) = eps_bar, "
             "eta = D^-1/2 nu, eps_bar = D^1/2 l (tau - g(q) - friction(qd)) (Jain & Rodriguez, Lemma 7.3, "
             "Alg. 7.10)."),
    Function("diagonalized_forward_dynamics", ("q", "nu", "tau"), ("qd", "nu_dot"), ("vector", "vector"),
             _diagonalized(lambda ctx, chain, X, ric, nu, tau: diagonalized_dynamics.forward_dynamics(
                 ctx, chain, X, ric, nu, tau)),
             "(qd, nu_dot): qd = l* nu and nu_dot = l (tau - g(q) - friction(qd)) - C(theta, nu), one Riccati "
             "recursion and two sweeps (Jain & Rodriguez, Alg. 8.1).", gravity=True),
    Function("udu_factor", ("q",), "U", "matrix",
             _diagonalized(lambda ctx, chain, X, ric: udu.udu_factor(ctx, chain, X, ric)),
             "U, unit upper triangular, with M = U diag(d) U^T and d = articulated_inertia(q) (Saha 1997).",
             pinocchio="cholesky.decompose (U)"),
    Function("friction", ("qd",), "tau_f", "vector",
             lambda ctx, chain, X, qd: [ctx.bind(x) for x in _fr.joint_forces(ctx, chain, qd, None)],
             "Joint friction Fv qd + Fc sgn(qd) + Fo (sgn: sign, or tanh(qd/delta) when smoothed)."),
    Function("regressor", ("q", "qd", "qdd"), "Y", "regressor", _reg.regressor,
             "Joint-torque regressor Y(q, qd, qdd), (nv, p): Y @ PARAMETERS = inverse_dynamics(q, qd, qdd) "
             "(Newton-Euler on the parameter structure).", gravity=True, parametric=False,
             pinocchio="computeJointTorqueRegressor"),
    Function("base_regressor", ("q", "qd", "qdd"), "Yb", "base_regressor", _base_regressor,
             "The regressor's independent columns, (nv, b): base_regressor @ base_parameters(PARAMETERS) = "
             "inverse_dynamics.", gravity=True, parametric=False),
    Function("base_parameters", ("params",), "beta", "base_parameters", _base_parameter_values,
             "The b base parameters (Gautier & Khalil), exact combinations of the p standard ones: "
             "see BASE_PARAMETER_NAMES.", parametric=False),
)

KINEMATICS = (
    Function("frame_placement", ("q",), "oMf", "nf,4,4", frames.frame_placement,
             "Homogeneous transforms of the frames FRAMES in the world (base) frame.",
             pinocchio="updateFramePlacements", mujoco="site_xpos, site_xmat"),
    Function("frame_jacobian", ("q",), "J", "nf,6,nv", frames.frame_jacobian,
             "Frame Jacobians in Pinocchio's LOCAL_WORLD_ALIGNED convention: rows [linear velocity of the frame "
             "origin; angular velocity] in world axes.", pinocchio="getFrameJacobian", mujoco="mj_jacSite"),
    Function("frame_velocity", ("q", "qd"), "vf", "nf,6", frames.frame_velocity,
             "Frame velocities [linear of the origin; angular], world axes (= frame_jacobian(q) qd).",
             pinocchio="getFrameVelocity"),
    Function("frame_acceleration_bias", ("q", "qd"), "af", "nf,6", frames.frame_acceleration_bias,
             "Classical acceleration [of the frame origin; angular] at zero qdd (J_dot qd), world axes, no gravity.",
             pinocchio="getFrameClassicalAcceleration"),
    Function("center_of_mass", ("q",), "com", "3", centroidal.center_of_mass, "Centre of mass in the world frame.",
             pinocchio="centerOfMass"),
    Function("com_jacobian", ("q",), "Jcom", "3,nv", centroidal.com_jacobian,
             "Jacobian of the centre of mass, world axes: com_dot = Jcom qd.", pinocchio="jacobianCenterOfMass"),
    Function("centroidal_momentum_matrix", ("q",), "Ag", "6,nv", centroidal.centroidal_momentum_matrix,
             "Centroidal momentum matrix Ag (Pinocchio's ccrba): [linear; angular momentum about the CoM] = Ag qd, "
             "world axes.", pinocchio="computeCentroidalMap"),
    Function("centroidal_momentum", ("q", "qd"), "hg", "6", centroidal.centroidal_momentum,
             "Centroidal momentum [linear; angular about the CoM], world axes (= Ag qd).",
             pinocchio="computeCentroidalMomentum"),
    Function("operational_space_inertia_inverse", ("q",), "Linv", "6*nf,6*nf",
             _diagonalized(lambda ctx, chain, X, ric: operational_space.operational_space_inertia_inverse(
                 ctx, chain, X, ric)),
             "J M^-1 J^T for the stacked frame Jacobians (operational-space compliance, O(N) recursion through "
             "the articulated inertias).", pinocchio="computeMinverse (J M^-1 J^T)"),
    Function("inverse_dynamics_fext", ("q", "qd", "qdd", "f_ext"), "tau", "vector",
             _wrenches(lambda ctx, chain, X, qd, qdd, fb: _fr.add_joint_forces(
                 ctx, chain, rnea.inverse_dynamics(ctx, chain, X, qd, qdd, f_ext=fb), qd, qdd, X)),
             "inverse_dynamics with external wrenches f_ext (nf x 6): [force; torque about the frame origin] in "
             "world axes at each frame of FRAMES.", gravity=True, pinocchio="rnea (f_ext)"),
    Function("forward_dynamics_fext", ("q", "qd", "tau", "f_ext"), "qdd", "vector", _forward_dynamics_fext,
             "forward_dynamics with external wrenches f_ext (nf x 6): [force; torque about the frame origin] in "
             "world axes at each frame of FRAMES.", gravity=True, forms=FD_FORMS, pinocchio="aba (f_ext)"),
)

DERIVATIVES = (
    Function("inverse_dynamics_derivatives", ("q", "qd", "qdd"), ("dtau_dq", "dtau_dv"),
             ("matrix", "matrix"),
             derivatives.inverse_dynamics_derivatives,
             "(dtau/dq, dtau/dv) of inverse_dynamics (dtau/dqdd = M): analytical recursions of Newton-Euler "
             "(Carpentier & Mansard's structure); dq along the tangent space, d/de f(integrate(q, e)) at e = 0 "
             "(Pinocchio's computeRNEADerivatives).",
             gravity=True, pinocchio="computeRNEADerivatives", forms=derivatives.FORMS,
             form_applies=derivatives.form_applies),
    Function("forward_dynamics_derivatives", ("q", "qd", "tau"), ("dqdd_dq", "dqdd_dv", "Minv"),
             ("matrix", "matrix", "matrix"),
             derivatives.forward_dynamics_derivatives,
             "(dqdd/dq, dqdd/dv, dqdd/dtau = M^-1) of forward_dynamics: -M^-1 (dtau/dq, dtau/dv) at qdd = "
             "forward_dynamics(q, qd, tau) (Pinocchio's computeABADerivatives).", gravity=True,
             pinocchio="computeABADerivatives", forms=derivatives.FD_FORMS,
             form_applies=derivatives.fd_form_applies),
    Function("mass_matrix_derivative", ("q",), "dM_dq", "nv,nv,nv", derivatives.mass_matrix_derivative,
             "dM/dq, (nv, nv, nv): [i, j, k] = d M[i, j] / d q_k along the tangent space (composite bodies on "
             "dual numbers)."),
    Function("mass_matrix_dot", ("q", "qd"), "Mdot", "matrix", derivatives.mass_matrix_dot,
             "M_dot(q, qd) = sum_k dM/dq_k qd_k (M_dot - 2 C is skew-symmetric)."),
    Function("kinetic_energy", ("q", "qd"), "Ek", "scalar", derivatives.kinetic_energy,
             "Kinetic energy qd . M(q) qd / 2 (rotor inertias included).", pinocchio="computeKineticEnergy"),
    Function("potential_energy", ("q",), "Ep", "scalar", derivatives.potential_energy,
             "Potential energy of gravity, -g . sum of m c (zero at the world origin, as Pinocchio's).", gravity=True,
             pinocchio="computePotentialEnergy"),
    Function("inverse_dynamics_derivatives_fext", ("q", "qd", "qdd", "f_ext"), ("dtau_dq", "dtau_dv"),
             ("matrix", "matrix"),
             derivatives.inverse_dynamics_derivatives,
             "inverse_dynamics_derivatives with external wrenches f_ext (nf x 6, world axes at the frames of "
             "FRAMES, held fixed in the world as q moves).", gravity=True, forms=derivatives.FORMS,
             form_applies=derivatives.form_applies),
    Function("forward_dynamics_derivatives_fext", ("q", "qd", "tau", "f_ext"), ("dqdd_dq", "dqdd_dv", "Minv"),
             ("matrix", "matrix", "matrix"),
             derivatives.forward_dynamics_derivatives,
             "forward_dynamics_derivatives with external wrenches f_ext (nf x 6, world axes at the frames of "
             "FRAMES, held fixed in the world as q moves).", gravity=True, forms=derivatives.FD_FORMS,
             form_applies=derivatives.fd_form_applies),
)

#: the default set: what `symdyn generate` writes unless --functions names others
FUNCTIONS = FUNCTIONS + KINEMATICS

#: the functions of the constraints (contacts, loop closures): generated for a model that has some
CONSTRAINED = (
    Function("constraint_jacobian", ("q",), "Jc", "nc,nv", constrained_dynamics.constraint_jacobian,
             "Stacked constraint Jacobian J(q), LOCAL_WORLD_ALIGNED rows: [linear] per point contact, [linear; "
             "angular] per 6-D contact, e_A - scale e_B per joint coupling A-B (CONSTRAINTS).",
             pinocchio="getFrameJacobian (contact frames)"),
    Function("constraint_drift", ("q", "qd"), "gamma", "nc",
             lambda ctx, chain, X, qd: constrained_dynamics.constraint_drift(ctx, chain, X, qd),
             "J_dot qd: the constraint acceleration at zero qdd (classical accelerations, world axes, no gravity).",
             pinocchio="getFrameClassicalAcceleration (contact frames)"),
    Function("constrained_forward_dynamics", ("q", "qd", "tau"), ("qdd", "lam"), ("vector", "nc"),
             _diagonalized(lambda ctx, chain, X, ric, qd, tau: constrained_dynamics.constrained_forward_dynamics(
                 ctx, chain, X, ric, qd, tau)),
             "(qdd, lambda): M qdd + C qd + g + friction = tau + J^T lambda with J qdd + J_dot qd = 0; lambda the "
             "constraint forces (world axes, at the contact points; a joint force on A for a joint coupling), from "
             "(J M^-1 J^T) lambda = -(J qdd_free + J_dot qd) (no KKT system).", gravity=True,
             pinocchio="constraintDynamics"),
    Function("constrained_forward_dynamics_baumgarte", ("q", "qd", "tau", "gains", "error"), ("qdd", "lam"),
             ("vector", "nc"),
             _diagonalized(lambda ctx, chain, X, ric, qd, tau, gains, error:
                           constrained_dynamics.constrained_forward_dynamics(ctx, chain, X, ric, qd, tau, gains,
                                                                             error)),
             "constrained_forward_dynamics stabilized (Baumgarte): J qdd + J_dot qd = -Kd J qd - Kp error, gains = "
             "(Kp, Kd), error: the constraints' position error (nc).", gravity=True,
             pinocchio="constraintDynamics (Baumgarte)"),
    Function("impact", ("q", "qd", "restitution"), ("v_plus", "impulse"), ("vector", "nc"),
             _diagonalized(lambda ctx, chain, X, ric, qd, e: constrained_dynamics.impact(ctx, chain, X, ric, qd, e)),
             "(v_plus, impulse): v_plus = qd - M^-1 J^T (J M^-1 J^T)^-1 (1 + e) J qd, restitution = (e,), e = 0 "
             "plastic (J v_plus = 0); the impulse the constraints exert, world axes.", pinocchio="impulseDynamics"),
)

#: closed loops with actuated joints (YAML `loops:` and `actuated:`, symdyn.recursions.loop_closure)
LOOPS = (
    Function("loop_inverse_dynamics", ("q", "qd", "qdd"), ("tau", "lam"), ("vector", "nc"),
             lambda ctx, chain, X, qd, qdd: loop_closure.loop_inverse_dynamics(ctx, chain, X, qd, qdd,
                                                                             _inverse_dynamics),
             "(tau, lambda): the actuator forces (ACTUATED joints; zero at the passive ones) that give the actuated "
             "joints the accelerations qdd[actuated] while the loops hold (qdd's passive entries are ignored: the "
             "loops determine them; q, qd must satisfy the loops), and the loop forces lambda (world axes, as "
             "constrained_forward_dynamics') (Featherstone & Orin 3.4: tau_a = G^T tau_tree).", gravity=True),
)
#: generated only when named with --functions (they would double the size of a module's C)
OPTIONAL = DERIVATIVES
ALL = FUNCTIONS + OPTIONAL + CONSTRAINED + LOOPS
BY_NAME = {f.name: f for f in FUNCTIONS + OPTIONAL}
ALL_BY_NAME = {f.name: f for f in ALL}


def counterparts(oracle, functions=None):
    """{name: counterpart} of the functions (default: all, ALL) that `oracle` ("pinocchio" or "mujoco")
    has, in their order: the one list the oracles, `symdyn compare` and the tests check."""
    return {fn.name: fn.counterpart(oracle) for fn in (ALL if functions is None else functions)
            if fn.counterpart(oracle)}


def functions_for(model):
    """The function set of a model: FUNCTIONS, CONSTRAINED when it has constraints, LOOPS when it has
    actuated joints of closed loops."""
    if not model.constraints:
        return FUNCTIONS
    return FUNCTIONS + CONSTRAINED + (LOOPS if model.actuated else ())


def for_model(functions, model):
    """The functions as `model`'s modules compute them: with mimic joints, in the reduced
    coordinates (symdyn.recursions.mimic), without those that have no meaning there; with MuJoCo's
    conventions, mapped to its coordinates (symdyn.conventions)."""
    functions = tuple(functions)
    if model.mimic and not all(fn.reduced for fn in functions):
        from .recursions.mimic import UNSUPPORTED, reduced
        functions = tuple(reduced(fn) for fn in functions if fn.name not in UNSUPPORTED)
    if model.conventions == "mujoco":
        from .conventions import in_mujoco
        functions = in_mujoco(functions, model)
    return functions


def available_for(model):
    """Every function a model can have: its set, and the optional ones (derivatives, energies)."""
    return functions_for(model) + OPTIONAL
