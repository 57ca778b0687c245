"""A model's constants as scalars of one context: the input every recursion starts from."""
from collections import namedtuple

from . import spatial as S

#: joint k's constants: the neutral placement (A, l0) of frame k in its parent, its axis h, its type
Geometry = namedtuple("Geometry", "A l0 h kind")


class Tree:
    """Geometry, joint maps H(k), link inertias M(k) and gravity, ready for a recursion (Pinocchio's
    Model, in the scalars of one context), and the tree's topology computed once: parent, children,
    supports[k] (k and its ancestors, tip to base), subtree[k] (k and its descendants, depth first) and
    top: the 1-DoF joints with no multi-DoF joint at or above them (the rows that the outward forms of
    M^-1's factor and of the derivatives walk down the tree).

    Joint k owns the entries qi[k] of q and vi[k] of every velocity-sized vector (qd, qdd, tau);
    H[k] is the list of its nv columns (spatial vectors in frame k), one for a 1-DoF joint.
    `params` (optional) replaces the standard parameters by the given scalars, flat in the order
    of `model.parameters`: 10 per body (`model.PARAMETER_NAMES`), then optionally 4 per joint
    (`model.JOINT_PARAMETER_NAMES`: viscous, Coulomb, offset, armature); symbols or numbers.
    """

    def __init__(self, ctx, model, params=None):
        c = ctx.const
        self.ctx, self.model, self.n = ctx, model, len(model.joints)
        # the whole tree, mimic joints included: symdyn.recursions.mimic maps the model's coordinates to it
        self.nq, self.nv = model.tree_nq, model.tree_nv
        self.qi, self.vi = model.tree_q_slices, model.tree_v_slices
        self.parent = [j.parent for j in model.joints]
        self.children = [[] for _ in range(self.n)]
        for k, p in enumerate(self.parent):
            if p >= 0:
                self.children[p].append(k)
        self.supports = [[k] + self._above(k) for k in range(self.n)]
        self.subtree = [self._below(k) for k in range(self.n)]
        self.H = [[[c(x) for x in h] for h in j.kind.subspace(j.axis)] for j in model.joints]
        self.top = frozenset(k for k in range(self.n) if all(len(self.H[a]) == 1 for a in self.supports[k]))
        self.geometry = [Geometry([[c(x) for x in row] for row in j.rotation], [c(x) for x in j.offset],
                                  [c(x) for x in j.axis], j.kind) for j in model.joints]
        nb = len(model.bodies)
        flat = [c(x) for x in model.parameters] if params is None else list(params)
        if len(flat) == 10 * nb:                   # inertial parameters only: friction from the model
            flat += [c(x) for x in model.parameters[10 * nb:]]
        params = [flat[10 * k:10 * k + 10] for k in range(nb)]
        self.params = params
        # per joint: viscous Fv, Coulomb Fc, offset Fo, armature Ia (symdyn.recursions.friction)
        self.viscous, self.coulomb, self.friction_offset, self.armature = (
            [flat[10 * nb + 4 * k + i] for k in range(self.n)] for i in range(4))
        self.coulomb_smoothing = model.coulomb_smoothing
        # per joint: spring K (q - springref), not a parameter (symdyn.recursions.friction)
        self.stiffness = [c(j.stiffness) for j in model.joints]
        self.springref = [c(j.springref) for j in model.joints]
        # per body: the mass and first moment MuJoCo's gravcomp holds up, flat as `params` (None: no gravcomp)
        self.compensated = [c(x) for b in model.bodies for x in (tuple(b.gravcomp) or (0.0,) * 4) + (0.0,) * 6] \
            if any(b.gravcomp for b in model.bodies) else None
        self.M = [S.rigid_inertia(p) for p in params]
        # the same inertias by parts: J about O_k and the first moment h = m c
        self.J = [[[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]] for p in params]
        self.h = [list(p[1:4]) for p in params]
        # gravity enters as an upward acceleration of the base (Featherstone)
        self.base_acceleration = [c(0), c(0), c(0)] + [c(-g) for g in model.gravity]

    def _above(self, k):
        out, k = [], self.parent[k]
        while k >= 0:
            out.append(k)
            k = self.parent[k]
        return out

    def _below(self, k):
        nodes, stack = [], [k]
        while stack:
            k = stack.pop()
            nodes.append(k)
            stack.extend(reversed(self.children[k]))
        return nodes

    def transforms(self, q):
        """X(k) = (parent_R_k(q_k), l(q_k)) for every joint: phi(parent, k); q: the model's coordinates."""
        if self.model.conventions == "mujoco":
            from ..conventions import internal_configuration
            q = internal_configuration(self.model, q)
        if self.model.mimic:
            from ..recursions.mimic import tree_configuration
            q = tree_configuration(self, q)
        X = [kind.transform(self.ctx, A, l0, h, [q[i] for i in self.qi[k]])
             for k, (A, l0, h, kind) in enumerate(self.geometry)]
        for k, x in enumerate(X):
            x.coordinates = [q[i] for i in self.qi[k]]    # the joint's own q: springs (friction.py)
        return X

    def rates(self, x, k):
        """Joint k's entries of a velocity-sized vector."""
        return [x[i] for i in self.vi[k]]

    def joint_velocity(self, k, x):
        """H*(k) x(k): the spatial vector of joint k's rates (or accelerations) x(k)."""
        return combine(self.rates(x, k), self.H[k])

    def inward(self):
        """Tip to base: the papers' k = 1..N."""
        return reversed(range(self.n))

    def outward(self):
        """Base to tip: the papers' k = N..1."""
        return range(self.n)

    def ancestors(self, k):
        """Joints from k's parent down to the base."""
        return self.supports[k][1:]


#: the former name (a tree is not always a chain)
Chain = Tree


def project(ctx, H, x):
    """H x: a force seen by the joint with columns H (one entry per column)."""
    return [ctx.bind(S.vdot(h, x)) for h in H]


def scatter(chain, per_joint, zero=0):
    """Per-joint lists of entries -> one velocity-sized vector."""
    out = [zero] * chain.nv
    for k, values in enumerate(per_joint):
        for i, v in zip(chain.vi[k], values):
            out[i] = v
    return out


def combine(coefficients, columns):
    """sum of coefficient * column: H* x for the columns of H."""
    out = S.vscale(coefficients[0], columns[0])
    for c, h in zip(coefficients[1:], columns[1:]):
        out = S.vadd(out, S.vscale(c, h))
    return out
