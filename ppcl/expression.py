"""Lazy array expressions and the OpenCL C they print to.

``a * b + c`` on ``ppcl.array`` arrays builds a tree of these nodes instead of running a kernel
per operator; the tree prints to one C expression over the flat index ``i`` (``print_tree``),
which an elementwise kernel stores or a reduction kernel folds, so ``(a * b + c).sum()`` is one
kernel. Leaves are arrays: a C-contiguous leaf of the output's shape reads ``x[i]``, a 0-d leaf
``x[0]``, any other view ``x[IDX_x(i)]`` through a macro of its shape and strides (baked into
the source, so each layout is its own cached kernel). Scalars become kernel arguments, so a
new scalar value reuses the built kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.elementwise import scalar_value
from ppcl.tools import (
    Argument,
    ScalarArg,
    VectorArg,
    complex_preamble,
    dtype_to_ctype,
    struct_preamble,
)


@dataclass(frozen=True, eq=False)
class Node:
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Leaf(Node):
    """An array read at the output's index (its ``_buffer``, ``offset``, ``shape``, ``strides``)."""
    array: Any = None


@dataclass(frozen=True, eq=False)
class Scalar(Node):
    """A host scalar passed as a kernel argument."""
    value: Any = None


@dataclass(frozen=True, eq=False)
class Index(Node):
    """The flat index ``i`` itself (``arange``)."""


@dataclass(frozen=True, eq=False)
class Op(Node):
    """An operator or function: ``op`` names an entry of ``_PRINTERS`` or a C function."""
    op: str = ""
    args: tuple[Node, ...] = field(default_factory=tuple)


def size_of(node: Node) -> int:
    """How many nodes the tree holds (trees past a bound are evaluated, not grown)."""
    if isinstance(node, Op):
        return 1 + sum(size_of(a) for a in node.args)
    return 1


def leaves(node: Node) -> list[Any]:
    """The arrays the tree reads."""
    if isinstance(node, Leaf):
        return [node.array]
    if isinstance(node, Op):
        return [arr for a in node.args for arr in leaves(a)]
    return []


def _real_ctype(dtype: np.dtype) -> str:
    return "double" if dtype in (np.dtype(np.complex128), np.dtype(np.float64)) else "float"


def _cprefix(dtype: np.dtype) -> str:
    return "cdouble" if dtype == np.dtype(np.complex128) else "cfloat"


def convert(code: str, source: np.dtype, target: np.dtype) -> str:
    """``code`` of type ``source`` converted to ``target`` as numpy would."""
    if source == target:
        return code
    ctype = dtype_to_ctype(target)
    if target.kind == "c":
        if source.kind == "c":
            return f"convert_{_real_ctype(target)}2({code})"
        return f"{_cprefix(target)}_fromreal(({_real_ctype(target)})({code}))"
    if source.kind == "c":
        raise TypeError(f"cannot convert complex {source} to {target}: take .real or abs()")
    return f"(({ctype})({code}))"


