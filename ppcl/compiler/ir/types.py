"""Types of the typed IR: scalars, vectors, pointers with address spaces, arrays, records.

Types are frozen values compared by structure. Qualifiers that belong to an object (``const``,
``volatile``, the address space of a variable) live on declarations and on pointer types
(the qualifiers of what a pointer points at), not on every type.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AddressSpace(enum.Enum):
    PRIVATE = "__private"
    GLOBAL = "__global"
    LOCAL = "__local"
    CONSTANT = "__constant"

    @property
    def spelling(self) -> str:
        return self.value


class Type:
    """Base of every IR type."""

    @property
    def size(self) -> int:
        raise TypeError(f"type '{self}' has no size")

    @property
    def align(self) -> int:
        return self.size

    @property
    def is_arithmetic(self) -> bool:
        return False

    @property
    def is_scalar(self) -> bool:
        return False


# name -> (size in bytes, is_integer, is_signed); rank follows the dict order for integers
_SCALARS: dict[str, tuple[int, bool, bool]] = {
    "bool": (1, True, False),
    "char": (1, True, True),
    "uchar": (1, True, False),
    "short": (2, True, True),
    "ushort": (2, True, False),
    "int": (4, True, True),
    "uint": (4, True, False),
    "long": (8, True, True),
    "ulong": (8, True, False),
    "half": (2, False, True),
    "float": (4, False, True),
    "double": (8, False, True),
}

# name -> numpy's name of the same type (numpy is not imported here: the IR has no dependency)
NUMPY_NAMES = {"bool": "bool", "char": "int8", "uchar": "uint8", "short": "int16",
               "ushort": "uint16", "int": "int32", "uint": "uint32", "long": "int64",
               "ulong": "uint64", "half": "float16", "float": "float32", "double": "float64"}

_INT_RANK = {"bool": 0, "char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 3, "uint": 3,
             "long": 4, "ulong": 4}
_FLOAT_RANK = {"half": 0, "float": 1, "double": 2}


@dataclass(frozen=True)
class ScalarType(Type):
    name: str

    def __post_init__(self) -> None:
        if self.name not in _SCALARS:
            raise ValueError(f"unknown scalar type {self.name!r}")

    def __str__(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        return _SCALARS[self.name][0]

    @property
    def is_integer(self) -> bool:
        return _SCALARS[self.name][1]

    @property
    def numpy_name(self) -> str:
        return NUMPY_NAMES[self.name]

    @property
    def is_float(self) -> bool:
        return not _SCALARS[self.name][1]

    @property
    def is_signed(self) -> bool:
        return _SCALARS[self.name][2]

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def is_arithmetic(self) -> bool:
        return True

    @property
    def is_scalar(self) -> bool:
        return True

    @property
    def rank(self) -> int:
        """Conversion rank: integers by width, floating types above every integer."""
        if self.is_integer:
            return _INT_RANK[self.name]
        return 10 + _FLOAT_RANK[self.name]

    @property
    def bits(self) -> int:
        return self.size * 8

    def with_signedness(self, signed: bool) -> ScalarType:
        if not self.is_integer or self.is_bool:
            return self
        base = self.name[1:] if self.name.startswith("u") else self.name
        return ScalarType(base if signed else "u" + base)


BOOL = ScalarType("bool")
CHAR = ScalarType("char")
UCHAR = ScalarType("uchar")
SHORT = ScalarType("short")
USHORT = ScalarType("ushort")
INT = ScalarType("int")
UINT = ScalarType("uint")
LONG = ScalarType("long")
ULONG = ScalarType("ulong")
HALF = ScalarType("half")
FLOAT = ScalarType("float")
DOUBLE = ScalarType("double")
SIZE_T = ULONG
PTRDIFF_T = LONG

SCALAR_TYPES: tuple[ScalarType, ...] = tuple(ScalarType(n) for n in _SCALARS)
INTEGER_TYPES: tuple[ScalarType, ...] = tuple(t for t in SCALAR_TYPES if t.is_integer and not t.is_bool)
FLOAT_TYPES: tuple[ScalarType, ...] = (FLOAT, DOUBLE)
VECTOR_WIDTHS = (2, 3, 4, 8, 16)


@dataclass(frozen=True)
class VectorType(Type):
    elem: ScalarType
    width: int

    def __post_init__(self) -> None:
        if self.width not in VECTOR_WIDTHS:
            raise ValueError(f"invalid vector width {self.width}")
        if self.elem.is_bool:
            raise ValueError("bool vectors are not OpenCL types")

    def __str__(self) -> str:
        return f"{self.elem.name}{self.width}"

    @property
    def storage_width(self) -> int:
        """3-component vectors have the size and alignment of 4-component ones."""
        return 4 if self.width == 3 else self.width

    @property
    def size(self) -> int:
        return self.elem.size * self.storage_width

    @property
    def is_arithmetic(self) -> bool:
        return True


@dataclass(frozen=True)
class VoidType(Type):
    def __str__(self) -> str:
        return "void"


VOID = VoidType()


@dataclass(frozen=True)
class OpaqueType(Type):
    """Built-in handle types such as ``event_t``."""

    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        return 8


EVENT_T = OpaqueType("event_t")
SAMPLER_T = OpaqueType("sampler_t")

# image type name -> (coordinate components addressed by a sampler, the array's layer
# component or None); the coordinate vector a builtin takes has these components, padded
# to OpenCL's widths (1, 2 or 4)
IMAGE_GEOMETRY: dict[str, tuple[int, int | None]] = {
    "image1d_t": (1, None),
    "image1d_buffer_t": (1, None),
    "image1d_array_t": (1, 1),
    "image2d_t": (2, None),
    "image2d_array_t": (2, 2),
    "image3d_t": (3, None),
}
IMAGE_ACCESS = ("read_only", "write_only")


@dataclass(frozen=True)
class ImageType(OpaqueType):
    """An image handle (``image2d_t`` ...) with its access qualifier, ``read_only`` (the
    default) or ``write_only``: a builtin that reads takes only read-only images."""

    access: str = "read_only"

    def __post_init__(self) -> None:
        if self.name not in IMAGE_GEOMETRY:
            raise ValueError(f"unknown image type {self.name!r}")
        if self.access not in IMAGE_ACCESS:
            raise ValueError(f"unknown image access {self.access!r}")

    def __str__(self) -> str:
        return f"__{self.access} {self.name}"

    @property
    def axes(self) -> int:
        """Coordinate components a sampler addresses and filters (the layer excluded)."""
        return IMAGE_GEOMETRY[self.name][0]

    @property
    def layer(self) -> int | None:
        """The coordinate component that selects an array's layer, None for other images."""
        return IMAGE_GEOMETRY[self.name][1]

    @property
    def coord_width(self) -> int:
        """Components of the coordinate vector builtins take: 1, 2 or 4."""
        used = self.axes + (self.layer is not None)
        return 4 if used == 3 else used


