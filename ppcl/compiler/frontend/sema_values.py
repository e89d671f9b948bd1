"""Semantic analysis, part 2a: what every expression rule stands on.

How the value of an expression is used (arrays decay to pointers; implicit conversion for
assignment, initialization, arguments and return; conditions), which expressions are lvalues and
whether they may be written, and the leaf expressions: names, literals and builtin constants.
``ExprSema`` (sema_expr) types the compound expressions on top of this.

Every implicit conversion becomes an explicit ``Cast(implicit=True)``. Errors are located at the
start of the offending expression (pycparser's coordinate of the node) and abandon the enclosing
statement.
"""

from __future__ import annotations

import importlib
import math
import re
from types import ModuleType

from pycparser import c_ast

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend.sema_types import SemaError, Symbol, TypeSema, _first_coord_node
from ppcl.compiler.ir import conversions as conv
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T

_INT_SUFFIX_RE = re.compile(r"([uUlL]*)$")

# OpenCL C 1.2, table 6.1: "true expands to the integer constant 1 and false to 0".
_BOOL_LITERALS = {"true": 1, "false": 0}


def builtins_module() -> ModuleType:
    """``ir.builtins``, the builtin signature table and its constants."""
    return importlib.import_module("ppcl.compiler.ir.builtins")


def is_integer(t: T.Type) -> bool:
    return conv.is_integer_type(t)


def is_arith(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.VectorType, T.EnumType))


def is_scalar_value(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.EnumType, T.PointerType))


def is_null_constant(e: ir.Expr) -> bool:
    if isinstance(e, ir.IntLit) and e.value == 0:
        return True
    if isinstance(e, ir.Cast) and isinstance(e.type, T.PointerType) \
            and isinstance(e.type.pointee, T.VoidType):
        return is_null_constant(e.operand)
    return False