def _binary(op: str, a: str, b: str, dtype: np.dtype, operand: np.dtype) -> str:
    if operand.kind == "c":
        prefix = _cprefix(operand)
        complex_ops = {"+": "add", "-": "sub", "*": "mul", "/": "divide", "pow": "pow"}
        if op in complex_ops:
            return f"{prefix}_{complex_ops[op]}({a}, {b})"
        if op == "==":
            return f"((char)(({a}).x == ({b}).x && ({a}).y == ({b}).y))"
        if op == "!=":
            return f"((char)(({a}).x != ({b}).x || ({a}).y != ({b}).y))"
        raise TypeError(f"operator {op} is not defined on complex arrays")
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return f"((char)({a} {op} {b}))"
    if op in ("<<", ">>"):  # numpy: a count past the width shifts every bit out
        beyond = "0" if op == "<<" or operand.kind == "u" else f"(({a}) < 0 ? -1 : 0)"
        return (f"((({b}) < 0 || ({b}) >= {operand.itemsize * 8}) ? {beyond} : "
                f"(({a}) {op} ({b})))")
    if op == "pow":
        if operand.kind == "f":
            return f"pow({a}, {b})"
        return f"ppcl_ipow_{operand.name}({a}, {b})"
    if op in ("max", "min"):
        return extremum(op, a, b, operand)
    if op == "//":  # numpy floors; C's integer division truncates
        if operand.kind == "f":
            return f"floor({a} / {b})"
        if operand.kind == "i":
            return _integer_by_zero(b, f"(({a}) / ({b}) - ((({a}) % ({b}) != 0) && "
                                       f"((({a}) < 0) != (({b}) < 0))))")
        return _integer_by_zero(b, f"(({a}) / ({b}))")
    if op == "%":  # numpy's remainder takes the divisor's sign; C's takes the dividend's
        if operand.kind == "f":
            return f"fmod(fmod({a}, {b}) + ({b}), {b})"
        if operand.kind == "i":
            return _integer_by_zero(b, f"((({a}) % ({b}) + ({b})) % ({b}))")
        if operand.kind == "u":
            return _integer_by_zero(b, f"(({a}) % ({b}))")
    return f"({a} {op} {b})"


def extremum(op: str, a: str, b: str, dtype: np.dtype) -> str:
    """``max`` or ``min`` of ``a`` and ``b`` in ``dtype``. A NaN operand is the result, as
    numpy's maximum and max and PyOpenCL's give: OpenCL's fmax and fmin return the other
    operand, so one NaN vanished. Otherwise ``b`` unless ``a`` is strictly beyond it (numpy's
    choice between -0.0 and 0.0)."""
    if dtype.kind != "f":
        return f"{op}({a}, {b})"
    beyond = ">" if op == "max" else "<"
    return f"((({a}) {beyond} ({b}) || isnan({a})) ? ({a}) : ({b}))"


def _integer_power(dtype: np.dtype) -> str:
    """The C function ``ppcl_ipow_<dtype>``: numpy's integer power, exact and wrapping in ``dtype``
    (through double, 3**39 lost its low digits and an overflow became INT_MIN); a negative
    exponent gives 0 except for a base of 1 or -1, where numpy raises."""
    ctype = dtype_to_ctype(dtype)
    unsigned = dtype_to_ctype(np.dtype(f"u{dtype.itemsize}"))
    negative = "return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;" \
        if dtype.kind == "i" else ""
    return (f"inline {ctype} ppcl_ipow_{dtype.name}({ctype} base, {ctype} exponent) {{\n"
            f"  {unsigned} result = 1, square = ({unsigned})base;\n"
            f"  if (exponent < 0) {{ {negative} }}\n"
            f"  for (; exponent > 0; exponent >>= 1) {{\n"
            f"    if (exponent & 1) result *= square;\n"
            f"    square *= square;\n  }}\n"
            f"  return ({ctype})result;\n}}\n")


def _integer_by_zero(b: str, quotient: str) -> str:
    """``quotient`` (an integer // or %), 0 where the divisor ``b`` is 0, as numpy gives
    (OpenCL C leaves it undefined; the CPU device gave the dividend)."""
    return f"(({b}) == 0 ? 0 : {quotient})"


def _unary(op: str, a: str, source: np.dtype, dtype: np.dtype) -> str:
    if op == "neg":
        return f"(-{a})"
    if op == "invert":
        return f"(!{a})" if source.kind == "b" else f"(~{a})"
    if op == "abs":
        if source.kind == "c":
            return f"{_cprefix(source)}_abs({a})"
        if source.kind == "f":
            return f"fabs({a})"
        return f"(({dtype_to_ctype(dtype)})abs({a}))" if source.kind == "i" else a
    if op == "real":
        return f"({a}).x" if source.kind == "c" else a
    if op == "imag":
        return f"({a}).y" if source.kind == "c" else f"(({dtype_to_ctype(dtype)})0)"
    if op == "conj":
        return f"{_cprefix(source)}_conj({a})" if source.kind == "c" else a
    if op == "cast":
        return convert(a, source, dtype)
    if source.kind == "c":
        if op in COMPLEX_FUNCTIONS:
            return f"{_cprefix(source)}_{op}({a})"
        raise TypeError(f"clmath.{op} is not defined on complex arrays")
    return f"{op}({a})"  # a C math function of the (floating) argument type


