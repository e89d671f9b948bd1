"""User functions: the scalar code at the leaves of a pattern expression.

A user function is written either as an OpenCL C body (``UserFun.c``), compiled by ppcl's
own front end into an IR function the kernel calls, or as a Python function over scalars
(``UserFun.py``), traced into IR expressions: each operation on a traced value becomes a
private variable of the kernel, built once per distinct expression (so ``cnd(d1)`` used twice
is computed once). Both kinds are retyped for vectors (Lift's vectorization of user
functions): the C body is compiled again with vector parameter types, the Python function
traced again over vector values. The Python function is also what the reference interpreter
runs (over numpy values); a C function needs ``py=`` for that.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ppcl.compiler.frontend import CompileError, compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.builtins import BuiltinError, resolve
from ppcl.compiler.ir.conversions import comparison_result, usual_arithmetic
from ppcl.compiler.ir.types import INT, ScalarType, Type, VectorType, scalar_of, width_of
from ppcl.patterns.types import DataType, PatternTypeError, TupleT

Leaf = ScalarType | VectorType


@dataclass(frozen=True)
class UserFun:
    """A named scalar function: parameter types, result type (a scalar, a vector or a tuple
    of them), and either an OpenCL C ``body`` or a Python function ``py`` (or both: the C
    body for kernels, ``py`` for the interpreter)."""

    name: str
    params: tuple[Leaf, ...]
    ret: Leaf | TupleT
    body: str | None = None
    param_names: tuple[str, ...] = ()  # the C body's names of the parameters
    py: Callable[..., Any] | None = field(default=None, compare=False)
    py_key: str = ""  # identifies ``py`` in comparisons and cache keys (its qualified name)

    @staticmethod
    def c(name: str, params: Sequence[tuple[str, Leaf]], ret: Leaf, body: str,
          py: Callable[..., Any] | None = None) -> UserFun:
        """``UserFun.c("mult", [("x", FLOAT), ("y", FLOAT)], FLOAT, "return x * y;")``."""
        fun = UserFun(name, tuple(t for _, t in params), ret, body=body,
                      param_names=tuple(n for n, _ in params), py=py, py_key=_py_key(py))
        fun.c_function(fun.params)  # compile now: a bad body is reported where it is written
        return fun

    @staticmethod
    def trace(name: str, params: Sequence[Leaf], ret: Leaf | TupleT,
              py: Callable[..., Any]) -> UserFun:
        """A user function from a Python function over scalars (traced into IR)."""
        fun = UserFun(name, tuple(params), ret, py=py, py_key=_py_key(py))
        fun.traced(fun.params)
        return fun

    @property
    def arity(self) -> int:
        return len(self.params)

    def out_type(self, args: Sequence[DataType]) -> Leaf | TupleT:
        if len(args) != len(self.params):
            expected = ", ".join(str(p) for p in self.params)
            given = ", ".join(str(a) for a in args)
            raise PatternTypeError(f"user function '{self.name}' takes ({expected}), "
                                   f"given ({given})")
        width = _common_width(self.name, self.params, args)
        return _widen(self.ret, width)

    # ------------------------------------------------------------------ lowering

    def c_function(self, params: tuple[Leaf, ...]) -> ir.Function:
        """The C body compiled for these parameter types (the declared ones, or vectors)."""
        assert self.body is not None
        width = _common_width(self.name, self.params, params)
        ret = _widen(self.ret, width)
        if isinstance(ret, TupleT):
            raise PatternTypeError(f"user function '{self.name}': a C body returns a scalar "
                                   "or vector; write tuple results as a Python function")
        fname = self.mangled(params)
        signature = ", ".join(f"{p} {n}" for p, n in zip(params, self.param_names, strict=True))
        source = f"{ret} {fname}({signature})\n{{\n{self.body}\n}}\n"
        try:
            module = compile_source(source, f"<user function {self.name}>")
        except CompileError as error:
            raise PatternTypeError(f"user function '{self.name}' does not compile:\n"
                                   f"{error.log}") from error
        function = module.module.function(fname)
        assert function is not None
        return function

    def mangled(self, params: tuple[Leaf, ...]) -> str:
        return f"uf_{self.name}_" + "_".join(str(p) for p in params)

    def traced(self, params: tuple[Leaf, ...]) -> Traced:
        """The Python function traced over values of these types (names are placeholders
        ``%0``, ``%1``... renamed by the caller)."""
        assert self.py is not None
        tracer = Tracer()
        args = [Sym(ir.VarRef(t, f"%arg{i}"), tracer) for i, t in enumerate(params)]
        result = self.py(*args)
        results = result if isinstance(result, tuple) else (result,)
        ret = _widen(self.ret, _common_width(self.name, self.params, params))
        exprs = tuple(tracer.lift(r, t) for r, t in
                      zip(results, scalar_leaves_of(ret), strict=True))
        return Traced(tuple(tracer.bindings), exprs)

    def run(self, *args: Any) -> Any:
        """The Python reference (for the interpreter)."""
        if self.py is None:
            raise PatternTypeError(f"user function '{self.name}' has only a C body; give "
                                   "py= to run it in the interpreter")
        return self.py(*args)


def _py_key(py: Callable[..., Any] | None) -> str:
    if py is None:
        return ""
    code = getattr(py, "__code__", None)
    digest = hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:12] \
        if code is not None else ""
    return f"{getattr(py, '__qualname__', repr(py))}:{digest}"


def scalar_leaves_of(t: Leaf | TupleT) -> tuple[Leaf, ...]:
    if isinstance(t, TupleT):
        out: list[Leaf] = []
        for e in t.elems:
            out.extend(scalar_leaves_of(e))  # type: ignore[arg-type]
        return tuple(out)
    return (t,)


def _widen_leaf(t: Leaf, width: int) -> Leaf:
    if width == 1:
        return t
    if isinstance(t, VectorType):
        raise PatternTypeError(f"cannot vectorize {t} again")
    return VectorType(t, width)


def _widen(t: Leaf | TupleT, width: int) -> Leaf | TupleT:
    if isinstance(t, TupleT):
        return TupleT(tuple(_widen(e, width) for e in t.elems))  # type: ignore[arg-type]
    return _widen_leaf(t, width)


def _common_width(name: str, params: Sequence[Leaf], args: Sequence[DataType]) -> int:
    """1 when the arguments are the declared types; w when some are the declared scalars
    widened to w components and the others the scalars themselves (a vectorized application,
    scalars broadcast as OpenCL C does)."""
    if tuple(args) == tuple(params):
        return 1
    widths = {width_of(a) for a in args if isinstance(a, ScalarType | VectorType)} - {1}
    if len(widths) == 1 and len(args) == len(params):
        (width,) = widths
        if all(a == p or (isinstance(p, ScalarType) and a == VectorType(p, width))
               for p, a in zip(params, args, strict=True)):
            return width
    expected = ", ".join(str(p) for p in params)
    given = ", ".join(str(a) for a in args)
    raise PatternTypeError(f"user function '{name}' takes ({expected}), given ({given})")


# ---------------------------------------------------------------------- tracing


@dataclass(frozen=True)
class Traced:
    """A traced function: private variables in order (placeholder name, value) and results."""

    bindings: tuple[tuple[str, ir.Expr], ...]
    results: tuple[ir.Expr, ...]


class Tracer:
    """Collects the operations of one trace, one variable per distinct expression."""

    def __init__(self) -> None:
        self.bindings: list[tuple[str, ir.Expr]] = []
        self._memo: dict[ir.Expr, ir.VarRef] = {}
        self._names = itertools.count()

    def bind(self, expr: ir.Expr) -> Sym:
        ref = self._memo.get(expr)
        if ref is None:
            ref = ir.VarRef(expr.type, f"%t{next(self._names)}")
            self.bindings.append((ref.name, expr))
            self._memo[expr] = ref
        return Sym(ref, self)

    def lift(self, value: Any, like: Type) -> ir.Expr:
        """A traced value or a Python number as an expression of type ``like``."""
        if isinstance(value, Sym):
            if value.expr.type != like:
                return ir.Cast(like, value.expr)
            return value.expr
        if isinstance(value, bool | int | float | np.number):
            elem = scalar_of(like)
            assert elem is not None
            literal: ir.Expr = ir.FloatLit(elem, float(value)) if elem.is_float \
                else ir.IntLit(elem, int(value))
            return literal if like == elem else ir.Cast(like, literal, implicit=True)
        raise PatternTypeError(f"a traced user function used {value!r} "
                               f"({type(value).__name__}), which is not a number")


class Sym:
    """A traced value: arithmetic on it records IR."""

    __array_priority__ = 1000  # numpy scalars defer to Sym's operators

    def __init__(self, expr: ir.Expr, tracer: Tracer) -> None:
        self.expr = expr
        self.tracer = tracer

    def _other(self, other: Any) -> ir.Expr:
        if isinstance(other, Sym):
            return other.expr
        elem = scalar_of(self.expr.type)
        assert elem is not None
        return self.tracer.lift(other, elem)

    def _binary(self, op: str, other: Any, reverse: bool = False) -> Sym:
        lhs, rhs = self.expr, self._other(other)
        if reverse:
            lhs, rhs = rhs, lhs
        result = usual_arithmetic(lhs.type, rhs.type)
        if result is None:
            raise PatternTypeError(f"'{op}' on {lhs.type} and {rhs.type}")
        lhs, rhs = _convert(lhs, result), _convert(rhs, result)
        if op in ("<", ">", "<=", ">=", "==", "!="):
            return self.tracer.bind(ir.Binary(comparison_result(result), op, lhs, rhs))
        return self.tracer.bind(ir.Binary(result, op, lhs, rhs))

    def __add__(self, o: Any) -> Sym:
        return self._binary("+", o)

    def __radd__(self, o: Any) -> Sym:
        return self._binary("+", o, True)

    def __sub__(self, o: Any) -> Sym:
        return self._binary("-", o)

    def __rsub__(self, o: Any) -> Sym:
        return self._binary("-", o, True)

    def __mul__(self, o: Any) -> Sym:
        return self._binary("*", o)

    def __rmul__(self, o: Any) -> Sym:
        return self._binary("*", o, True)

    def __truediv__(self, o: Any) -> Sym:
        return self._binary("/", o)

    def __rtruediv__(self, o: Any) -> Sym:
        return self._binary("/", o, True)

    def __lt__(self, o: Any) -> Sym:
        return self._binary("<", o)

    def __gt__(self, o: Any) -> Sym:
        return self._binary(">", o)

    def __le__(self, o: Any) -> Sym:
        return self._binary("<=", o)

    def __ge__(self, o: Any) -> Sym:
        return self._binary(">=", o)

    def __neg__(self) -> Sym:
        return self.tracer.bind(ir.Unary(self.expr.type, "-", self.expr))

    def __abs__(self) -> Sym:
        elem = scalar_of(self.expr.type)
        return call("fabs" if elem is not None and elem.is_float else "abs", self)

    def __bool__(self) -> bool:
        raise PatternTypeError("a traced value has no truth value: use where(cond, a, b) "
                               "instead of if/and/or on it")


def _convert(expr: ir.Expr, to: Type) -> ir.Expr:
    return expr if expr.type == to else ir.Cast(to, expr, implicit=True)


def call(name: str, *args: Any) -> Any:
    """A builtin on traced values (IR), or numpy's function of the same name on numbers."""
    syms = [a for a in args if isinstance(a, Sym)]
    if not syms:
        return _NUMPY[name](*args)
    tracer = syms[0].tracer
    like = max((a.expr.type for a in syms), key=width_of)
    exprs = [a.expr if isinstance(a, Sym) else tracer.lift(a, like) for a in args]
    try:
        overload = resolve(name, [e.type for e in exprs])
    except BuiltinError as error:
        raise PatternTypeError(str(error)) from error
    exprs = [_convert(e, p) for e, p in zip(exprs, overload.params, strict=True)]
    return tracer.bind(ir.Call(overload.ret, name, tuple(exprs), builtin=overload.key))