class ValueSema(TypeSema):
    """How expressions are used, which are lvalues, and the leaf expressions; ``ExprSema``
    types the compound ones."""

    # ------------------------------------------------------------ entry points

    def expr(self, node: c_ast.Node) -> ir.Expr:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(self.loc(node), f"unsupported expression ({type(node).__name__})")
        result: ir.Expr = method(node)
        return result

    def rvalue(self, node: c_ast.Node) -> ir.Expr:
        """An expression used for its value: arrays decay to pointers."""
        e = self.decay(self.expr(node))
        if e.type == T.HALF and not self.half_values:
            self.fail_half(self.loc(_first_coord_node(node)), "loading a 'half' value",
                           "read it with vload_half()")
        return e

    def decay(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e.type, T.ArrayType):
            space = self.lvalue_space(e)
            const = self.is_const_lvalue(e)
            pointer = T.PointerType(e.type.elem, space, const)
            return ir.Cast(pointer, e, implicit=True, loc=e.loc)
        return e

    def condition(self, node: c_ast.Node) -> ir.Expr:
        e = self.rvalue(node)
        if not is_scalar_value(e.type):
            self.fail(e.loc, f"condition must have scalar type, not '{e.type}'")
        return e

    # ------------------------------------------------------------ conversions

    def implicit(self, e: ir.Expr, dst: T.Type) -> ir.Expr:
        if e.type == dst:
            return e
        return ir.Cast(dst, e, implicit=True, loc=e.loc)

    def convert(self, e: ir.Expr, dst: T.Type, what: str, at: Loc | None = None) -> ir.Expr:
        """Implicit conversion for assignment, initialization, arguments and return; errors
        are located ``at`` (default: the converted expression)."""
        try:
            converted = self._convert(self.decay(e), dst, what)
        except SemaError as exc:
            if at is None:
                raise
            raise SemaError(at, exc.message) from None
        self._warn_literal_change(e, dst)
        return converted

    def _warn_literal_change(self, e: ir.Expr, dst: T.Type) -> None:
        """clang's -Wliteral-conversion: a floating literal (or its negation) converted to an
        integer type changes value: a fraction is dropped (``int x = 1.5;``), or its integral
        part is out of the type's range, which C leaves undefined (``uint u = 1e10;``).
        ``-Werror`` makes either an error."""
        literal = _float_literal(e)
        if literal is None or not isinstance(dst, T.ScalarType) or dst.is_float \
                or dst == T.BOOL:
            return
        value, text = literal
        if not math.isfinite(value) or not _in_range(math.trunc(value), dst):
            self.warning(e.loc, f"implicit conversion of out of range value from '{e.type}' "
                                f"to '{dst}' is undefined")
            return
        if value != math.trunc(value):
            self.warning(e.loc, f"implicit conversion from '{e.type}' to '{dst}' changes value "
                                f"from {text} to {math.trunc(value)}")

    def _convert(self, e: ir.Expr, dst: T.Type, what: str) -> ir.Expr:
        src = e.type
        if src == dst:
            return e
        if isinstance(dst, T.PointerType):
            if is_null_constant(e):
                return ir.Cast(dst, e, implicit=True, loc=e.loc)
            if isinstance(src, T.PointerType):
                if src.space != dst.space:
                    self.fail(e.loc, f"{what}: '{src}' points to {src.space.spelling} but "
                                     f"'{dst}' points to {dst.space.spelling} (address spaces "
                                     "differ)")
                if src.pointee != dst.pointee and not isinstance(src.pointee, T.VoidType) \
                        and not isinstance(dst.pointee, T.VoidType):
                    self.fail(e.loc, f"{what}: expected '{dst}' but got '{src}'")
                if (src.const and not dst.const) or (src.volatile and not dst.volatile):
                    # a warning, as clang gives (-Wincompatible-pointer-types-discards-
                    # qualifiers): kernels pass a const buffer on to a helper declared
                    # without const; -Werror makes it an error
                    self.warning(e.loc, f"{what}: passing '{src}' as '{dst}' discards "
                                        "qualifiers")
                if src.pointee == dst.pointee:
                    return e  # qualifiers only: no conversion of the value
                return ir.Cast(dst, e, implicit=True, loc=e.loc)
        if dst == T.EVENT_T and is_null_constant(e):
            return ir.Cast(dst, e, implicit=True, loc=e.loc)
        rank = conv.implicit_conversion_rank(src, dst)
        if rank is None:
            self.fail(e.loc, f"{what}: expected '{dst}' but got '{src}'")
        return ir.Cast(dst, e, implicit=True, loc=e.loc)

    # ------------------------------------------------------------ lvalues

    def is_lvalue(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.VarRef):
            return True
        if isinstance(e, ir.Index):
            # a vector's component is an lvalue when the vector is: (v * 2)[i] is not, nor a
            # subscript of a selection the front end could not map back (v.xxyy[i])
            if not isinstance(e.base.type, T.VectorType):
                return True
            return not isinstance(e.base, ir.Swizzle) and self.is_lvalue(e.base)
        if isinstance(e, ir.Unary):
            return e.op == "*"
        if isinstance(e, ir.Member):
            return e.arrow or self.is_lvalue(e.base)
        if isinstance(e, ir.Swizzle):
            return self.is_lvalue(e.base)
        return False

    def var_symbol(self, name: str) -> Symbol | None:
        return self.var_symbols.get(name)

    def lvalue_space(self, e: ir.Expr) -> T.AddressSpace:
        if isinstance(e, ir.VarRef):
            sym = self.var_symbol(e.name)
            return sym.space if sym is not None else T.AddressSpace.PRIVATE
        if isinstance(e, ir.Index):
            base = e.base
            if isinstance(base.type, T.PointerType):
                return base.type.space
            return self.lvalue_space(base)
        if isinstance(e, ir.Unary) and e.op == "*" and isinstance(e.operand.type, T.PointerType):
            return e.operand.type.space
        if isinstance(e, ir.Member):
            if e.arrow and isinstance(e.base.type, T.PointerType):
                return e.base.type.space
            return self.lvalue_space(e.base)
        if isinstance(e, ir.Swizzle):
            return self.lvalue_space(e.base)
        if isinstance(e, ir.Cast) and e.implicit:
            return self.lvalue_space(e.operand)
        return T.AddressSpace.PRIVATE

    def is_const_lvalue(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.VarRef):
            sym = self.var_symbol(e.name)
            return sym is not None and (sym.const or sym.space is T.AddressSpace.CONSTANT)
        if isinstance(e, ir.Index):
            if isinstance(e.base.type, T.PointerType):
                return e.base.type.const or e.base.type.space is T.AddressSpace.CONSTANT
            return self.is_const_lvalue(e.base)
        if isinstance(e, ir.Unary) and e.op == "*" and isinstance(e.operand.type, T.PointerType):
            return e.operand.type.const or e.operand.type.space is T.AddressSpace.CONSTANT
        if isinstance(e, ir.Member):
            if e.arrow and isinstance(e.base.type, T.PointerType):
                return e.base.type.const or e.base.type.space is T.AddressSpace.CONSTANT
            return self.is_const_lvalue(e.base)
        if isinstance(e, ir.Swizzle):
            return self.is_const_lvalue(e.base)
        return False

    def check_modifiable(self, e: ir.Expr, what: str, at: Loc | None = None) -> None:
        loc = at or e.loc
        if not self.is_lvalue(e):
            self.fail(loc, f"expression is not assignable ({what} needs an lvalue)")
        if isinstance(e.type, T.ArrayType):
            self.fail(loc, f"array type '{e.type}' is not assignable")
        if e.type == T.SAMPLER_T:
            self.fail(loc, "a sampler cannot be modified (section 6.9)")
        if e.type == T.HALF and not self.half_values:
            self.fail_half(loc, "storing a 'half' value", "write it with vstore_half()")
        if self.is_const_lvalue(e):
            if self.lvalue_space(e) is T.AddressSpace.CONSTANT:
                self.fail(loc, "cannot write to __constant memory")
            self.fail(loc, f"cannot assign to a const-qualified {self._describe(e)}")
        if isinstance(e, ir.Swizzle) and len(set(e.indices)) != len(e.indices):
            self.fail(loc, f"vector component selection '.{e.spelling}' assigns a component "
                             "twice")

    def _describe(self, e: ir.Expr) -> str:
        if isinstance(e, ir.VarRef):
            return f"variable '{e.name}'"
        return "location"

    # ------------------------------------------------------------ primary expressions

    def expr_ID(self, node: c_ast.ID) -> ir.Expr:
        loc = self.loc(node)
        sym = self.lookup(node.name)
        if sym is None:
            constant = self._builtin_constant(node.name, loc)
            if constant is not None:
                return constant
            self.fail(loc, f"use of undeclared identifier '{node.name}'")
        if sym.kind == "enum":
            return ir.IntLit(T.INT, sym.value, node.name, loc=loc)
        if sym.kind in ("func", "overloads"):
            self.fail(loc, f"function '{node.name}' can only be called (OpenCL C has no "
                           "function pointers)")
        if sym.kind == "typedef":
            self.fail(loc, f"unexpected type name '{node.name}': expected expression")
        return ir.VarRef(sym.type, sym.name, loc=loc)

    def _builtin_constant(self, name: str, loc: Loc) -> ir.Expr | None:
        if name in _BOOL_LITERALS:
            return ir.IntLit(T.INT, _BOOL_LITERALS[name], loc=loc)
        try:
            table = builtins_module().BUILTIN_CONSTANTS
        except ModuleNotFoundError:
            return None
        entry = table.get(name)
        if entry is None:
            return None
        t, value = entry
        if isinstance(value, float) or (isinstance(t, T.ScalarType) and t.is_float):
            return ir.FloatLit(t, float(value), name, loc=loc)
        return ir.IntLit(t, int(value), name, loc=loc)

    def expr_Constant(self, node: c_ast.Constant) -> ir.Expr:
        loc = self.loc(node)
        text: str = node.value
        kind: str = node.type
        if kind == "string":
            # OpenCL C: a string literal is a ``__constant char`` array; it is used through
            # the pointer it decays to (``sizeof`` alone sees the array, see ``_sizeof``)
            return ir.StringLit(T.PointerType(T.CHAR, T.AddressSpace.CONSTANT),
                                self.string_body(text, loc), loc=loc)
        if kind == "char":
            prefix = text[:text.index("'")]
            if prefix == "L":
                return ir.IntLit(T.INT, _wide_char_value(text[1:], loc, self), text, loc=loc)
            if prefix:
                self.fail(loc, f"character literal prefix '{prefix}' is C11, not OpenCL C "
                               "1.2 (which has 'c' and the wide L'c')")
            return ir.IntLit(T.INT, _char_value(text, loc, self), text, loc=loc)
        if kind in ("float", "double") or _looks_float(text):
            return self._float_literal(text, loc)
        return self._int_literal(text, loc)

    def _int_literal(self, text: str, loc: Loc) -> ir.Expr:
        suffix = _INT_SUFFIX_RE.search(text)
        suffix_text = suffix.group(1).lower() if suffix else ""
        digits = text[: len(text) - len(suffix_text)]
        try:
            if digits.lower().startswith("0x"):
                value = int(digits, 16)
            elif digits.lower().startswith("0b"):
                value = int(digits, 2)
            elif len(digits) > 1 and digits.startswith("0"):
                value = int(digits, 8)
            else:
                value = int(digits, 10)
        except ValueError:
            self.fail(loc, f"invalid integer literal '{text}'")
        decimal = not (len(digits) > 1 and digits.startswith("0"))
        unsigned = "u" in suffix_text
        is_long = "l" in suffix_text
        candidates: list[T.ScalarType]
        if unsigned and is_long:
            candidates = [T.ULONG]
        elif unsigned:
            candidates = [T.UINT, T.ULONG]
        elif is_long:
            candidates = [T.LONG] if decimal else [T.LONG, T.ULONG]
        else:
            candidates = [T.INT, T.LONG] if decimal else [T.INT, T.UINT, T.LONG, T.ULONG]
        for t in candidates:
            limit = 1 << (t.bits - (1 if t.is_signed else 0))
            if value < limit:
                return ir.IntLit(t, value, text, loc=loc)
        if value < 1 << 64:
            self.warning(loc, f"integer literal '{text}' is too large for a signed type; "
                              "it is unsigned long")
            return ir.IntLit(T.ULONG, value, text, loc=loc)
        self.fail(loc, f"integer literal '{text}' is too large for any integer type")

    def string_body(self, text: str, loc: Loc) -> str:
        """The spelling between the quotes of a string literal; a prefixed one (wide
        ``L"..."``, C11's ``u8"..."``) is refused, OpenCL C having no wide characters."""
        prefix = text[:text.index('"')]
        if prefix:
            self.fail(loc, f"string literal prefix '{prefix}' is not supported: OpenCL C "
                           "strings are plain \"...\" char arrays")
        return text[1:-1]

    def _float_literal(self, text: str, loc: Loc) -> ir.Expr:
        lowered = text.lower()
        t: T.ScalarType
        body = text
        if lowered.endswith("f") and not lowered.startswith("0x"):
            t, body = T.FLOAT, text[:-1]
        elif lowered.startswith("0x") and lowered.endswith("f") and "p" in lowered:
            t, body = T.FLOAT, text[:-1]
        elif lowered.endswith("h"):
            t, body = T.HALF, text[:-1]
        elif lowered.endswith("l"):
            t, body = T.DOUBLE, text[:-1]
        else:
            t = T.DOUBLE
        if t == T.DOUBLE and (self.single_precision_constant or not self.fp64):
            t = T.FLOAT
        try:
            value = float.fromhex(body) if body.lower().startswith("0x") else float(body)
        except ValueError:
            self.fail(loc, f"invalid floating literal '{text}'")
        if t == T.HALF and not self.half_values:
            self.fail(loc, "half literals need the cl_khr_fp16 extension")
        return ir.FloatLit(t, value, text, loc=loc)


