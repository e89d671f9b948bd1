"""Shared machinery of the C lowering of builtins: C spellings of IR types, the collector of
definitions (each once, dependencies first) and the elementwise wrappers that turn a scalar
implementation into the vector overloads.

A builtin overload ``ov`` becomes the C function ``__ppcl_<ov.key>``. Its scalar work is done by
a helper keyed by the builtin name and the scalar types involved, ``__ppcl_s_<name>_<types>``,
which the scalar overload calls once and a vector overload calls per component (a loop over the
components of GCC vectors, which gcc vectorizes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ppcl.compiler.codegen.c import C_SCALAR_NAMES as PRINTER_SCALAR_NAMES
from ppcl.compiler.ir.builtins import Overload
from ppcl.compiler.ir.types import (
    ImageType,
    OpaqueType,
    PointerType,
    ScalarType,
    Type,
    VectorType,
    VoidType,
)

# the printer's C spellings, except that a half is handled as its bit pattern (storage only)
C_SCALAR_NAMES: dict[str, str] = {**PRINTER_SCALAR_NAMES, "half": "unsigned short"}

PREFIX = "__ppcl_"


def c_type(t: Type) -> str:
    """The C spelling of a type in a builtin definition (address spaces vanish on the CPU)."""
    if isinstance(t, ScalarType):
        return C_SCALAR_NAMES[t.name]
    if isinstance(t, VectorType):
        return f"ppcl_{t.elem.name}{t.width}"
    if isinstance(t, PointerType):
        quals = ("const " if t.const else "") + ("volatile " if t.volatile else "")
        return f"{quals}{c_type(t.pointee)} *"
    if isinstance(t, VoidType):
        return "void"
    if isinstance(t, ImageType):
        return "const struct ppcl_image *"
    if isinstance(t, OpaqueType):
        return "unsigned long"  # event_t and sampler_t
    raise TypeError(f"type '{t}' has no C spelling in builtin definitions")


def elem_of(t: Type) -> ScalarType:
    """The scalar element of a scalar, vector or pointer-to-those type."""
    if isinstance(t, PointerType):
        return elem_of(t.pointee)
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, VectorType):
        return t.elem
    raise TypeError(f"type '{t}' has no scalar element")


def storage_width(t: Type) -> int:
    """Lanes of a value's C storage: 1 for scalars, 4 for 3-component vectors."""
    if isinstance(t, PointerType):
        return storage_width(t.pointee)
    if isinstance(t, VectorType):
        return t.storage_width
    return 1


def c_name(ov: Overload) -> str:
    return PREFIX + ov.key


def float_literal(value: str, elem: ScalarType) -> str:
    """A C floating literal of type ``elem`` from its spelling (``"0.5"``, ``"0x1p-24"``)."""
    return value + ("f" if elem.name == "float" else "")


def int_literal(value: int, elem: ScalarType) -> str:
    """A C constant of exactly ``value`` converted to ``elem`` (no overflowing literals)."""
    ct = C_SCALAR_NAMES[elem.name]
    if value == -(1 << 63):
        return f"(({ct})(-9223372036854775807L - 1))"
    if value < 0:
        return f"(({ct})({value}L))"
    return f"(({ct}){value}UL)"


class Emitter:
    """Collects C definitions by name, each once, in dependency order."""

    def __init__(self, *, fast_math: bool) -> None:
        self.fast_math = fast_math
        self._parts: list[str] = []
        self._done: set[str] = set()

    def define(self, name: str, make: Callable[[], str]) -> str:
        """Emit the definition ``make()`` under ``name`` unless already there; return ``name``.

        ``make`` may ``define`` what it depends on: those land before it."""
        if name not in self._done:
            self._done.add(name)
            self._parts.append(make())
        return name

    def text(self) -> str:
        return "\n".join(self._parts)


@dataclass(frozen=True)
class ScalarImpl:
    """The scalar C implementation of one builtin for given scalar types.

    ``body(e, params)`` returns the statements of the function (ending in a ``return``), where
    ``params`` are the C parameter names; it may define helpers through ``e``."""

    ret: ScalarType
    params: tuple[Type, ...]  # ScalarType, or PointerType to a ScalarType for out parameters
    body: Callable[[Emitter, Sequence[str]], str]


