"""Joint friction, springs and rotor inertia: forces at the joints that the rigid bodies do not see.

Per joint k (Fv, Fc, Fo, Ia: model.JOINT_PARAMETER_NAMES; K, q_ref: Joint.stiffness, springref):

    tau_f(k) = Fv qd(k) + Fc sgn(qd(k)) + Fo          friction (viscous, Coulomb, offset)
    tau_s(k) = K (q(k) - q_ref)                        spring (MuJoCo's stiffness about springref)
    tau_a(k) = Ia qdd(k)                               rotor inertia (armature)

A multi-DoF joint (MJCF's ball and free joints) may have Fv and Ia, as MuJoCo applies them: the same
value on each of its DoFs (a multiple of the identity, so the same in any frame of its velocity).

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
from ..scalars.scalar import exact_zero


def coulomb_sign(ctx, chain, qd):
    """sign(qd) or tanh(qd / delta): the Coulomb regressor column."""
    delta = chain.coulomb_smoothing
    if delta > 0:
        return ctx.bind(ctx.tanh(qd / ctx.const(delta)))
    return ctx.bind(ctx.sign(qd))


def one_dof(chain):
    """(joint, its entry of a velocity-sized vector) for the 1-DoF joints: the ones with every friction
    term and springs (a multi-DoF joint has at most damping and armature: multi_dof)."""
    return [(k, chain.vi[k][0]) for k in range(chain.n) if len(chain.vi[k]) == 1]


def multi_dof(chain, field):
    """(joint, entry) for each DoF of the multi-DoF joints whose `field` ("damping" or "armature") the
    model gives (MJCF's ball and free joints: MuJoCo applies the joint's one value to each of its DoFs).
    Read from the model, not the tree's parameters: a multi-DoF joint without it has no such term even
    when the parameters are symbols."""
    return [(k, i) for k, j in enumerate(chain.model.joints)
            if len(chain.vi[k]) > 1 and getattr(j, field) for i in chain.vi[k]]


def damped(chain):
    """(joint, entry) of every viscous term Fv qd: the 1-DoF joints and the damped multi-DoF joints' DoFs."""
    return sorted(one_dof(chain) + multi_dof(chain, "damping"), key=lambda ki: ki[1])


def rotors(chain):
    """(joint, entry) of every rotor inertia Ia: the 1-DoF joints and the multi-DoF joints' DoFs with armature."""
    return sorted(one_dof(chain) + multi_dof(chain, "armature"), key=lambda ki: ki[1])


def joint_friction(ctx, chain, qd, k, i):
    """Fv qd + Fc sgn(qd) + Fo of joint k, entry i (terms with a zero coefficient left out)."""
    total = 0
    if not exact_zero(chain.viscous[k]):
        total = total + chain.viscous[k] * qd[i]
    if not exact_zero(chain.coulomb[k]):
        total = total + chain.coulomb[k] * coulomb_sign(ctx, chain, qd[i])
    if not exact_zero(chain.friction_offset[k]):
        total = total + chain.friction_offset[k]
    return total


def joint_spring(chain, X, k):
    """K (q - q_ref) of joint k (0 without a spring, or without X: the friction alone)."""
    if X is None or exact_zero(chain.stiffness[k]):
        return 0
    q = X[k].coordinates[0]
    return chain.stiffness[k] * (q if exact_zero(chain.springref[k]) else q - chain.springref[k])


def free_rotors(chain):
    """(Ia, linear entries, angular entries) of each free joint with armature."""
    return [(chain.armature[k], chain.vi[k][:3], chain.vi[k][3:]) for k, j in enumerate(chain.model.joints)
            if j.kind.nv == 6 and j.armature]


def translating_rotors(ctx, chain, qd):
    """[(entry, Ia w x v)]: MuJoCo's armature of a free joint acts on the rate of its world-axes linear
    velocity R v, Ia R^T d(R v)/dt = Ia (dv/dt + w x v) in the body axes of symdyn's qd (1/2 Ia |v|^2
    of kinetic energy, as a point mass Ia that gravity does not pull)."""
    out = []
    for Ia, lin, ang in free_rotors(chain):
        w, v = [qd[i] for i in ang], [qd[i] for i in lin]
        out += [(i, ctx.bind(Ia * (w[(a + 1) % 3] * v[(a + 2) % 3] - w[(a + 2) % 3] * v[(a + 1) % 3])))
                for a, i in enumerate(lin)]
    return out


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
    acceleration; X None: neither spring, gravcomp nor a free joint's rotor term Ia w x v, the friction alone)."""
    out = [0] * chain.nv
    for k, i in one_dof(chain):
        out[i] = joint_friction(ctx, chain, qd, k, i) + joint_spring(chain, X, k)
    for k, i in multi_dof(chain, "damping"):
        out[i] = chain.viscous[k] * qd[i]
    for k, i in rotors(chain) if qdd is not None else ():
        if not exact_zero(chain.armature[k]):
            out[i] = out[i] + chain.armature[k] * qdd[i]
    for i, value in ([] if X is None else translating_rotors(ctx, chain, qd)):
        out[i] = out[i] + value
    held = None if X is None else gravity_compensation(ctx, chain, X)
    if held is not None:
        out = [o - h for o, h in zip(out, held)]
    return out


def add_joint_forces(ctx, chain, T, qd, qdd, X):
    """T + tau_f(qd) + tau_s(q) - g_c(q) + Ia qdd, element by element (zero entries leave T as it is)."""
    extra = joint_forces(ctx, chain, qd, qdd, X)
    return [t if exact_zero(e) else ctx.bind(t + e) for t, e in zip(T, extra)]


def subtract_friction(ctx, chain, T, qd, X):
    """T - tau_f(qd) - tau_s(q) + g_c(q): the part of the joint forces that accelerates the bodies (and rotors)."""
    extra = joint_forces(ctx, chain, qd, None, X)
    return [t if exact_zero(e) else ctx.bind(t - e) for t, e in zip(T, extra)]