def string_length(body: str) -> int:
    """Characters of a string literal's value, ``body`` its spelling between the quotes
    (an escape counts once)."""
    return len(body.encode("ascii", "backslashreplace").decode("unicode_escape"))


def _looks_float(text: str) -> bool:
    lowered = text.lower()
    if lowered.startswith("0x"):
        return "p" in lowered
    return "." in lowered or "e" in lowered


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8,
            "f": 12, "v": 11, "?": 63}


def _char_value(text: str, loc: Loc, sema: ValueSema) -> int:
    """The int value of a character literal: its char, which is signed in OpenCL C, so
    ``'\\xff'`` and ``'\\377'`` are -1, as clang makes them."""
    value = _char_code(text, loc, sema)
    return value - 256 if value >= 128 else value


def _wide_char_value(text: str, loc: Loc, sema: ValueSema) -> int:
    """The int value of a wide character literal ``L'c'`` (``text`` without the ``L``):
    wchar_t is a 32-bit int, as clang makes it on the targets OpenCL compilers run on, so
    ``L'\\xff'`` is 255."""
    value = _char_code(text, loc, sema, bits=32)
    return value - (1 << 32) if value >= 1 << 31 else value


def _char_code(text: str, loc: Loc, sema: ValueSema, bits: int = 8) -> int:
    """The code of a character literal's one character, an escape taken to ``bits`` bits."""
    body = text[1:-1]
    if not body.startswith("\\"):
        if len(body) != 1:
            sema.fail(loc, f"invalid character literal {text}")
        return ord(body)
    rest = body[1:]
    mask = (1 << bits) - 1
    if rest.startswith("x"):
        return int(rest[1:], 16) & mask
    if rest and rest[0] in "01234567":
        return int(rest, 8) & mask
    if rest in _ESCAPES:
        return _ESCAPES[rest]
    sema.fail(loc, f"unknown escape sequence in {text}")


def _float_literal(e: ir.Expr) -> tuple[float, str] | None:
    """The value of a floating literal, negated or not, and its spelling; None for any other
    expression."""
    if isinstance(e, ir.FloatLit):
        return e.value, e.text or str(e.value)
    if isinstance(e, ir.Unary) and e.op in ("-", "+") and isinstance(e.operand, ir.FloatLit):
        value, text = _float_literal(e.operand) or (0.0, "")
        return (-value, "-" + text) if e.op == "-" else (value, text)
    return None


def _in_range(value: int, t: T.ScalarType) -> bool:
    """Whether the integer type ``t`` represents ``value``."""
    low, high = T.int_limits(t)
    return low <= value <= high
