"""Joint friction, springs and rotor inertia: forces at the joints that the rigid bodies do not see.

Per joint k (Fv, Fc, Fo, Ia: model.JOINT_PARAMETER_NAMES; K, q_ref: Joint.stiffness, springref):

    tau_f(k) = Fv qd(k) + Fc sgn(qd(k)) + Fo          friction (viscous, Coulomb, offset)
    tau_s(k) = K (q(k) - q_ref)                        spring (MuJoCo's stiffness about springref)
    tau_a(k) = Ia qdd(k)                               rotor inertia (armature)

and, over all the joints, MuJoCo's gravity compensation tau_c(q) = -g_c(q): the generalized force of
the upward force gravcomp m g at each body's centre of mass, i.e. minus the gravity torques of the
mass gravcomp m (Body.gravcomp; Newton-Euler at rest on those masses). So that
T = (M(q) + diag(Ia)) qdd + C(q, qd) qd + g(q) + tau_f(qd) + tau_s(q) - g_c(q): MuJoCo's qfrc_passive
is -(tau_f + tau_s - g_c), and g(q) (the function `gravity`) stays qfrc_bias at rest. The spring reads
q(k) from the joint's transform (X[k].coordinates, set by Tree.transforms and, as duals, by
tangent_transforms), so the derivatives see it too. Neither springs nor gravcomp are identified
parameters (the regressor leaves them out). sgn is sign(qd), or
tanh(qd / delta) when the model asks for smooth Coulomb friction (delta = coulomb_smoothing > 0),
which an ODE integrator can step through. The armature enters the other functions through M's
diagonal and the Riccati recursion's D(k) (riccati.py).
"""


def _is_zero(x):
    try:
        return float(x) == 0
    except (TypeError, RuntimeError):       # a symbol
        return False


def coulomb_sign(ctx, chain, qd):
    """sign(qd) or tanh(qd / delta): the Coulomb regressor column."""
    delta = chain.coulomb_smoothing
    if delta > 0:
        return ctx.bind(ctx.tanh(qd / ctx.const(delta)))
    return ctx.bind(ctx.sign(qd))


def one_dof(chain):
    """(joint, its entry of a velocity-sized vector) for the 1-DoF joints: the ones with friction and
    armature (a free-flyer, spherical or planar joint has none)."""
    return [(k, chain.vi[k][0]) for k in range(chain.n) if len(chain.vi[k]) == 1]


def joint_friction(ctx, chain, qd, k, i):
    """Fv qd + Fc sgn(qd) + Fo of joint k, entry i (terms with a zero coefficient left out)."""
    total = 0
    if not _is_zero(chain.viscous[k]):
        total = total + chain.viscous[k] * qd[i]
    if not _is_zero(chain.coulomb[k]):
        total = total + chain.coulomb[k] * coulomb_sign(ctx, chain, qd[i])
    if not _is_zero(chain.friction_offset[k]):
        total = total + chain.friction_offset[k]
    return total


def joint_spring(chain, X, k):
    """K (q - q_ref) of joint k (0 without a spring, or without X: the friction alone)."""
    if X is None or _is_zero(chain.stiffness[k]):
        return 0
    q = X[k].coordinates[0]
    return chain.stiffness[k] * (q if _is_zero(chain.springref[k]) else q - chain.springref[k])


def compensated_tree(chain):
    """The tree whose bodies have the masses and first moments gravcomp holds up (None without gravcomp)."""
    if chain.compensated is None:
        return None
    from ..multibody.chain import Tree
    tree = Tree(chain.ctx, chain.model, chain.compensated)
    tree.compensated, tree.stiffness = None, [0] * tree.n       # its rigid bodies alone: no passive forces
    return tree


def gravity_compensation(ctx, chain, X):
    """g_c(q): the gravity torques of the compensated masses (Newton-Euler at rest); None without gravcomp."""
    tree = compensated_tree(chain)
    if tree is None:
        return None
    from .rnea import inverse_dynamics
    zeros = [0] * chain.nv
    return inverse_dynamics(ctx, tree, X, zeros, zeros)


def joint_forces(ctx, chain, qd, qdd, X=None):
    """tau_f(qd) + tau_s(q) - g_c(q) + Ia qdd, velocity-sized (qdd None: no armature term, as at zero
    acceleration; X None: neither spring nor gravcomp, the friction alone)."""
    out = [0] * chain.nv
    for k, i in one_dof(chain):
        total = joint_friction(ctx, chain, qd, k, i) + joint_spring(chain, X, k)
        if qdd is not None and not _is_zero(chain.armature[k]):
            total = total + chain.armature[k] * qdd[i]
        out[i] = total
    held = None if X is None else gravity_compensation(ctx, chain, X)
    if held is not None:
        out = [o - h for o, h in zip(out, held)]
    return out


def add_joint_forces(ctx, chain, T, qd, qdd, X):
    """T + tau_f(qd) + tau_s(q) - g_c(q) + Ia qdd, element by element (zero entries leave T as it is)."""
    extra = joint_forces(ctx, chain, qd, qdd, X)
    return [t if _is_zero(e) else ctx.bind(t + e) for t, e in zip(T, extra)]


def subtract_friction(ctx, chain, T, qd, X):
    """T - tau_f(qd) - tau_s(q) + g_c(q): the part of the joint forces that accelerates the bodies (and rotors)."""
    extra = joint_forces(ctx, chain, qd, None, X)
    return [t if _is_zero(e) else ctx.bind(t - e) for t, e in zip(T, extra)]