def scalar_params(ov: Overload) -> tuple[Type, ...]:
    """The parameters of the scalar helper of ``ov``: element types, pointers to elements."""
    out: list[Type] = []
    for p in ov.params:
        if isinstance(p, PointerType):
            out.append(PointerType(elem_of(p), p.space, const=p.const, volatile=p.volatile))
        else:
            out.append(elem_of(p))
    return tuple(out)


def helper_name(name: str, ret: ScalarType, params: Sequence[Type]) -> str:
    codes = [ret.name] + [
        ("p" + elem_of(p).name) if isinstance(p, PointerType) else elem_of(p).name
        for p in params
    ]
    return f"{PREFIX}s_{name}_{'_'.join(codes)}"


PARAM_NAMES = ("x", "y", "z", "w")


def define_scalar_helper(e: Emitter, name: str, impl: ScalarImpl) -> str:
    """Define the scalar helper ``impl`` of builtin ``name``; return its C name."""
    fname = helper_name(name, impl.ret, impl.params)

    def make() -> str:
        names = PARAM_NAMES[: len(impl.params)]
        body = impl.body(e, names)
        return function(c_type(impl.ret), fname, impl.params, names, body)

    return e.define(fname, make)


def function(
    ret: str, name: str, params: Sequence[Type], names: Sequence[str], body: str
) -> str:
    args = ", ".join(f"{c_type(p)}{'' if c_type(p).endswith('*') else ' '}{n}"
                     for p, n in zip(params, names)) or "void"
    lines = [line for line in body.strip("\n").splitlines()]
    indented = "\n".join("    " + line if line else "" for line in lines)
    return f"static inline {ret} {name}({args}) {{\n{indented}\n}}\n"


def define_overload(e: Emitter, ov: Overload, body: Callable[[Sequence[str]], str]) -> str:
    """Define ``__ppcl_<key>`` with the statements ``body(param_names)``."""
    names = [f"a{i}" for i in range(len(ov.params))]
    return e.define(c_name(ov), lambda: function(c_type(ov.ret), c_name(ov), ov.params, names,
                                                 body(names)))


def define_elementwise(
    e: Emitter, ov: Overload, helper: str, *, true_is_minus_one: bool = False
) -> str:
    """Define overload ``ov`` by applying the scalar ``helper`` to each component.

    Scalar arguments of a vector overload are used for every component; pointer arguments
    (out parameters) of vector type are filled component by component and stored once.
    ``true_is_minus_one``: a vector result of a relational function is -1 for true."""
    width = max([storage_width(ov.ret)] + [storage_width(p) for p in ov.params])

    def body(names: Sequence[str]) -> str:
        if width == 1:
            call_args = ", ".join(names)
            return f"return {helper}({call_args});"
        lines = [f"{c_type(ov.ret)} r;"]
        args: list[str] = []
        stores: list[str] = []
        for i, (p, n) in enumerate(zip(ov.params, names)):
            if isinstance(p, PointerType):
                lines.append(f"{c_type(p.pointee)} o{i};")
                lines.append(f"{c_type(elem_of(p))} t{i};")
                args.append(f"&t{i}")
                stores.append(f"o{i}[i] = t{i};")
            elif isinstance(p, VectorType):
                args.append(f"{n}[i]")
            else:
                args.append(n)
        call = f"{helper}({', '.join(args)})"
        if true_is_minus_one:
            call = f"-({call})"
        # unrolled, so that a work-item loop around the call has no inner loop: gcc left
        # loops calling e.g. clamp(float4) unvectorized ("control flow in loop")
        lines.append(f"#pragma GCC unroll {width}")
        lines.append(f"for (int i = 0; i < {width}; ++i) {{")
        lines.append(f"    r[i] = {call};")
        lines.extend("    " + s for s in stores)
        lines.append("}")
        for i, (p, n) in enumerate(zip(ov.params, names)):
            if isinstance(p, PointerType):
                lines.append(f"*{n} = o{i};")
        lines.append("return r;")
        return "\n".join(lines)

    return define_overload(e, ov, body)
