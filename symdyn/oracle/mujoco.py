"""MuJoCo as the oracle of a model in MuJoCo's coordinates (symdyn.conventions).

MuJoCo loads the robot file itself: an MJCF file as it is, a URDF file with its visual and
collision geometry dropped, fixed links kept as bodies (fusestatic off) and, for a free-flyer root
(--floating-base), a free joint added to the root body. Constraints and actuation are disabled
(mjDSBL_CONSTRAINT | mjDSBL_ACTUATION), so (issue 27):
    mass_matrix        = mj_fullM(qM), armature included
    inverse_dynamics   = qfrc_inverse of mj_inverse (M qacc + qfrc_bias - qfrc_passive)
    nonlinear_effects  = qfrc_bias - qfrc_passive
    gravity            = qfrc_bias at rest (the springs left out)
    forward_dynamics   = qacc of mj_forward with qfrc_applied = tau
    frame_placement / frame_jacobian: site_xpos/site_xmat and mj_jacSite of a site, xpos/xmat and
                         mj_jacBody of a body, rows [jacp; jacr], world axes
    integrate, difference, neutral: mj_integratePos, mj_differentiatePos, qpos0.
Joints are matched by name (symdyn's order is MuJoCo's for MJCF; for URDF the two may differ).
Each function takes one state (q, v, ... as 1-D arrays) in symdyn's joint order.
"""
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..functions import counterparts

#: symdyn function -> MuJoCo's quantity it is checked against, every function that declares one (Function.mujoco)
COUNTERPARTS = counterparts("mujoco")
#: the configuration maps of every module, which are not Functions
CONFIGURATION = ("integrate", "difference", "neutral")
#: the keys of `functions`
NAMES = tuple(COUNTERPARTS) + CONFIGURATION


def available():
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


def version():
    import mujoco
    return mujoco.__version__


def _urdf_spec(path, floating):
    """MuJoCo's spec of a URDF file: no visual or collision geometry, fixed links kept, a free joint at
    the root for a floating base."""
    import mujoco
    root = ET.fromstring(Path(path).read_bytes())
    for link in root.iter("link"):
        for child in [c for c in link if c.tag in ("visual", "collision")]:
            link.remove(child)
    root.insert(0, ET.fromstring('<mujoco><compiler discardvisual="true" fusestatic="false" '
                                 'balanceinertia="false" inertiafromgeom="false"/></mujoco>'))
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    if floating:
        spec.worldbody.first_body().add_freejoint(name="root_joint")
    return spec


def mujoco_model(model, notes=None):
    """The MjModel of a symdyn Model's file, constraints and actuation disabled (`notes`: a list told when
    the mesh geoms were left out, see _mjcf_model)."""
    import mujoco
    path = Path(model.provenance.path)
    if path.suffix.lower() == ".urdf":
        m = _urdf_spec(path, model.floating and model.joints[0].name == "root_joint").compile()
    else:
        m = _mjcf_model(path, [] if notes is None else notes)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    return m


def _mjcf_model(path, notes):
    """MuJoCo's model of an MJCF file. MuJoCo refuses a file whose mesh (or texture) files are missing
    (Menagerie's robots without their assets); where no body's inertia comes from a mesh, the mesh geoms,
    meshes and textures cannot change the dynamics, and the model is compiled without them."""
    import mujoco
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError:
        spec = mujoco.MjSpec.from_file(str(path))
        if not without_meshes(spec):
            raise
        notes.append("mujoco column: the file's mesh geoms left out (MuJoCo cannot read their files; every body "
                     "with one has an <inertial>)")
        return spec.compile()


def without_meshes(spec):
    """Remove the mesh geoms (and primitives fitted to a mesh), meshes and textures of an MjSpec when every
    body holding one has an explicit <inertial> that MuJoCo uses; returns whether it did."""
    import mujoco
    meshed = [g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH or g.meshname]
    if spec.compiler.inertiafromgeom == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE or \
            not all(g.parent.explicitinertial for g in meshed):
        return False
    for element in meshed + list(spec.meshes) + list(spec.textures):
        spec.delete(element)
    for material in spec.materials:
        material.textures = [""] * len(material.textures)
    return True


