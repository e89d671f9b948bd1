"""The reference semantics of pattern expressions, run in Python.

Arrays are lists, tuples are tuples, vectors are numpy arrays, scalars are numbers. Every
OpenCL-level pattern means what its algorithmic counterpart means (``map_global`` is ``map``,
``to_local(f)`` is ``f``), which is what makes a rewrite semantics-preserving: the property
tests of the rules run an expression before and after a rewrite here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppcl.compiler.ir.types import VectorType
from ppcl.patterns import expr as px
from ppcl.patterns.types import ArrayT, DataType, TupleT


def evaluate(e: px.Expr, env: dict[str, Any]) -> Any:
    """The value of ``e`` with parameters bound by name in ``env``."""
    match e:
        case px.Param(name):
            if name not in env:
                raise KeyError(f"no value for parameter '{name}'")
            return env[name]
        case px.Value(value, t):
            return _filled(value, t)
        case px.Apply(fun, args):
            return call(fun, [evaluate(a, env) for a in args], env)
    raise TypeError(f"not an expression: {e!r}")


def call(f: px.Fun, args: list[Any], env: dict[str, Any]) -> Any:
    match f:
        case px.Lambda(params, body):
            inner = dict(env)
            inner.update({p.name: a for p, a in zip(params, args, strict=True)})
            return evaluate(body, inner)
        case px.User(u):
            if len(args) == 1 and isinstance(args[0], tuple) and u.arity > 1:
                args = list(args[0])
            return u.run(*args)
        case px.Map(g):
            return [call(g, [x], env) for x in args[0]]
        case px.Reduce(g, init):
            acc = _filled(init.value, init.type)
            for x in args[0]:
                acc = call(g, [acc, x], env)
            return [acc]
        case px.Split(n):
            xs = args[0]
            chunk = n.constant
            assert chunk is not None, "split by a symbolic size needs the size bound"
            return [xs[i:i + chunk] for i in range(0, len(xs), chunk)]
        case px.Join():
            return [x for row in args[0] for x in row]
        case px.Zip():
            return [tuple(t) for t in zip(*args, strict=True)]
        case px.Get(index):
            return args[0][index]
        case px.Transpose():
            return [list(col) for col in zip(*args[0], strict=True)]
        case px.Slide(size, step):
            xs = args[0]
            return [xs[i:i + size] for i in range(0, len(xs) - size + 1, step)]
        case px.Pad(left, right):
            xs = args[0]
            return [xs[0]] * left + list(xs) + [xs[-1]] * right
        case px.Reorder(stride):
            xs = args[0]
            rows = len(xs) // stride
            return [xs[(i % stride) * rows + i // stride] for i in range(len(xs))]
        case px.Iterate(n, g):
            value = args[0]
            for _ in range(n):
                value = call(g, [value], env)
            return value
        case px.ToMemory(g):
            return call(g, args, env)
        case px.AsVector(width):
            xs = args[0]
            return [np.array(xs[i:i + width]) for i in range(0, len(xs), width)]
        case px.AsScalar():
            return [_component(v, k) for v in args[0] for k in range(_width(v))]
    raise TypeError(f"no semantics for {f!r}")


def _filled(value: float | int, t: DataType) -> Any:
    if isinstance(t, ArrayT):
        assert t.length.constant is not None, "an array constant has a constant length"
        return [_filled(value, t.elem) for _ in range(t.length.constant)]
    if isinstance(t, VectorType):
        return np.full(t.width, value)
    return value


def _width(v: Any) -> int:
    return len(v[0]) if isinstance(v, tuple) else len(v)


def _component(v: Any, k: int) -> Any:
    if isinstance(v, tuple):
        return tuple(_component(e, k) for e in v)
    return v[k]


def from_numpy(value: Any, t: DataType) -> Any:
    """A numpy array (or a scalar) as the interpreter's value of type ``t``."""
    if isinstance(t, ArrayT):
        return [from_numpy(v, t.elem) for v in value]
    if isinstance(t, TupleT):
        return tuple(from_numpy(v, e) for v, e in zip(value, t.elems, strict=True))
    return value.item() if isinstance(value, np.generic) else value