@dataclass(frozen=True)
class PointerType(Type):
    """A pointer; ``const``/``volatile`` qualify the pointee, ``space`` is where it points."""

    pointee: Type
    space: AddressSpace = AddressSpace.PRIVATE
    const: bool = False
    volatile: bool = False
    restrict: bool = False

    def __str__(self) -> str:
        quals = "".join(q + " " for q, on in (("const", self.const), ("volatile", self.volatile)) if on)
        return f"{self.space.spelling} {quals}{self.pointee} *"

    @property
    def size(self) -> int:
        return 8

    @property
    def is_scalar(self) -> bool:
        return True


@dataclass(frozen=True)
class ArrayType(Type):
    elem: Type
    length: int | None  # None: size taken from an initializer or an incomplete parameter

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.length is None else self.length}]"

    @property
    def size(self) -> int:
        if self.length is None:
            raise TypeError(f"array type '{self}' has no size")
        return self.elem.size * self.length

    @property
    def align(self) -> int:
        return self.elem.align


@dataclass(frozen=True)
class Field:
    name: str
    type: Type
    align: int | None = None  # from __attribute__((aligned(N)))


# The generated name of a C11 anonymous struct or union member.
ANON_MEMBER_PREFIX = "__anon_member_"
_TAGLESS_PREFIX = "__anon_"


def tagless_name(kind: str, number: int) -> str:
    """The generated name of the ``number``-th struct, union or enum (``kind``) written
    without a tag."""
    return f"{_TAGLESS_PREFIX}{kind}_{number}"


def is_tagless_name(name: str, kinds: tuple[str, ...] = ("struct", "union", "enum")) -> bool:
    """Whether ``name`` is one ``tagless_name`` made for one of ``kinds``."""
    return name.startswith(tuple(f"{_TAGLESS_PREFIX}{kind}_" for kind in kinds))


def is_tagless_record_name(name: str) -> bool:
    return is_tagless_name(name, ("struct", "union"))


def is_anonymous_member(f: Field) -> bool:
    return f.name.startswith(ANON_MEMBER_PREFIX) and isinstance(f.type, StructType)


def member_names(f: Field) -> list[str]:
    """The names a member brings into its record: its own, or for an anonymous member the
    names of its record's members (C11 6.7.2.1p13)."""
    if is_anonymous_member(f):
        assert isinstance(f.type, StructType)
        return [n for inner in f.type.fields for n in member_names(inner)]
    return [f.name]


