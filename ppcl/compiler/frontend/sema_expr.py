"""Semantic analysis, part 2: expressions.

Every expression is typed by OpenCL's rules (``ir.conversions``); every implicit conversion
becomes an explicit ``Cast(implicit=True)``. Errors are located at the start of the offending
expression (pycparser's coordinate of the node) and abandon the enclosing statement.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Any

from pycparser import c_ast

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend.sema_types import SemaError, Symbol, TypeSema, _first_coord_node
from ppcl.compiler.ir import conversions as conv
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T

_ARITH_OPS = {"+", "-", "*", "/", "%"}
_BITWISE_OPS = {"&", "|", "^"}
_SHIFT_OPS = {"<<", ">>"}
_COMPARE_OPS = {"<", ">", "<=", ">=", "==", "!="}
_LOGICAL_OPS = {"&&", "||"}

_XYZW = {"x": 0, "y": 1, "z": 2, "w": 3}
_RGBA = {"r": 0, "g": 1, "b": 2, "a": 3}

_INT_SUFFIX_RE = re.compile(r"([uUlL]*)$")


def _builtins() -> ModuleType:
    return importlib.import_module("ppcl.compiler.ir.builtins")


def type_str(t: T.Type) -> str:
    return str(t)


def _is_integer(t: T.Type) -> bool:
    return conv.is_integer_type(t)


def _is_arith(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.VectorType, T.EnumType))


def _is_scalar_value(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.EnumType, T.PointerType))


def _is_null_constant(e: ir.Expr) -> bool:
    if isinstance(e, ir.IntLit) and e.value == 0:
        return True
    if isinstance(e, ir.Cast) and isinstance(e.type, T.PointerType) \
            and isinstance(e.type.pointee, T.VoidType):
        return _is_null_constant(e.operand)
    return False


class ExprSema(TypeSema):
    """Typing of expressions."""

    allow_strings = False

    # ------------------------------------------------------------ entry points

    def expr(self, node: c_ast.Node) -> ir.Expr:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(self.loc(node), f"unsupported expression ({type(node).__name__})")
        result: ir.Expr = method(node)
        return result

    def rvalue(self, node: c_ast.Node) -> ir.Expr:
        """An expression used for its value: arrays decay to pointers."""
        return self.decay(self.expr(node))

    def decay(self, e: ir.Expr) -> ir.Expr:
        if isinstance(e.type, T.ArrayType):
            space = self.lvalue_space(e)
            const = self.is_const_lvalue(e)
            pointer = T.PointerType(e.type.elem, space, const)
            return ir.Cast(pointer, e, implicit=True, loc=e.loc)
        return e

    def condition(self, node: c_ast.Node) -> ir.Expr:
        e = self.rvalue(node)
        if not _is_scalar_value(e.type):
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
            return self._convert(self.decay(e), dst, what)
        except SemaError as exc:
            if at is None:
                raise
            raise SemaError(at, exc.message) from None

    def _convert(self, e: ir.Expr, dst: T.Type, what: str) -> ir.Expr:
        src = e.type
        if src == dst:
            return e
        if isinstance(dst, T.PointerType):
            if _is_null_constant(e):
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
                    self.fail(e.loc, f"{what}: passing '{src}' as '{dst}' discards qualifiers")
                if src.pointee == dst.pointee:
                    return e  # qualifiers only: no conversion of the value
                return ir.Cast(dst, e, implicit=True, loc=e.loc)
        if dst == T.EVENT_T and _is_null_constant(e):
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
            return True
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
        if sym.kind == "func":
            self.fail(loc, f"function '{node.name}' can only be called (OpenCL C has no "
                           "function pointers)")
        if sym.kind == "typedef":
            self.fail(loc, f"unexpected type name '{node.name}': expected expression")
        return ir.VarRef(sym.type, sym.name, loc=loc)

    def _builtin_constant(self, name: str, loc: Loc) -> ir.Expr | None:
        try:
            table = _builtins().BUILTIN_CONSTANTS
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
            if not self.allow_strings:
                self.fail(loc, "string literals are only supported as printf arguments")
            return ir.StringLit(T.PointerType(T.CHAR, T.AddressSpace.CONSTANT, const=True),
                                text[1:-1], loc=loc)
        if kind == "char":
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
        if t == T.HALF and not self.extensions.get("cl_khr_fp16", False):
            self.fail(loc, "half literals need the cl_khr_fp16 extension")
        return ir.FloatLit(t, value, text, loc=loc)

    # ------------------------------------------------------------ unary

    def expr_UnaryOp(self, node: c_ast.UnaryOp) -> ir.Expr:
        op = node.op
        loc = self.loc(node)
        if op == "sizeof":
            return self._sizeof(node, loc)
        if op == "&":
            operand = self.expr(node.expr)
            if isinstance(operand, ir.Swizzle):
                self.fail(loc, "cannot take the address of a vector component selection")
            if not self.is_lvalue(operand):
                self.fail(loc, "cannot take the address of an rvalue")
            pointer = T.PointerType(operand.type, self.lvalue_space(operand),
                                    self.is_const_lvalue(operand))
            return ir.Unary(pointer, "&", operand, loc=loc)
        if op in ("++", "--", "p++", "p--"):
            operand = self.expr(node.expr)
            self.check_modifiable(operand, f"'{op.lstrip('p')}'")
            if not (_is_arith(operand.type) or isinstance(operand.type, T.PointerType)):
                self.fail(loc, f"cannot increment or decrement a value of type '{operand.type}'")
            return ir.Unary(operand.type, op, operand, loc=loc)
        operand = self.rvalue(node.expr)
        t = operand.type
        if op == "*":
            if not isinstance(t, T.PointerType):
                self.fail(loc, f"indirection requires a pointer operand ('{t}' is not)")
            if isinstance(t.pointee, T.VoidType):
                self.fail(loc, "cannot dereference a 'void *' pointer")
            return ir.Unary(t.pointee, "*", operand, loc=loc)
        if op in ("-", "+"):
            if not _is_arith(t):
                self.fail(loc, f"invalid argument type '{t}' to unary '{op}'")
            promoted = conv.promote(t)
            return ir.Unary(promoted, op, self.implicit(operand, promoted), loc=loc)
        if op == "~":
            if not _is_integer(t):
                self.fail(loc, f"invalid argument type '{t}' to unary '~' (integer required)")
            promoted = conv.promote(t)
            return ir.Unary(promoted, op, self.implicit(operand, promoted), loc=loc)
        if op == "!":
            if isinstance(t, T.VectorType):
                return ir.Unary(conv.comparison_result(t), op, operand, loc=loc)
            if not _is_scalar_value(t):
                self.fail(loc, f"invalid argument type '{t}' to unary '!'")
            return ir.Unary(T.INT, op, operand, loc=loc)
        self.fail(loc, f"unsupported unary operator '{op}'")

    def _sizeof(self, node: c_ast.UnaryOp, loc: Loc) -> ir.Expr:
        operand: ir.Expr | None = None
        if isinstance(node.expr, c_ast.Typename):
            t = self.type_name(node.expr)
        else:
            operand = self.expr(node.expr)
            t = operand.type
        try:
            size = t.size
        except TypeError:
            self.fail(loc, f"invalid application of 'sizeof' to an incomplete type '{t}'")
        if isinstance(t, T.VoidType):
            self.fail(loc, "invalid application of 'sizeof' to 'void'")
        return ir.SizeOf(T.ULONG, t, size, operand, loc=loc)

    # ------------------------------------------------------------ binary

    def expr_BinaryOp(self, node: c_ast.BinaryOp) -> ir.Expr:
        loc = self.operator_loc(node.right, node.op, self.loc(node))
        lhs = self.rvalue(node.left)
        rhs = self.rvalue(node.right)
        return self.binary(node.op, lhs, rhs, loc)

    def binary(self, op: str, lhs: ir.Expr, rhs: ir.Expr, loc: Loc) -> ir.Expr:
        lt, rt = lhs.type, rhs.type
        if isinstance(lt, T.PointerType) or isinstance(rt, T.PointerType):
            return self._pointer_binary(op, lhs, rhs, loc)
        if not _is_arith(lt) or not _is_arith(rt):
            self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")
        if op in _LOGICAL_OPS:
            if isinstance(lt, T.VectorType) or isinstance(rt, T.VectorType):
                common = self._common(op, lhs, rhs, loc)
                return ir.Binary(conv.comparison_result(common), op, self.implicit(lhs, common),
                                 self.implicit(rhs, common), loc=loc)
            return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
        if op in _SHIFT_OPS:
            if not _is_integer(lt) or not _is_integer(rt):
                self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}'): "
                               "integer types required")
            result = conv.promote(lt)
            if isinstance(rt, T.VectorType) and not isinstance(result, T.VectorType):
                self.fail(loc, f"invalid operands to binary '{op}': the shift count is a vector "
                               f"('{rt}') but the shifted value is a scalar")
            if isinstance(rt, T.VectorType) and isinstance(result, T.VectorType) \
                    and rt.width != result.width:
                self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")
            return ir.Binary(result, op, self.implicit(lhs, result), self.implicit(rhs, result),
                             loc=loc)
        common = self._common(op, lhs, rhs, loc)
        if (op == "%" or op in _BITWISE_OPS) and not _is_integer(common):
            self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}'): integer "
                           "types required")
        result_type = conv.comparison_result(common) if op in _COMPARE_OPS else common
        return ir.Binary(result_type, op, self.implicit(lhs, common), self.implicit(rhs, common),
                         loc=loc)

    def _common(self, op: str, lhs: ir.Expr, rhs: ir.Expr, loc: Loc) -> T.Type:
        common = conv.usual_arithmetic(lhs.type, rhs.type)
        if common is None:
            self.fail(loc, f"invalid operands to binary '{op}' ('{lhs.type}' and '{rhs.type}'):"
                           " vector operands must have the same type (use convert_<type>())")
        return common

    def _pointer_binary(self, op: str, lhs: ir.Expr, rhs: ir.Expr, loc: Loc) -> ir.Expr:
        lt, rt = lhs.type, rhs.type
        if op in _COMPARE_OPS or op in _LOGICAL_OPS:
            if op in _LOGICAL_OPS:
                if not _is_scalar_value(lt) or not _is_scalar_value(rt):
                    self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if op in ("==", "!=") and (_is_null_constant(lhs) or _is_null_constant(rhs)):
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if isinstance(lt, T.PointerType) and isinstance(rt, T.PointerType):
                if lt.space != rt.space:
                    self.fail(loc, f"comparison of pointers to different address spaces "
                                   f"({lt.space.spelling} and {rt.space.spelling})")
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if op in ("==", "!=") and (_is_null_constant(lhs) or _is_null_constant(rhs)):
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            self.fail(loc, f"comparison between pointer and non-pointer ('{lt}' and '{rt}')")
        if op == "+" or op == "-":
            if isinstance(lt, T.PointerType) and isinstance(rt, T.PointerType):
                if op == "+":
                    self.fail(loc, f"invalid operands to binary '+' ('{lt}' and '{rt}')")
                if lt.pointee != rt.pointee or lt.space != rt.space:
                    self.fail(loc, f"subtraction of incompatible pointers ('{lt}' and '{rt}')")
                return ir.Binary(T.PTRDIFF_T, op, lhs, rhs, loc=loc)
            pointer, other = (lhs, rhs) if isinstance(lt, T.PointerType) else (rhs, lhs)
            if op == "-" and pointer is rhs:
                self.fail(loc, f"invalid operands to binary '-' ('{lt}' and '{rt}')")
            if not (isinstance(other.type, (T.ScalarType, T.EnumType)) and _is_integer(other.type)):
                self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}'): pointer "
                               "arithmetic needs an integer offset")
            assert isinstance(pointer.type, T.PointerType)
            if isinstance(pointer.type.pointee, T.VoidType):
                self.fail(loc, "arithmetic on a 'void *' pointer")
            return ir.Binary(pointer.type, op, lhs, rhs, loc=loc)
        self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")

    # ------------------------------------------------------------ assignment

    def expr_Assignment(self, node: c_ast.Assignment) -> ir.Expr:
        loc = self.operator_loc(node.rvalue, node.op, self.loc(node))
        target = self.expr(node.lvalue)
        value = self.rvalue(node.rvalue)
        op = node.op
        self.check_modifiable(target, "assignment", loc)
        if op == "=":
            return ir.Assign(target.type, "=", target,
                             self.convert(value, target.type, "assignment", loc), loc=loc)
        binop = op[:-1]
        if isinstance(target.type, T.PointerType):
            if binop not in ("+", "-"):
                self.fail(loc, f"invalid operands to '{op}' ('{target.type}' and '{value.type}')")
            self._pointer_binary(binop, target, value, loc)
            return ir.Assign(target.type, op, target, value, loc=loc)
        result = self.binary(binop, target, value, loc)
        assert isinstance(result, ir.Binary)
        if isinstance(result.type, T.VectorType) and not isinstance(target.type, T.VectorType):
            self.fail(loc, f"assigning to '{target.type}' from incompatible type "
                           f"'{result.type}'")
        return ir.Assign(target.type, op, target, result.rhs, loc=loc)

    # ------------------------------------------------------------ other expressions

    def expr_TernaryOp(self, node: c_ast.TernaryOp) -> ir.Expr:
        loc = self.loc(node)
        cond = self.rvalue(node.cond)
        then = self.rvalue(node.iftrue)
        otherwise = self.rvalue(node.iffalse)
        if isinstance(cond.type, T.VectorType):
            return self._vector_select(cond, then, otherwise, loc)
        if not _is_scalar_value(cond.type):
            self.fail(cond.loc, f"condition must have scalar type, not '{cond.type}'")
        tt, ot = then.type, otherwise.type
        if _is_arith(tt) and _is_arith(ot):
            common = conv.usual_arithmetic(tt, ot)
            if common is None:
                self.fail(loc, f"incompatible operand types ('{tt}' and '{ot}') in '?:'")
            return ir.Conditional(common, cond, self.implicit(then, common),
                                  self.implicit(otherwise, common), loc=loc)
        if isinstance(tt, T.PointerType) or isinstance(ot, T.PointerType):
            if isinstance(tt, T.PointerType) and _is_null_constant(otherwise):
                return ir.Conditional(tt, cond, then, self.implicit(otherwise, tt), loc=loc)
            if isinstance(ot, T.PointerType) and _is_null_constant(then):
                return ir.Conditional(ot, cond, self.implicit(then, ot), otherwise, loc=loc)
            if isinstance(tt, T.PointerType) and isinstance(ot, T.PointerType):
                if tt.space != ot.space:
                    self.fail(loc, f"pointers to different address spaces in '?:' "
                                   f"({tt.space.spelling} and {ot.space.spelling})")
                if tt.pointee == ot.pointee:
                    merged = T.PointerType(tt.pointee, tt.space, tt.const or ot.const,
                                           tt.volatile or ot.volatile)
                    return ir.Conditional(merged, cond, then, otherwise, loc=loc)
        if tt == ot:
            return ir.Conditional(tt, cond, then, otherwise, loc=loc)
        self.fail(loc, f"incompatible operand types ('{tt}' and '{ot}') in '?:'")

    def _vector_select(self, cond: ir.Expr, then: ir.Expr, otherwise: ir.Expr,
                       loc: Loc) -> ir.Expr:
        ct = cond.type
        assert isinstance(ct, T.VectorType)
        if not ct.elem.is_integer:
            self.fail(cond.loc, f"vector condition of '?:' must have an integer element type, "
                                f"not '{ct}'")
        common = conv.usual_arithmetic(then.type, otherwise.type)
        if common is None:
            self.fail(loc, f"incompatible operand types ('{then.type}' and '{otherwise.type}') "
                           "in '?:'")
        if not isinstance(common, T.VectorType):
            common = T.VectorType(T.scalar_of(common) or T.INT, ct.width)
        if common.width != ct.width or common.elem.size != ct.elem.size:
            self.fail(loc, f"vector condition '{ct}' does not match the result type '{common}' "
                           "(same width and element size required)")
        return ir.Conditional(common, cond, self.implicit(then, common),
                              self.implicit(otherwise, common), loc=loc)

    def expr_ExprList(self, node: c_ast.ExprList) -> ir.Expr:
        exprs = tuple(self.rvalue(e) for e in node.exprs)
        if len(exprs) == 1:
            return exprs[0]
        return ir.Comma(exprs[-1].type, exprs, loc=exprs[0].loc)

    def expr_ArrayRef(self, node: c_ast.ArrayRef) -> ir.Expr:
        loc = self.operator_loc(node.subscript, "[", self.loc(node))
        base = self.expr(node.name)
        index = self.rvalue(node.subscript)
        if isinstance(base.type, T.ArrayType):
            elem = base.type.elem
        elif isinstance(base.type, T.PointerType):
            elem = base.type.pointee
            if isinstance(elem, T.VoidType):
                self.fail(loc, "subscript of a 'void *' pointer")
        elif isinstance(base.type, T.VectorType):
            self.fail(loc, "subscripting a vector is not allowed in OpenCL C 1.2; use "
                           ".s0 ... .sF")
        else:
            self.fail(loc, f"subscripted value of type '{base.type}' is not an array or pointer")
        if not (isinstance(index.type, (T.ScalarType, T.EnumType)) and _is_integer(index.type)):
            self.fail(index.loc, f"array subscript is not an integer ('{index.type}')")
        return ir.Index(elem, base, index, loc=loc)

    def expr_StructRef(self, node: c_ast.StructRef) -> ir.Expr:
        loc = self.operator_loc(node.field, node.type, self.loc(node))
        base = self.expr(node.name)
        name: str = node.field.name
        if node.type == "->":
            if not isinstance(base.type, T.PointerType) or \
                    not isinstance(base.type.pointee, T.StructType):
                self.fail(loc, f"member reference '->{name}' on a value of type '{base.type}', "
                               "which is not a pointer to a struct or union")
            record = base.type.pointee
            arrow = True
        else:
            if isinstance(base.type, T.VectorType):
                return self.swizzle(base, name, loc)
            if not isinstance(base.type, T.StructType):
                self.fail(loc, f"member reference '.{name}' on a value of type '{base.type}', "
                               "which is not a struct, union or vector")
            record = base.type
            arrow = False
        member = record.field(name)
        if member is None:
            shown = self.typedef_names.get(record.name, str(record))
            self.fail(self.loc(node.field), f"no member named '{name}' in '{shown}'")
        return ir.Member(member.type, base, name, arrow, loc=loc)

    def swizzle(self, base: ir.Expr, spelling: str, loc: Loc) -> ir.Expr:
        vt = base.type
        assert isinstance(vt, T.VectorType)
        width = vt.width
        indices: list[int]
        if spelling in ("lo", "hi", "even", "odd"):
            n = vt.storage_width
            half = n // 2
            indices = {"lo": list(range(half)), "hi": list(range(half, n)),
                       "even": list(range(0, n, 2)), "odd": list(range(1, n, 2))}[spelling]
        elif spelling[0] in "sS" and len(spelling) > 1:
            indices = []
            for ch in spelling[1:]:
                try:
                    index = int(ch, 16)
                except ValueError:
                    self.fail(loc, f"invalid vector component '{ch}' in '.{spelling}'")
                if index >= width:
                    self.fail(loc, f"vector component '.s{ch}' is out of range for '{vt}'")
                indices.append(index)
        else:
            table = _XYZW if spelling[0] in _XYZW else _RGBA
            if table is _RGBA and self.cl_version < 300:
                if all(ch in _RGBA for ch in spelling):
                    self.fail(loc, f"'.{spelling}': .rgba component names need OpenCL C 3.0 "
                                   "(use .xyzw or .s0123)")
            indices = []
            for ch in spelling:
                if ch not in table:
                    self.fail(loc, f"invalid vector component '{ch}' in '.{spelling}' for "
                                   f"'{vt}'")
                index = table[ch]
                if index >= width:
                    self.fail(loc, f"vector component '.{ch}' is out of range for '{vt}'")
                indices.append(index)
            if width > 4:
                self.fail(loc, f"'.{spelling}': .xyzw names only select from vectors of up to 4 "
                               f"components; '{vt}' needs .s0 ... .sF")
        count = len(indices)
        if count not in (1, 2, 3, 4, 8, 16):
            self.fail(loc, f"'.{spelling}' selects {count} components, which is not a vector "
                           "width")
        result = T.vector_or_scalar(vt.elem, count)
        return ir.Swizzle(result, base, tuple(indices), spelling, loc=base.loc)

    # ------------------------------------------------------------ casts and vector literals

    def expr_Cast(self, node: c_ast.Cast) -> ir.Expr:
        loc = self.loc(node)
        target = self.type_name(node.to_type)
        if isinstance(target, T.VectorType) and isinstance(node.expr, c_ast.ExprList):
            return self.vector_literal(target, node.expr, loc)
        operand = self.rvalue(node.expr)
        src = operand.type
        if isinstance(target, T.VoidType):
            return ir.Cast(target, operand, loc=loc)
        if isinstance(target, T.VectorType):
            if isinstance(src, T.VectorType):
                if src == target:
                    return ir.Cast(target, operand, loc=loc)
                self.fail(loc, f"explicit cast from '{src}' to '{target}' is not allowed "
                               f"between vector types; use convert_{target}() or as_{target}()")
            if not _is_arith(src):
                self.fail(loc, f"cannot cast '{src}' to '{target}'")
            return ir.Cast(target, operand, loc=loc)
        if isinstance(src, T.VectorType):
            self.fail(loc, f"cannot cast vector '{src}' to '{target}'")
        if isinstance(target, T.PointerType):
            if isinstance(src, T.PointerType):
                if src.space != target.space and not _is_null_constant(operand):
                    self.fail(loc, f"casting '{src}' to '{target}' changes the address space "
                                   f"({src.space.spelling} to {target.space.spelling})")
                return ir.Cast(target, operand, loc=loc)
            if _is_integer(src):
                return ir.Cast(target, operand, loc=loc)
            self.fail(loc, f"cannot cast '{src}' to '{target}'")
        if isinstance(target, (T.ScalarType, T.EnumType)):
            if isinstance(src, T.PointerType):
                if isinstance(target, T.ScalarType) and target.is_float:
                    self.fail(loc, f"cannot cast pointer '{src}' to '{target}'")
                return ir.Cast(target, operand, loc=loc)
            if not _is_arith(src):
                self.fail(loc, f"cannot cast '{src}' to '{target}'")
            return ir.Cast(target, operand, loc=loc)
        if target == src:
            return ir.Cast(target, operand, loc=loc)
        self.fail(loc, f"cannot cast '{src}' to '{target}'")

    def vector_literal(self, vt: T.VectorType, args: c_ast.ExprList, loc: Loc) -> ir.Expr:
        if args.exprs:
            loc = self.operator_loc(args.exprs[0], "(", loc)
        elems: list[ir.Expr] = []
        count = 0
        for arg in args.exprs:
            e = self.rvalue(arg)
            if isinstance(e.type, T.VectorType):
                if e.type.elem != vt.elem:
                    self.fail(e.loc, f"vector literal of '{vt}' cannot take '{e.type}' "
                                     f"(expected '{vt.elem}' components)")
                count += e.type.width
                elems.append(e)
            elif _is_arith(e.type):
                count += 1
                elems.append(self.convert(e, vt.elem, "vector literal component"))
            else:
                self.fail(e.loc, f"vector literal of '{vt}' cannot take '{e.type}'")
        if len(elems) == 1 and count == 1:
            return ir.VectorLiteral(vt, tuple(elems), loc=loc)
        if count != vt.width:
            detail = "too many" if count > vt.width else "too few"
            self.fail(loc, f"{detail} components in vector literal of '{vt}': expected "
                           f"{vt.width}, got {count}")
        return ir.VectorLiteral(vt, tuple(elems), loc=loc)

    # ------------------------------------------------------------ calls

    def expr_FuncCall(self, node: c_ast.FuncCall) -> ir.Expr:
        loc = self.loc(node)
        arg_nodes: list[c_ast.Node] = list(node.args.exprs) if node.args is not None else []
        if not isinstance(node.name, c_ast.ID) or (
                self.lookup(node.name.name) is not None
                and self.lookup(node.name.name).kind == "var"):  # type: ignore[union-attr]
            callee = self.expr(node.name)
            at = self.operator_loc(arg_nodes[0], "(", loc) if arg_nodes else loc
            self.fail(at, f"called object of type '{callee.type}' is not a function")
        name: str = node.name.name
        if name == "__ppcl_vec_step":
            return self._vec_step(arg_nodes, loc)
        sym = self.lookup(name)
        if sym is not None and sym.kind == "func":
            return self._user_call(sym, arg_nodes, loc)
        builtins = _builtins()
        if not builtins.is_builtin(name):
            self.fail(loc, f"implicit declaration of function '{name}' is not allowed in "
                           "OpenCL C")
        return self._builtin_call(builtins, name, arg_nodes, loc)

    def _vec_step(self, args: list[c_ast.Node], loc: Loc) -> ir.Expr:
        if len(args) != 1 or not (isinstance(args[0], c_ast.UnaryOp) and args[0].op == "sizeof"):
            self.fail(loc, "vec_step takes one type or expression")
        inner = args[0].expr
        operand: ir.Expr | None = None
        if isinstance(inner, c_ast.Typename):
            t = self.type_name(inner)
        else:
            operand = self.expr(inner)
            t = operand.type
        if isinstance(t, T.VectorType):
            value = t.storage_width
        elif isinstance(t, (T.ScalarType, T.EnumType)):
            value = 1
        else:
            self.fail(loc, f"vec_step requires a scalar or vector type, not '{t}'")
        return ir.VecStep(T.INT, t, value, operand, loc=loc)

    def _user_call(self, sym: Symbol, arg_nodes: list[c_ast.Node], loc: Loc) -> ir.Expr:
        ftype = sym.type
        assert isinstance(ftype, T.FunctionType)
        if sym.is_kernel:
            self.note_kernel_call(sym, loc)
        if len(arg_nodes) != len(ftype.params):
            at = loc
            if len(arg_nodes) > len(ftype.params):
                at = self.loc(_first(arg_nodes[len(ftype.params)]))
            elif arg_nodes and self.tokens is not None:
                at = self.token_loc(arg_nodes[0], self.tokens.closing_paren(
                    _first(arg_nodes[0]).coord), loc)
            self.fail(at, f"function '{sym.name}' takes {len(ftype.params)} argument"
                           f"{'s' if len(ftype.params) != 1 else ''}, but {len(arg_nodes)} "
                           "were given")
        args = []
        for i, (arg_node, param) in enumerate(zip(arg_nodes, ftype.params)):
            arg = self.rvalue(arg_node)
            args.append(self.convert(arg, param, f"argument {i + 1} of '{sym.name}'"))
        if self.func is not None:
            self.func.calls.append((sym.name, loc))
        return ir.Call(ftype.ret, sym.name, tuple(args), loc=loc)

    def note_kernel_call(self, sym: Symbol, loc: Loc) -> None:
        """Calling a kernel from a kernel is allowed by OpenCL C 1.2 (it is a plain call)."""

    def _builtin_call(self, builtins: Any, name: str, arg_nodes: list[c_ast.Node],
                      loc: Loc) -> ir.Expr:
        saved = self.allow_strings
        self.allow_strings = name == "printf"
        try:
            args = [self.rvalue(a) for a in arg_nodes]
        finally:
            self.allow_strings = saved
        literal_flags = [isinstance(a, ir.IntLit) and a.text is not None and
                         not a.text.isidentifier() for a in args]
        try:
            overload = builtins.resolve(name, [a.type for a in args], literal_flags)
        except builtins.BuiltinError as exc:
            self.fail(loc, exc.message)
        params = list(overload.params)
        converted: list[ir.Expr] = []
        for i, arg in enumerate(args):
            if i < len(params):
                converted.append(self._builtin_arg(arg, params[i], name, i))
            else:
                converted.append(arg)
        return ir.Call(overload.ret, name, tuple(converted), builtin=overload.key, loc=loc)

    def _builtin_arg(self, arg: ir.Expr, param: T.Type, name: str, index: int) -> ir.Expr:
        if arg.type == param:
            return arg
        if isinstance(arg.type, T.PointerType) and isinstance(param, T.PointerType) \
                and arg.type.pointee == param.pointee:
            return arg  # only qualifiers differ
        if isinstance(arg, ir.StringLit):
            return arg
        return self.convert(arg, param, f"argument {index + 1} of '{name}'")


def _first(node: c_ast.Node) -> c_ast.Node:
    return _first_coord_node(node)


def _looks_float(text: str) -> bool:
    lowered = text.lower()
    if lowered.startswith("0x"):
        return "p" in lowered
    return "." in lowered or "e" in lowered


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8,
            "f": 12, "v": 11, "?": 63}


def _char_value(text: str, loc: Loc, sema: ExprSema) -> int:
    body = text[1:-1]
    if not body.startswith("\\"):
        if len(body) != 1:
            sema.fail(loc, f"invalid character literal {text}")
        return ord(body)
    rest = body[1:]
    if rest.startswith("x"):
        return int(rest[1:], 16) & 0xFF
    if rest and rest[0] in "01234567":
        return int(rest, 8) & 0xFF
    if rest in _ESCAPES:
        return _ESCAPES[rest]
    sema.fail(loc, f"unknown escape sequence in {text}")