# the clmath functions of complex arrays (PyOpenCL's complex helpers)
COMPLEX_FUNCTIONS = ("exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh")

# the binary clmath functions printed as a call of the OpenCL C builtin of the name, with
# float results for integer operands
BINARY_FUNCTIONS = ("atan2", "atan2pi", "fmod", "hypot", "copysign")
_BINARY = {"+", "-", "*", "/", "//", "%", "pow", "<", "<=", ">", ">=", "==", "!=", "max", "min",
           *BINARY_FUNCTIONS, "&", "|", "^", "<<", ">>", "ldexp"}
_BITWISE = ("&", "|", "^", "<<", ">>")


@dataclass
class Printed:
    """A printed tree: its kernel arguments and their values, C code, macros."""
    args: list[Argument] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    code: str = ""
    macros: str = ""
    names: dict[int, str] = field(default_factory=dict)
    dtypes: set[np.dtype] = field(default_factory=set)  # of the operations, not only arguments

    def preamble(self) -> str:
        """The kernel's preamble: the complex header of the types the code computes in (a
        float64 == complex64 compares in complex128, which no argument has), the declarations
        of the registered structs the arguments hold, and the macros."""
        dtypes = [*self.dtypes, *(a.dtype for a in self.args)]
        return complex_preamble(dtypes) + struct_preamble(dtypes) + self.macros

    def key(self) -> tuple[Any, ...]:
        return (self.code, self.macros, tuple((type(a).__name__, a.dtype.str) for a in self.args))


def _strided_macro(name: str, shape: tuple[int, ...], strides: tuple[int, ...]) -> str:
    terms = []
    later = 1
    for dim, stride in reversed(list(zip(shape, strides))):
        if dim != 1 and stride != 0:
            terms.append(f"((i) / {later}L % {dim}L * {stride}L)")
        later *= dim
    return f"#define IDX_{name}(i) ({' + '.join(terms) or '0L'})\n"