def where(cond: Any, then: Any, otherwise: Any) -> Any:
    """``cond ? then : otherwise``, per component on vectors (``np.where`` on numbers)."""
    if not any(isinstance(a, Sym) for a in (cond, then, otherwise)):
        return np.where(cond, then, otherwise)
    sym = next(a for a in (then, otherwise, cond) if isinstance(a, Sym))
    tracer = sym.tracer
    like = sym.expr.type if sym is not cond else INT
    t, o = (a.expr if isinstance(a, Sym) else tracer.lift(a, like) for a in (then, otherwise))
    c = cond.expr if isinstance(cond, Sym) else tracer.lift(cond, INT)
    if isinstance(t.type, VectorType):  # per component: OpenCL's select(otherwise, then, c)
        return call("select", Sym(o, tracer), Sym(t, tracer), Sym(c, tracer))
    return tracer.bind(ir.Conditional(t.type, c, t, o))


_NUMPY: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "fabs": np.abs, "abs": np.abs,
    "fmin": np.minimum, "fmax": np.maximum, "min": np.minimum, "max": np.maximum,
    "rsqrt": lambda x: 1 / np.sqrt(x), "mad": lambda a, b, c: a * b + c,
}


def exp(x: Any) -> Any:
    return call("exp", x)


def log(x: Any) -> Any:
    return call("log", x)


def sqrt(x: Any) -> Any:
    return call("sqrt", x)


def fmin(x: Any, y: Any) -> Any:
    return call("fmin", x, y)


def fmax(x: Any, y: Any) -> Any:
    return call("fmax", x, y)
