"""Joint friction, springs and rotor inertia: forces at the joints that the rigid bodies do not see.

Per joint k (Fv, Fc, Fo, Ia: model.JOINT_PARAMETER_NAMES; K, q_ref: Joint.stiffness, springref):

    tau_f(k) = Fv qd(k) + Fc sgn(qd(k)) + Fo          friction (viscous, Coulomb, offset)
    tau_s(k) = K (q(k) - q_ref)                        spring (MuJoCo's stiffness about springref)
    tau_a(k) = Ia qdd(k)                               rotor inertia (armature)

so that T = (M(q) + diag(Ia)) qdd + C(q, qd) qd + g(q) + tau_f(qd) + tau_s(q): MuJoCo's qfrc_passive
is -(tau_f + tau_s). The spring reads q(k) from the joint's transform (X[k].coordinates, set by
Tree.transforms and, as duals, by tangent_transforms), so the derivatives see it too; it is not one of
the identified parameters (the regressor leaves it out). sgn is sign(qd), or
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


def joint_forces(ctx, chain, qd, qdd, X=None):
    """tau_f(qd) + tau_s(q) + Ia qdd, velocity-sized (qdd None: no armature term, as at zero acceleration;
    X None: no spring, the friction alone)."""
    out = [0] * chain.nv
    for k, i in one_dof(chain):
        total = joint_friction(ctx, chain, qd, k, i) + joint_spring(chain, X, k)
        if qdd is not None and not _is_zero(chain.armature[k]):
            total = total + chain.armature[k] * qdd[i]
        out[i] = total
    return out


def add_joint_forces(ctx, chain, T, qd, qdd, X):
    """T + tau_f(qd) + tau_s(q) + Ia qdd, element by element (joints without friction stay as they are)."""
    extra = joint_forces(ctx, chain, qd, qdd, X)
    return [t if _is_zero(e) else ctx.bind(t + e) for t, e in zip(T, extra)]


def subtract_friction(ctx, chain, T, qd, X):
    """T - tau_f(qd) - tau_s(q): the part of the joint forces that accelerates the bodies (and rotors)."""
    extra = joint_forces(ctx, chain, qd, None, X)
    return [t if _is_zero(e) else ctx.bind(t - e) for t, e in zip(T, extra)]
