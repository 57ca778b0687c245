"""The C++ backend: a header-only Eigen interface (module.hpp.jinja beside this file) over the C module, whose
inline wrappers return Eigen objects of the robot's fixed sizes (NQ, NV, NF, ...): nothing of its own to print.

Layouts: a vector is the C array; a (row-major) C matrix is written into its transpose's (column-major)
storage and transposed on return; per-frame vectors ("nf,6") are the columns of a 6 x NF matrix, the C
layout exactly; per-frame matrices ("nf,6,nv") come as a std::array of them.
"""
from ...functions import ALL_BY_NAME, arg_dims, dims
from ..backends import Backend, environment
from ..generator import header_lines, set_id

#: the constants of the header for the named sizes of functions.py
SIZES = {"nq": "NQ", "nv": "NV", "nf": "NF", "np": "NUM_PARAMS", "b": "NUM_BASE_PARAMS", "nc": "NC"}
#: short names of the common types (see the template)
ALIASES = {("nq",): "ConfigVector", ("nv",): "TangentVector", ("nv", "nv"): "JointMatrix",
           ("nf", 6): "FrameVectors", ("np",): "Parameters"}
#: C++ keywords beyond C's (safe_identifier already avoids C's): a module named so gets its
#: namespace name with a trailing underscore
CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class co_await co_return
co_yield compl concept const_cast consteval constexpr constinit decltype delete dynamic_cast explicit export
false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
reflexpr reinterpret_cast requires static_assert static_cast template this thread_local throw true try typeid
typename using virtual wchar_t xor xor_eq
""".split())


def _size(d):
    """A named size ("nv", "6*nf", 6) as a C++ constant expression."""
    if not isinstance(d, str):
        return str(d)
    factor, _, name = d.rpartition("*")
    return f"{factor} * {SIZES[name]}" if factor else SIZES[name]


def _matrix(rows, cols):
    return f"::Eigen::Matrix<double, {rows}, {cols}>"


def eigen_type(shape):
    """The Eigen type of a value of named `shape` (see the module's docstring for the layouts)."""
    shape = tuple(shape)
    if shape in ALIASES:
        return ALIASES[shape]
    if len(shape) == 1:
        return _matrix(_size(shape[0]), 1)
    if shape[0] == "nf" and len(shape) == 2:
        return _matrix(_size(shape[1]), "NF")
    if shape[0] == "nf" and len(shape) == 3:
        return f"::std::array<{_matrix(_size(shape[1]), _size(shape[2]))}, NF>"
    if len(shape) == 2:
        return _matrix(_size(shape[0]), _size(shape[1]))
    raise ValueError(f"no C++ type for the shape {shape}")


def _output(name, shape):
    """How the C function's row-major array becomes the Eigen value: written in place ("direct"), into the
    transpose ("transposed") or per frame ("frames"); the template declares `buffer` and passes `data` to C."""
    out = {"name": name, "type": eigen_type(shape), "data": name + "_c"}
    if len(shape) == 1 or (shape[0] == "nf" and len(shape) == 2):
        out.update(layout="direct", buffer=out["type"], data=name)
    elif shape[0] == "nf":                         # NF blocks rows x cols = Eigen's cols x (rows NF)
        out.update(layout="frames", buffer=_matrix(_size(shape[2]), f"{_size(shape[1])} * NF"), rows=_size(shape[1]))
    else:                                          # C's rows x cols, row-major = Eigen's cols x rows
        out.update(layout="transposed", buffer=_matrix(_size(shape[1]), _size(shape[0])))
    return out


def namespace(module):
    return module + "_" if module in CPP_KEYWORDS else module


class CppBackend(Backend):
    name = "cpp"
    extensions = (".hpp",)
    templates = ("module.hpp.jinja",)
    requires = ("c",)

    def render(self, model, programs, module, params_mode):
        """The wrapper needs the functions' names, arguments and shapes only: nothing is printed."""
        names = [p.name for p in programs]
        functions = []
        for p in programs:
            fn = ALL_BY_NAME[p.name]
            args = [{"name": a, "type": eigen_type(arg_dims(a)), "vector": len(arg_dims(a)) == 1} for a in p.args]
            outputs = [_output(name, dims(shape)) for name, shape in zip(fn.outputs, fn.shapes)]
            several = len(outputs) > 1                     # a std::tuple of them
            types, values = ", ".join(o["type"] for o in outputs), ", ".join(o["name"] for o in outputs)
            functions.append({"name": p.name, "doc": p.doc, "args": args, "outputs": outputs,
                              "result": f"::std::tuple<{types}>" if several else types,
                              "returned": f"::std::make_tuple({values})" if several else values})
        ctx = dict(header=header_lines(model, params_mode, names), set_id=set_id(model, params_mode, names),
                   module=module, namespace=namespace(module), params_mode=params_mode, functions=functions,
                   constraints=bool(model.constraints))
        return {f"{module}.hpp": environment(self).get_template(self.templates[0]).render(**ctx)}


CPP = CppBackend()
