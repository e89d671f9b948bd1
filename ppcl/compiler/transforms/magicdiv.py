"""Division and remainder by a launch constant as a multiply-high by a magic number.

GPU code computes two-dimensional positions from a one-dimensional id with a width passed as
an argument (``row = gid / width; col = gid % width;``) and butterfly steps from a step passed
per launch (``tid % step``, ``tid / step``). On the CPU device each such division is a hardware
divide per work-item: x86 has no vector integer divide, so gcc either leaves the work-item loop
scalar or divides lane by lane, while the rest of the kernel vectorizes. A divisor the same for
the whole launch has a magic number (Granlund and Montgomery, "Division by invariant integers
using multiplication", 1994) that turns each division into a 32x32->64-bit multiply, an add and
shifts, all of which gcc vectorizes; the magic number is computed once, before the work-item
loop.

A division ``x / d`` or remainder ``x % d`` is rewritten when

* its type is ``int`` or ``uint`` (both operands converted to it; ``char`` and ``short``
  divide in ``int``), or ``ulong`` with a dividend below 2^32: a converted 32-bit unsigned
  value, or a work-item query (``get_global_id(0) / width`` divides in ``size_t``) of a
  build for launches whose ids fit in ``int`` (``KernelSpec.narrow_ids``). Its quotient is
  the 32-bit quotient by the divisor's low half, masked to 0 where the divisor does not fit
  in 32 bits. Other 64-bit divisions would need a 64x64->128-bit multiply, which does not
  vectorize, and keep the operator;
* ``d`` is not a constant (the C compiler reduces those itself) and is a launch constant: it
  reads only arguments the kernel never writes, range sizes (``get_global_size``,
  ``get_local_size``, ``get_num_groups``, ``get_work_dim``), literals, and variables that are
  never written after an initializer of that kind (``normalize.launch_constants``). Its value
  at the top of the kernel is then its value at the division, for every work-item;
* ``x`` has no side effects (it is read more than once).

The kernel then starts with the divisor's magic numbers, computed from the divisor expression
with the launch constants substituted; work-group formation keeps them as group scalars
(uniform values, computed once per group before the work-item loops).

Where the dividend is known to be in [0, 2^31) (a work-item id or size of a launch whose ids
fit in ``int``, a variable defined as one, a value masked or shifted down from one), one
multiply and one shift divide it by any 32-bit divisor magnitude ``a`` (the "round-up"
method), with ``l = ceil(log2 a)``::

    m = ceil(2^(31 + l) / a);  q = (x * m) >> (31 + l) (a 64-bit product)

exact since ``m * a - 2^(31 + l) < a <= 2^l`` and ``x < 2^31``; a signed divisor gives ``q``
its sign, and ``r = x - q * a``. This is the usual case (``gid / width``) and as cheap as
the hardware divide where the loop stays scalar. For other ``uint`` dividends (Figure 4.1 of
the paper), with ``l = ceil(log2 d)``::

    m = floor(2^32 * (2^l - d) / d) + 1;  s1 = min(l, 1);  s2 = max(l - 1, 0)
    t = (x * m) >> 32 (a 64-bit product);  q = (t + ((x - t) >> s1)) >> s2;  r = x - q * d

For ``int`` (Figure 5.1), with ``a = |d|`` and ``l = max(ceil(log2 a), 1)``::

    m = 1 + floor(2^(31 + l) / a) - 2^32 (a negative multiplier, or 1 for a = 1)
    q0 = x + ((x * m) >> 32);  q1 = (q0 >> (l - 1)) + (x < 0);  q = d < 0 ? -q1 : q1

computed with wrap-around in ``uint`` where a sum may leave ``int``; ``r = x - q * d``.
Both are exact for every ``x`` and every ``d != 0``. A zero divisor, for which OpenCL gives no
value, gives what the C dialect's guarded division gives (that of dividing by 1): the magic
numbers are those of 1. ``INT_MIN / -1`` gives ``INT_MIN``, as there too.

Pass name: ``magicdiv`` (before ``workgroup``); ``PPCL_DEBUG=plans`` names every division by
a variable and whether it was rewritten, and why not.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ppcl.compiler.analysis.buffers import single_definitions
from ppcl.compiler.analysis.effects import Effects, effects, is_effect_free
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.types import INT, LONG, UINT, ULONG, ScalarType, Type
from ppcl.compiler.ir.visit import Rewriter, walk
from ppcl.compiler.transforms.normalize import launch_constants, launch_value, substitute

__all__ = ["MagicDivisions", "magic_divisions", "narrow_divide", "narrow_magic",
           "signed_divide", "signed_magic", "unsigned_divide", "unsigned_magic"]

_TYPES = (INT, UINT)
_NARROW_QUERIES = frozenset(("get_global_id", "get_local_id", "get_group_id", "get_global_size",
                             "get_local_size", "get_num_groups"))
_MASK32 = 0xFFFFFFFF


# ---------------------------------------------------------------- the arithmetic, in Python
# The same formulas as the IR built below, for tests of every edge of the arithmetic.


def unsigned_magic(d: int) -> tuple[int, int, int]:
    """``(m, s1, s2)`` of the unsigned 32-bit divisor ``d`` (0 is taken as 1)."""
    d = d or 1
    log = 32 - _clz32(d - 1)
    m = ((((1 << log) - d) << 32) // d + 1) & _MASK32
    s1 = 1 if d > 1 else 0
    return m, s1, log - s1


def unsigned_divide(x: int, d: int) -> tuple[int, int]:
    """The quotient and remainder of the unsigned 32-bit ``x`` by ``d`` through its magic
    numbers."""
    m, s1, s2 = unsigned_magic(d)
    t = (x * m) >> 32
    q = ((t + ((x - t) >> s1)) & _MASK32) >> s2
    return q, (x - q * (d or 1)) & _MASK32


def signed_magic(d: int) -> tuple[int, int, int]:
    """``(m, shift, sign)`` of the signed 32-bit divisor ``d`` (0 is taken as 1): ``m`` as an
    ``int``, ``sign`` all ones for a negative divisor."""
    d = d or 1
    a = -d & _MASK32 if d < 0 else d
    log = 1 if a <= 2 else 32 - _clz32(a - 1)
    m = _as_int((((1 << (31 + log)) // a) + 1) & _MASK32)
    return m, log - 1, _MASK32 if d < 0 else 0


def signed_divide(x: int, d: int) -> tuple[int, int]:
    """The quotient and remainder of the signed 32-bit ``x`` by ``d`` through its magic
    numbers, wrapped to ``int``."""
    m, shift, sign = signed_magic(d)
    hi = (x * m) >> 32
    q0 = _as_int((x + hi) & _MASK32)
    q1 = ((q0 >> shift) + ((x & _MASK32) >> 31)) & _MASK32
    q = _as_int(((q1 ^ sign) - sign) & _MASK32)
    return q, _as_int((x - q * (d or 1)) & _MASK32)


def narrow_magic(d: int) -> tuple[int, int]:
    """``(m, shift)`` of the divisor magnitude ``d`` below 2^32 (0 is taken as 1) for
    dividends below 2^31."""
    d = d or 1
    shift = 31 + 32 - _clz32(d - 1)
    return ((1 << shift) + d - 1) // d & _MASK32, shift


def narrow_divide(x: int, d: int, signed: bool = False) -> tuple[int, int]:
    """The quotient and remainder of ``x`` in [0, 2^31) by the 32-bit ``d`` (``int`` where
    ``signed``, else ``uint``) through its magic numbers."""
    magnitude = (-d & _MASK32) if d < 0 else d
    m, shift = narrow_magic(magnitude)
    q = (x * m) >> shift
    r = (x - q * (magnitude or 1)) & _MASK32
    if not signed:
        return q, r
    sign = _MASK32 if d < 0 else 0
    return _as_int(((q ^ sign) - sign) & _MASK32), _as_int(r)


def _clz32(v: int) -> int:
    return 32 - v.bit_length()


def _as_int(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


# ---------------------------------------------------------------- the IR of it


def _lit(t: ScalarType, value: int) -> ir.IntLit:
    return ir.IntLit(t, value)


def _cast(t: ScalarType, e: ir.Expr) -> ir.Expr:
    return e if e.type == t else ir.Cast(t, e, False)


def _bin(t: Type, op: str, lhs: ir.Expr, rhs: ir.Expr) -> ir.Binary:
    return ir.Binary(t, op, lhs, rhs)


def _select(t: ScalarType, cond: ir.Expr, then: ir.Expr, otherwise: ir.Expr) -> ir.Expr:
    return ir.Conditional(t, cond, then, otherwise)


def _clz(e: ir.Expr) -> ir.Expr:
    return ir.Call(UINT, "clz", (e,), builtin="clz__uint")


@dataclass(frozen=True)
class _Magic:
    """The variables holding one divisor's magic numbers (see the module docstring).

    ``kind`` is ``narrow`` (every dividend below 2^31: one multiply and one shift; the
    divisor's magnitude as ``uint``, its sign apart where it is signed), ``uint`` or ``int``
    (any dividend of that type)."""

    kind: str
    divisor: str  # the divisor (narrow: its magnitude), 1 where it is 0
    multiplier: str
    shift: str  # narrow: 31 + l; uint: s2; int: l - 1
    first_shift: str = ""  # uint: s1
    sign: str = ""  # a signed divisor: all ones where it is negative

    @property
    def type(self) -> ScalarType:
        return INT if self.kind == "int" else UINT

    def ref(self, name: str) -> ir.VarRef:
        t = self.type if name in (self.divisor, self.multiplier) else UINT
        return ir.VarRef(t, name)

    def declarations(self, divisor: ir.Expr) -> list[ir.VarDecl]:
        """The magic numbers of ``divisor`` (of type ``int`` or ``uint``) as declarations."""
        decls: list[ir.VarDecl] = []
        if self.sign:
            negative = _bin(INT, "<", divisor, _lit(INT, 0))
            decls.append(ir.VarDecl(self.sign, UINT, const=True, init=_select(
                UINT, negative, _lit(UINT, _MASK32), _lit(UINT, 0))))
            if self.kind == "narrow":
                divisor = _select(UINT, negative,
                                  _bin(UINT, "-", _lit(UINT, 0), _cast(UINT, divisor)),
                                  _cast(UINT, divisor))
        t = self.type
        d = self.ref(self.divisor)
        one_if_zero = _select(t, _bin(INT, "==", divisor, _lit(t, 0)), _lit(t, 1), divisor)
        decls.append(ir.VarDecl(self.divisor, t, init=one_if_zero, const=True))
        if self.kind == "narrow":
            return decls + self._narrow(d)
        if self.kind == "uint":
            return decls + self._unsigned(d)
        return decls + self._signed(d)

    def _narrow(self, d: ir.Expr) -> list[ir.VarDecl]:
        log = _bin(UINT, "-", _lit(UINT, 32), _clz(_bin(UINT, "-", d, _lit(UINT, 1))))
        shift = self.ref(self.shift)
        power = _bin(ULONG, "<<", _lit(ULONG, 1), _cast(ULONG, shift))
        rounded_up = _bin(ULONG, "-", _bin(ULONG, "+", power, _cast(ULONG, d)), _lit(ULONG, 1))
        m = _bin(ULONG, "/", rounded_up, _cast(ULONG, d))
        return [
            ir.VarDecl(self.shift, UINT, init=_bin(UINT, "+", _lit(UINT, 31), log), const=True),
            ir.VarDecl(self.multiplier, UINT, init=_cast(UINT, m), const=True),
        ]

    def _unsigned(self, d: ir.Expr) -> list[ir.VarDecl]:
        log = _bin(UINT, "-", _lit(UINT, 32), _clz(_bin(UINT, "-", d, _lit(UINT, 1))))
        power = _bin(ULONG, "<<", _lit(ULONG, 1), _cast(ULONG, log))
        numerator = _bin(ULONG, "<<", _bin(ULONG, "-", power, _cast(ULONG, d)), _lit(ULONG, 32))
        m = _bin(ULONG, "+", _bin(ULONG, "/", numerator, _cast(ULONG, d)), _lit(ULONG, 1))
        first = _select(UINT, _bin(INT, ">", d, _lit(UINT, 1)), _lit(UINT, 1), _lit(UINT, 0))
        return [
            ir.VarDecl(self.multiplier, UINT, init=_cast(UINT, m), const=True),
            ir.VarDecl(self.first_shift, UINT, init=first, const=True),
            ir.VarDecl(self.shift, UINT, const=True,
                       init=_bin(UINT, "-", log, self.ref(self.first_shift))),
        ]

    def _signed(self, d: ir.Expr) -> list[ir.VarDecl]:
        negative = _bin(INT, "<", d, _lit(INT, 0))
        magnitude = _select(UINT, negative, _bin(UINT, "-", _lit(UINT, 0), _cast(UINT, d)),
                            _cast(UINT, d))
        log = _select(UINT, _bin(INT, "<=", magnitude, _lit(UINT, 2)), _lit(UINT, 1),
                      _bin(UINT, "-", _lit(UINT, 32),
                           _clz(_bin(UINT, "-", magnitude, _lit(UINT, 1)))))
        power = _bin(ULONG, "<<", _lit(ULONG, 1),
                     _cast(ULONG, _bin(UINT, "+", _lit(UINT, 31), log)))
        m = _bin(ULONG, "+", _bin(ULONG, "/", power, _cast(ULONG, magnitude)), _lit(ULONG, 1))
        return [
            ir.VarDecl(self.multiplier, INT, init=_cast(INT, _cast(UINT, m)), const=True),
            ir.VarDecl(self.shift, UINT, init=_bin(UINT, "-", log, _lit(UINT, 1)), const=True),
        ]

    def quotient(self, x: ir.Expr) -> ir.Expr:
        """The quotient of ``x`` (``uint`` for narrow and uint, ``int`` for int); a narrow
        quotient by a signed divisor is its magnitude (``signed`` gives it its sign)."""
        if self.kind == "narrow":
            product = _bin(ULONG, "*", _cast(ULONG, x), _cast(ULONG, self.ref(self.multiplier)))
            return _cast(UINT, _bin(ULONG, ">>", product, _cast(ULONG, self.ref(self.shift))))
        if self.kind == "uint":
            product = _bin(ULONG, "*", _cast(ULONG, x), _cast(ULONG, self.ref(self.multiplier)))
            t = _cast(UINT, _bin(ULONG, ">>", product, _lit(ULONG, 32)))
            half = _bin(UINT, ">>", _bin(UINT, "-", x, t), self.ref(self.first_shift))
            return _bin(UINT, ">>", _bin(UINT, "+", t, half), self.ref(self.shift))
        product = _bin(LONG, "*", _cast(LONG, x), _cast(LONG, self.ref(self.multiplier)))
        high = _cast(INT, _bin(LONG, ">>", product, _lit(LONG, 32)))
        q0 = _cast(INT, _bin(UINT, "+", _cast(UINT, x), _cast(UINT, high)))
        q1 = _bin(UINT, "+", _cast(UINT, _bin(INT, ">>", q0, _cast(INT, self.ref(self.shift)))),
                  _bin(UINT, ">>", _cast(UINT, x), _lit(UINT, 31)))
        return self.signed(q1)

    def signed(self, q: ir.Expr) -> ir.Expr:
        """The ``uint`` magnitude ``q`` with the divisor's sign, as ``int``."""
        sign = self.ref(self.sign)
        return _cast(INT, _bin(UINT, "-", _bin(UINT, "^", q, sign), sign))

    def remainder(self, x: ir.Expr, q: ir.Expr) -> ir.Expr:
        """``x - q * d`` in ``uint`` (where it wraps as ``int`` would)."""
        return _bin(UINT, "-", _cast(UINT, x), _bin(UINT, "*", _cast(UINT, q),
                                                    _cast(UINT, self.ref(self.divisor))))


# ---------------------------------------------------------------- the pass


@dataclass(frozen=True)
class MagicDivisions:
    """The rewritten function and one line per division by a variable."""

    function: ir.Function
    lines: tuple[str, ...] = ()
    setup: frozenset[str] = frozenset()  # the variables of the magic numbers, for formation

    def notes(self) -> list[str]:
        return list(self.lines)


def _show(e: ir.Expr) -> str:
    """A short name of an operand for the plans: its variable, or the variables it reads."""
    if isinstance(e, ir.Cast):
        return _show(e.operand)
    if isinstance(e, ir.VarRef):
        return e.name
    if isinstance(e, ir.Call):
        return f"{e.name}(...)"
    names = sorted({n.name for n in walk(e) if isinstance(n, ir.VarRef)})
    return f"({', '.join(names)})" if names else "(...)"


class _Divisions(Rewriter):
    def __init__(self, constants: dict[str, ir.Expr], known: set[str], used: set[str],
                 defs: dict[str, ir.Expr], narrow_ids: bool):
        self.constants = constants  # launch-constant variables -> their initializers
        self.known = known  # names a launch constant may read
        self.used = used
        self.defs = defs  # variables always equal to their one initializer
        self.narrow_ids = narrow_ids  # every id and size of the launch fits in int
        self.wraps: set[ir.Expr] = set()  # periodic wraps left to the split (``_wraps``)
        self.magics: dict[tuple[str, ScalarType, ir.Expr], _Magic] = {}
        self.keeps: dict[ir.Expr, str] = {}
        self.setup: list[ir.VarDecl] = []
        self.lines: list[str] = []

    def _fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def magic(self, kind: str, divisor: ir.Expr) -> _Magic:
        """The magic numbers of ``kind`` for ``divisor`` (``int`` or ``uint``), declared at
        the start of the kernel once per divisor and kind."""
        assert isinstance(divisor.type, ScalarType)
        hoisted = substitute(divisor, self.constants)
        key = (kind, divisor.type, hoisted)
        if key not in self.magics:
            prefix = f"div{len(self.magics)}"
            signed = divisor.type.is_signed
            magic = _Magic(kind, self._fresh(f"{prefix}_d"), self._fresh(f"{prefix}_m"),
                           self._fresh(f"{prefix}_s"),
                           self._fresh(f"{prefix}_s1") if kind == "uint" else "",
                           self._fresh(f"{prefix}_sign") if signed else "")
            self.magics[key] = magic
            self.setup += magic.declarations(hoisted)
        return self.magics[key]

    def keep(self, divisor: ir.Expr, magic: _Magic) -> str:
        """The variable that is all ones where the 64-bit ``divisor`` fits in 32 bits, and 0
        where every quotient of a 32-bit dividend by it is 0."""
        hoisted = substitute(divisor, self.constants)
        if hoisted not in self.keeps:
            name = self._fresh(magic.divisor.removesuffix("_d") + "_keep")
            fits = _bin(INT, "<=", hoisted, _lit(ULONG, _MASK32))
            self.setup.append(ir.VarDecl(name, UINT, const=True, init=_select(
                UINT, fits, _lit(UINT, _MASK32), _lit(UINT, 0))))
            self.keeps[hoisted] = name
        return self.keeps[hoisted]

    def below_2_31(self, x: ir.Expr, depth: int = 0) -> bool:
        """Whether the integer ``x`` is in [0, 2^31) wherever it is evaluated: a work-item
        query of a launch whose ids and sizes fit in ``int``, a literal, a variable always
        equal to such a value, or a value no larger than one (``&``, ``>>``, an unsigned
        ``/`` or ``%``, a conversion to a type of 32 bits or more)."""
        if depth > 8:
            return False
        t = x.type
        if not isinstance(t, ScalarType) or not t.is_integer:
            return False
        if isinstance(x, ir.IntLit):
            return 0 <= x.value < 2 ** 31
        if isinstance(x, ir.Call):
            return self.narrow_ids and x.builtin is not None and x.name in _NARROW_QUERIES
        if isinstance(x, ir.Cast):
            return t.size >= 4 and self.below_2_31(x.operand, depth + 1)
        if isinstance(x, ir.VarRef):
            return x.name in self.defs and self.below_2_31(self.defs[x.name], depth + 1)
        if isinstance(x, ir.Binary) and x.op == "&":
            return self.below_2_31(x.lhs, depth + 1) or self.below_2_31(x.rhs, depth + 1)
        if isinstance(x, ir.Binary) and (x.op == ">>" or x.op in ("/", "%")
                                         and not t.is_signed):
            return self.below_2_31(x.lhs, depth + 1)
        return False

    def why_not(self, t: Type, x: ir.Expr, d: ir.Expr) -> str | None:
        """Why ``x op d`` keeps its operator, or None where it becomes a multiply."""
        if x.type != t or d.type != t:
            return "operands of another type"
        if t == ULONG and not (self.below_2_31(x) or _uint_value(x)):
            return "a 64-bit dividend that may not fit in 32 bits"
        if t not in _TYPES and t != ULONG:
            return "not a 32-bit integer division"
        if not launch_value(d, self.known):
            return "its divisor is not the same for the whole launch"
        if not is_effect_free(x):
            return "its dividend has side effects"
        return None

    def divide(self, op: str, x: ir.Expr, d: ir.Expr, loc: Loc,
               node: ir.Expr | None = None) -> ir.Expr | None:
        t = x.type
        text = f"{_show(x)} {op} {_show(d)} at {loc.line}:{loc.col}"
        if _const(d):
            return None
        if node is not None and node in self.wraps:
            self.lines.append(f"division kept: {text} (a periodic wrap: left to the split, "
                              "which drops it where the dividend stays in [0, divisor))")
            return None
        why = self.why_not(t, x, d)
        if why is not None:
            if isinstance(t, ScalarType) and t.is_integer:
                self.lines.append(f"division kept: {text} ({why})")
            return None
        assert isinstance(t, ScalarType)
        narrow = self.below_2_31(x)
        how = "one multiply and a shift (its dividend is below 2^31)" if narrow \
            else "a multiply-high and shifts"
        self.lines.append(f"magic division: {text} as {how}, its magic numbers computed "
                          f"once per group")
        if t == ULONG:
            # a dividend below 2^32: the 32-bit quotient by the divisor's low half, or 0
            # where the divisor does not fit in 32 bits (the remainder is then the dividend)
            magic = self.magic("narrow" if narrow else "uint", _cast(UINT, d))
            xu = _cast(UINT, x)
            q32 = _bin(UINT, "&", magic.quotient(xu), ir.VarRef(UINT, self.keep(d, magic)))
            return _cast(ULONG, q32 if op == "/" else magic.remainder(xu, q32))
        magic = self.magic("narrow" if narrow else t.name, d)
        q = magic.quotient(x)
        if op == "%":
            return _cast(t, magic.remainder(x, q))
        return magic.signed(q) if narrow and t == INT else q

    def rewrite_Binary(self, e: ir.Binary) -> ir.Expr:
        if e.op not in ("/", "%"):
            return e
        out = self.divide(e.op, e.lhs, e.rhs, e.loc, e)
        return e if out is None else _located(out, e.loc)

    def rewrite_Assign(self, e: ir.Assign) -> ir.Expr:
        if e.op not in ("/=", "%=") or not isinstance(e.target, ir.VarRef) \
                or e.target.type != e.value.type:
            return e
        out = self.divide(e.op[0], e.target, e.value, e.loc)
        if out is None:
            return e
        return ir.Assign(e.type, "=", e.target, _located(out, e.loc), loc=e.loc)


def _uint_value(x: ir.Expr) -> bool:
    """Whether ``x`` converts a 32-bit or narrower unsigned value."""
    if not isinstance(x, ir.Cast):
        return False
    t = x.operand.type
    return isinstance(t, ScalarType) and t.is_integer and not t.is_signed and t.size <= 4


def _const(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.IntLit)


def _located(e: ir.Expr, loc: Loc) -> ir.Expr:
    return dataclasses.replace(e, loc=loc)


def magic_divisions(kernel: ir.Function, narrow_ids: bool = False) -> MagicDivisions:
    """``kernel`` with its 32-bit divisions and remainders by launch constants as multiplies
    by magic numbers computed at its start (see the module docstring). ``narrow_ids``: the
    launch's ids and sizes fit in ``int`` (``KernelSpec.narrow_ids``)."""
    body = kernel.body
    if body is None or not any(isinstance(n, ir.Binary) and n.op in ("/", "%")
                               or isinstance(n, ir.Assign) and n.op in ("/=", "%=")
                               for n in walk(body)):
        return MagicDivisions(kernel)
    constants = launch_constants(kernel)
    params = {p.name for p in kernel.params}
    declared = [d.name for d in walk(body) if isinstance(d, ir.VarDecl)]
    # a name declared twice, or both a parameter and a local, could mean another variable
    twice = {n for n in declared if declared.count(n) > 1} | (params & set(declared))
    constants = {n: v for n, v in constants.items() if n not in twice}
    known = (params - twice - _changed(kernel)) | set(constants)
    used = params | set(declared) | {n.name for n in walk(body) if isinstance(n, ir.VarRef)}
    defs = {n: v for n, v in single_definitions(kernel).items() if n not in twice}
    rewriter = _Divisions(constants, known, used, defs, narrow_ids)
    rewriter.wraps = _wraps(body, known)
    rewritten = rewriter.rewrite(body)
    if not rewriter.setup:
        return MagicDivisions(kernel, tuple(rewriter.lines))
    setup = tuple(ir.DeclStmt((d,), loc=body.loc) for d in rewriter.setup)
    new_body = dataclasses.replace(rewritten, stmts=setup + rewritten.stmts)
    return MagicDivisions(dataclasses.replace(kernel, body=new_body), tuple(rewriter.lines),
                          frozenset(d.name for d in rewriter.setup))


def _wrap_terms(e: ir.Expr, d: ir.Expr) -> list[ir.Expr] | None:
    """The terms of ``e`` as a sum and difference, or None where it is none (a product, a
    call...): a term is a variable, a literal, a load, the divisor ``d`` or ``... % d``."""
    if isinstance(e, ir.Cast) and e.type == e.operand.type:
        e = e.operand
    if isinstance(e, ir.Binary) and e.op in ("+", "-"):
        lhs, rhs = _wrap_terms(e.lhs, d), _wrap_terms(e.rhs, d)
        return None if lhs is None or rhs is None else lhs + rhs
    if e == d or isinstance(e, ir.VarRef | ir.IntLit | ir.Index) \
            or (isinstance(e, ir.Binary) and e.op == "%" and e.rhs == d):
        return [e]
    return None


def _wraps(body: ir.Block, known: set[str]) -> set[ir.Expr]:
    """Signed remainders of the periodic wraps the split pass takes as sites
    (``(x - 1 + w) % w``, ``(y + 1) % h``, ``((x - DX[k]) % nx + nx) % nx``): a sum of a
    varying term and an offset (a literal, a table load, the divisor or a remainder by it)
    modulo a launch constant, and the remainders by the same divisor inside it. On the
    interior the split drops them; a multiply-high would hide them from it."""
    found: set[ir.Expr] = set()
    for n in walk(body):
        if not isinstance(n, ir.Binary) or n.op != "%" or n.type != INT \
                or not launch_value(n.rhs, known):
            continue
        terms = _wrap_terms(n.lhs, n.rhs)
        if terms is None or len(terms) < 2:
            continue
        varying = any(isinstance(t, ir.VarRef | ir.Index) and not launch_value(t, known)
                      for t in terms)
        offset = any(t == n.rhs or isinstance(t, ir.Index | ir.Binary)
                     or (isinstance(t, ir.IntLit) and t.value != 0) for t in terms)
        if varying and offset:
            found.add(n)
            found |= {t for t in walk(n.lhs) if isinstance(t, ir.Binary) and t.op == "%"
                      and t.rhs == n.rhs}
    return found


def _changed(kernel: ir.Function) -> set[str]:
    assert kernel.body is not None
    eff = effects(kernel.body, Effects())
    return set(eff.writes | eff.address_taken)
