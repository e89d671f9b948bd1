"""Types of pattern expressions: the IR's scalars and vectors, tuples, and arrays whose length
is a symbolic ``Size``.

Every pattern computes its result type from its argument's when it is applied, so a
mismatch (zipping arrays of different lengths, splitting 10 elements into chunks of 4, a user
function given the wrong type) is a ``PatternTypeError`` naming the pattern, at the line that
built the expression.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppcl.compiler.ir.types import ScalarType, VectorType
from ppcl.patterns.sizes import Size


class PatternTypeError(TypeError):
    """An expression whose types do not fit together, with what was expected and found."""


@dataclass(frozen=True)
class TupleT:
    elems: tuple[DataType, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True)
class ArrayT:
    elem: DataType
    length: Size

    def __str__(self) -> str:
        return f"[{self.elem}]{self.length}"


DataType = ScalarType | VectorType | TupleT | ArrayT


def array(elem: DataType, length: int | str | Size) -> ArrayT:
    """``array(FLOAT, "N")``: an array of ``N`` floats; nest for more dimensions."""
    return ArrayT(elem, Size.of(length))


def expect_array(t: DataType, pattern: str) -> ArrayT:
    if not isinstance(t, ArrayT):
        raise PatternTypeError(f"{pattern} takes an array, got {t}")
    return t


def scalar_leaves(t: DataType) -> tuple[ScalarType | VectorType, ...]:
    """The scalar or vector components of a value of type ``t`` (tuples flattened)."""
    if isinstance(t, TupleT):
        return tuple(leaf for e in t.elems for leaf in scalar_leaves(e))
    if isinstance(t, ArrayT):
        raise PatternTypeError(f"{t} is an array, where a scalar, vector or tuple is needed")
    return (t,)


def element_scalar(t: DataType) -> ScalarType:
    """The scalar type under arrays and vectors (a tuple has none)."""
    while isinstance(t, ArrayT):
        t = t.elem
    if isinstance(t, VectorType):
        return t.elem
    if isinstance(t, ScalarType):
        return t
    raise PatternTypeError(f"{t} has no single element type")


def shape_of(t: DataType) -> tuple[Size, ...]:
    """The lengths of the nested arrays of ``t``, outermost first."""
    lengths: list[Size] = []
    while isinstance(t, ArrayT):
        lengths.append(t.length)
        t = t.elem
    return tuple(lengths)