@dataclass(frozen=True)
class StructType(Type):
    """A struct or union. Anonymous records get a generated name (``__anon_struct_N``)."""

    name: str
    fields: tuple[Field, ...]
    is_union: bool = False
    packed: bool = False
    aligned: int | None = None

    def __str__(self) -> str:
        return f"{'union' if self.is_union else 'struct'} {self.name}"

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def member_path(self, name: str) -> list[Field] | None:
        """The fields to go through to reach member ``name``: the member alone, or the
        anonymous members that hold it followed by it; None when there is no such member."""
        for f in self.fields:
            if f.name == name:
                return [f]
            if is_anonymous_member(f):
                assert isinstance(f.type, StructType)
                inner = f.type.member_path(name)
                if inner is not None:
                    return [f, *inner]
        return None

    def _field_align(self, f: Field) -> int:
        if f.align is not None:
            return f.align
        return 1 if self.packed else f.type.align

    def layout(self) -> tuple[tuple[int, ...], int, int]:
        """Field offsets, total size and alignment, by the C rules with OpenCL's vector sizes."""
        offsets: list[int] = []
        offset = 0
        align = 1
        for f in self.fields:
            a = self._field_align(f)
            align = max(align, a)
            if self.is_union:
                offsets.append(0)
                offset = max(offset, f.type.size)
            else:
                offset = (offset + a - 1) // a * a
                offsets.append(offset)
                offset += f.type.size
        if self.aligned is not None:
            align = max(align, self.aligned)
        size = (offset + align - 1) // align * align
        return tuple(offsets), size, align

    @property
    def size(self) -> int:
        return self.layout()[1]

    @property
    def align(self) -> int:
        return self.layout()[2]


def component_layout(t: Type) -> tuple[ScalarType, int] | None:
    """``(T, n)`` for a value that can be kept as ``n`` scalars of type ``T``, one array of
    them per component: a vector of ``n`` components, or a struct of ``n`` fields all of one
    scalar type (not a union, packed or aligned, without anonymous members); None otherwise."""
    if isinstance(t, VectorType):
        return t.elem, t.width
    if not isinstance(t, StructType) or t.is_union or t.packed or t.aligned is not None \
            or not t.fields:
        return None
    first = t.fields[0].type
    if not isinstance(first, ScalarType) or any(
            f.type != first or f.align is not None or is_anonymous_member(f) for f in t.fields):
        return None
    return first, len(t.fields)


@dataclass(frozen=True)
class EnumType(Type):
    """An enum; values are ``int`` as in OpenCL C."""

    name: str
    enumerators: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        return f"enum {self.name}"

    @property
    def size(self) -> int:
        return 4

    @property
    def is_arithmetic(self) -> bool:
        return True

    @property
    def is_scalar(self) -> bool:
        return True


@dataclass(frozen=True)
class FunctionType(Type):
    ret: Type
    params: tuple[Type, ...]
    variadic: bool = False

    def __str__(self) -> str:
        params = ", ".join(str(p) for p in self.params) + (", ..." if self.variadic else "")
        return f"{self.ret} ({params})"


def int_limits(t: ScalarType) -> tuple[int, int]:
    """The least and greatest values of the integer type ``t``."""
    if t.is_signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def scalar_of(t: Type) -> ScalarType | None:
    """The element type of a scalar or vector arithmetic type (enums count as int)."""
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, VectorType):
        return t.elem
    if isinstance(t, EnumType):
        return INT
    return None


def width_of(t: Type) -> int:
    """Number of components: 1 for scalars."""
    return t.width if isinstance(t, VectorType) else 1


def indexes_in_place(t: Type) -> bool:
    """Whether ``base[i]`` on a value of type ``t`` designates part of that value (an array's
    element, a vector's component: a store writes the variable), not memory behind a pointer."""
    return isinstance(t, ArrayType | VectorType)


def vector_or_scalar(elem: ScalarType, width: int) -> ScalarType | VectorType:
    return elem if width == 1 else VectorType(elem, width)


def scalar_type_named(name: str) -> ScalarType | None:
    return ScalarType(name) if name in _SCALARS else None


def vector_type_named(name: str) -> VectorType | None:
    """``float4`` -> VectorType(float, 4); None when ``name`` is not a vector type name."""
    for width in (16, 8, 4, 3, 2):
        suffix = str(width)
        if name.endswith(suffix):
            elem = scalar_type_named(name[: -len(suffix)])
            if elem is not None and not elem.is_bool:
                return VectorType(elem, width)
            return None
    return None