def array_access(printed: Printed, array: Any, shape: tuple[int, ...], index: str = "i") -> str:
    """The C access of ``array`` at flat index ``index`` of an output of ``shape``, adding its
    argument (once per array) and, for a strided view, its index macro."""
    name = printed.names.get(id(array))
    if name is None:
        name = f"x{len(printed.names)}"
        printed.names[id(array)] = name
        printed.args.append(VectorArg(array.dtype, name))
        printed.values += [array._buffer, np.int64(array.offset // array.dtype.itemsize)]
        if array.shape != shape or not array.flags.c_contiguous:
            if array.size == 1:
                printed.macros += f"#define IDX_{name}(i) 0L\n"
            else:
                strides = tuple(s // array.dtype.itemsize for s in array.strides)
                printed.macros += _strided_macro(name, array.shape, strides)
    if f"#define IDX_{name}(" in printed.macros:
        return f"{name}[IDX_{name}({index})]"
    return f"{name}[{index}]"


def print_tree(node: Node, shape: tuple[int, ...], printed: Printed) -> str:
    """The C code of ``node`` at index ``i``, recording arguments in ``printed``."""
    if isinstance(node, Leaf):
        return array_access(printed, node.array, shape)
    if isinstance(node, Scalar):
        name = f"s{len(printed.args)}"
        printed.args.append(ScalarArg(node.dtype, name))
        printed.values.append(scalar_value(node.dtype, node.value))
        return name
    if isinstance(node, Index):
        return f"(({dtype_to_ctype(node.dtype)})i)"
    assert isinstance(node, Op)
    return _wrapped(_print_op(node, shape, printed), node.dtype)


def _wrapped(code: str, dtype: np.dtype) -> str:
    """``code`` of an operator of ``dtype``, held in ``dtype``: C computes char and short
    operands in int, where numpy wraps in the operator's dtype, so a uint8 200 + 100 was 300
    to a comparison, a division or a sum over it instead of 44."""
    if dtype.kind in "iu" and dtype.itemsize < 4:
        return f"(({dtype_to_ctype(dtype)})({code}))"
    return code


def _print_op(node: Op, shape: tuple[int, ...], printed: Printed) -> str:
    printed.dtypes.add(node.dtype)
    if node.op == "where":
        cond, then, other = node.args
        return (f"(({print_tree(cond, shape, printed)}) ? "
                f"{convert(print_tree(then, shape, printed), then.dtype, node.dtype)} : "
                f"{convert(print_tree(other, shape, printed), other.dtype, node.dtype)})")
    if node.op == "ldexp":  # x * 2^n: x in the result's type, n an int
        x, n = node.args
        return (f"ldexp({convert(print_tree(x, shape, printed), x.dtype, node.dtype)}, "
                f"{convert(print_tree(n, shape, printed), n.dtype, np.dtype(np.int32))})")
    if node.op in _BINARY:
        left, right = node.args
        operand = operand_dtype(node.op, left.dtype, right.dtype, node.dtype)
        printed.dtypes.add(operand)
        a = convert(print_tree(left, shape, printed), left.dtype, operand)
        b = convert(print_tree(right, shape, printed), right.dtype, operand)
        if node.op in BINARY_FUNCTIONS:
            return f"{node.op}({a}, {b})"
        if node.op == "pow" and operand.kind in "iu":
            helper = _integer_power(operand)
            if helper not in printed.macros:
                printed.macros += helper
        return _binary(node.op, a, b, node.dtype, operand)
    (arg,) = node.args
    operand = arg.dtype
    code = print_tree(arg, shape, printed)
    if node.op not in ("neg", "abs", "real", "imag", "conj", "cast", "invert") and operand.kind in "iub":
        code, operand = convert(code, operand, node.dtype), node.dtype  # sin(int) is a double
    return _unary(node.op, code, operand, node.dtype)


def operand_dtype(op: str, left: np.dtype, right: np.dtype, result: np.dtype) -> np.dtype:
    """The type both operands of ``op`` are converted to before it applies."""
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return np.result_type(left, right)
    return result


def result_dtype(op: str, left: np.dtype, right: np.dtype) -> np.dtype:
    """numpy's result type of the binary ``op``; comparisons give int8, as PyOpenCL's."""
    if op not in ("+", "-", "*", "/", "==", "!=", "pow") and "c" in (left.kind, right.kind):
        raise TypeError(f"operator {op} is not defined on complex arrays")
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return np.dtype(np.int8)
    common = np.result_type(left, right)
    if op in _BITWISE and common.kind not in "iub":
        # numpy refuses too; C rejected the generated kernel, a build failure of ppcl's own code
        raise TypeError(f"operator {op} takes integer operands, not {left} and {right}")
    if op == "/" and common.kind in "iub":
        return np.dtype(np.float64)
    if op in BINARY_FUNCTIONS and common.kind in "iub":
        return np.dtype(np.float64)
    return common


def scalar_node(value: Any, other: np.dtype) -> Scalar:
    """A host scalar next to an array of dtype ``other`` (numpy's weak Python scalars). Next
    to an array of vectors or records (``cltypes.float4``), one element of that dtype: numpy
    fills each field with a number, and takes a made vector as it is."""
    if other.fields is not None:
        return Scalar(other, np.array(value, dtype=other))
    dtype = np.result_type(other, value)
    if not isinstance(value, np.generic) and np.dtype(type(value)).kind == other.kind:
        dtype = other
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind in "iu":
        info = np.iinfo(dtype)  # numpy refuses here; the kernel argument failed at evaluation
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return Scalar(np.dtype(dtype), value)