class Layout:
    """symdyn's q and v entries of each of MuJoCo's (joints matched by name)."""

    def __init__(self, model, m):
        import mujoco
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(m.njnt)]
        if len(names) == len(model.joint_names):   # an unnamed MJCF joint (a bare <freejoint/>): the reader's
            names = [n or mine for n, mine in zip(names, model.joint_names)]   # name, in MuJoCo's joint order
        if m.nq != model.nq or m.nv != model.nv:
            raise ValueError(f"MuJoCo has nq {m.nq}, nv {m.nv}; symdyn nq {model.nq}, nv {model.nv}")
        qpos, dof = [], []
        for name, qi, vi in zip(model.joint_names, model.q_slices, model.v_slices):
            if name not in names:
                raise ValueError(f"MuJoCo has no joint {name!r} (its joints: {', '.join(map(str, names[:8]))})")
            j = names.index(name)
            qpos += [(q, m.jnt_qposadr[j] + i) for i, q in enumerate(qi)]
            dof += [(v, m.jnt_dofadr[j] + i) for i, v in enumerate(vi)]
        self.q = np.array([mj for _, mj in sorted(qpos)])       # symdyn entry i -> MuJoCo's entry q[i]
        self.v = np.array([mj for _, mj in sorted(dof)])

    def qpos(self, q):
        out = np.empty(len(self.q))
        out[self.q] = q
        return out

    def rates(self, x):
        out = np.empty(len(self.v))
        out[self.v] = x
        return out


def functions(model, frames=None, notes=None):
    """{name: function of one state} of MuJoCo for a model in MuJoCo's coordinates; `frames`: names of
    sites or bodies (default: the model's FRAMES); `notes`: see mujoco_model."""
    import mujoco
    m = mujoco_model(model, notes)
    d = mujoco.MjData(m)
    lay = Layout(model, m)
    frames = [f.name for f in model.kinematic_frames] if frames is None else frames

    def state(q, v=None, tau=None):
        d.qpos[:] = lay.qpos(q)
        d.qvel[:] = 0 if v is None else lay.rates(v)
        d.qfrc_applied[:] = 0 if tau is None else lay.rates(tau)
        d.qacc[:] = 0
        mujoco.mj_forward(m, d)

    def frame_placement(q):
        state(q)
        return np.stack([_placement(m, d, name) for name in frames])

    def frame_jacobian(q):
        state(q)
        return np.stack([_jacobian(m, d, name)[:, lay.v] for name in frames])
    return {**_dynamics(m, d, lay, state), "frame_placement": frame_placement, "frame_jacobian": frame_jacobian,
            **_configuration(m, lay)}


def _dynamics(m, d, lay, state):
    """MuJoCo's mass matrix, inverse and forward dynamics and bias forces; state(q, v, tau) runs mj_forward."""
    import mujoco

    def mass_matrix(q):
        state(q)
        M = np.zeros((m.nv, m.nv))
        try:
            mujoco.mj_fullM(m, d, M)              # MuJoCo >= 3.3: from the data's sparse M
        except TypeError:
            mujoco.mj_fullM(m, M, d.qM)
        return M[np.ix_(lay.v, lay.v)]

    def inverse_dynamics(q, v, a):
        state(q, v)
        d.qacc[:] = lay.rates(a)
        mujoco.mj_inverse(m, d)
        return d.qfrc_inverse[lay.v].copy()

    def nonlinear_effects(q, v):
        state(q, v)
        return (d.qfrc_bias - d.qfrc_passive)[lay.v]

    def gravity(q):
        state(q)
        return d.qfrc_bias[lay.v].copy()

    def forward_dynamics(q, v, tau):
        state(q, v, tau)
        return d.qacc[lay.v].copy()
    return {"mass_matrix": mass_matrix, "inverse_dynamics": inverse_dynamics, "nonlinear_effects": nonlinear_effects,
            "gravity": gravity, "forward_dynamics": forward_dynamics}


def _configuration(m, lay):
    """MuJoCo's integrate, difference and neutral (mj_integratePos, mj_differentiatePos, qpos0)."""
    import mujoco

    def integrate(q, v, dt=1.0):
        x = lay.qpos(q)
        mujoco.mj_integratePos(m, x, lay.rates(v), dt)
        return x[lay.q]

    def difference(q0, q1):
        v = np.zeros(m.nv)
        mujoco.mj_differentiatePos(m, v, 1.0, lay.qpos(q0), lay.qpos(q1))
        return v[lay.v]

    def neutral():
        return m.qpos0[lay.q].copy()
    return {"integrate": integrate, "difference": difference, "neutral": neutral}


def _frame(m, name):
    """("site" | "body", id) of a frame name: a site first, else a body."""
    import mujoco
    for kind, obj in (("site", mujoco.mjtObj.mjOBJ_SITE), ("body", mujoco.mjtObj.mjOBJ_BODY)):
        i = mujoco.mj_name2id(m, obj, name)
        if i >= 0:
            return kind, i
    raise ValueError(f"MuJoCo has no site or body named {name!r}")


def _placement(m, d, name):
    kind, i = _frame(m, name)
    T = np.eye(4)
    pos, mat = (d.site_xpos[i], d.site_xmat[i]) if kind == "site" else (d.xpos[i], d.xmat[i])
    T[:3, :3], T[:3, 3] = mat.reshape(3, 3), pos
    return T


def _jacobian(m, d, name):
    import mujoco
    kind, i = _frame(m, name)
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    (mujoco.mj_jacSite if kind == "site" else mujoco.mj_jacBody)(m, d, jacp, jacr, i)
    return np.vstack([jacp, jacr])
