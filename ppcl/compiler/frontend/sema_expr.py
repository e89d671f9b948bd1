"""Semantic analysis, part 2b: compound expressions, kind by kind.

Operators (unary, binary, assignment, conditional, comma), subscripts, member access and vector
swizzles, casts and vector literals, and calls of user functions and builtins. Every expression
is typed by OpenCL's rules (``ir.conversions``); every implicit conversion becomes an explicit
``Cast(implicit=True)``. What these rules stand on (decay, implicit conversion, lvalues, the leaf
expressions) is ``ValueSema`` in sema_values.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod
from typing import Any

from pycparser import c_ast

from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.frontend.consteval import fold
from ppcl.compiler.frontend.printf_format import (
    FormatError,
    canonical_literal,
    check_printf,
    decode,
)
from ppcl.compiler.frontend.sema_types import Symbol, _first_coord_node
from ppcl.compiler.frontend.sema_values import (
    ValueSema,
    builtins_module,
    is_arith,
    is_integer,
    is_null_constant,
    is_scalar_value,
    string_length,
)
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


def _is_void_pointer(t: T.Type) -> bool:
    return isinstance(t, T.PointerType) and isinstance(t.pointee, T.VoidType)


def type_str(t: T.Type) -> str:
    return str(t)


# OpenCL C 2.0 work-item functions, with what OpenCL C 1.2 writes instead
_OPENCL_2_WORK_ITEM = {
    "get_local_linear_id": "(get_local_id(2) * get_local_size(1) + get_local_id(1)) * "
                           "get_local_size(0) + get_local_id(0)",
    "get_global_linear_id": "the same sum over get_global_id(d) - get_global_offset(d) and "
                            "get_global_size(d)",
    "get_enqueued_local_size": "get_local_size (every work-group of an OpenCL 1.2 launch has "
                               "the same size)",
}
# name prefixes of the other OpenCL C 2.0 families: work-group collectives, sub-groups, C11
# atomics, generic address space casts, device-side enqueue, pipes
_OPENCL_2_PREFIXES = (
    "work_group_", "sub_group_", "get_sub_group_", "get_max_sub_group_size",
    "get_num_sub_groups", "get_enqueued_num_sub_groups", "atomic_fetch_", "atomic_load",
    "atomic_store", "atomic_exchange", "atomic_compare_exchange_", "atomic_init",
    "atomic_flag_", "atomic_work_item_fence", "enqueue_kernel", "enqueue_marker",
    "get_kernel_", "read_pipe", "write_pipe",
    "reserve_read_pipe", "reserve_write_pipe", "commit_read_pipe", "commit_write_pipe",
    "get_pipe_",
)


def opencl_2_function(name: str) -> str | None:
    """Why a call of ``name`` fails when it is an OpenCL C 2.0 builtin, else None: ppcl
    implements OpenCL C 1.2 (``-cl-std=CL2.0`` only sets ``__OPENCL_C_VERSION__``)."""
    head = f"'{name}' is an OpenCL C 2.0 function; ppcl implements OpenCL C 1.2"
    instead = _OPENCL_2_WORK_ITEM.get(name)
    if instead is not None:
        return f"{head} (use {instead})"
    if name.startswith(_OPENCL_2_PREFIXES) or name in ("to_global", "to_local", "to_private"):
        return head
    return None


class ExprSema(ValueSema):
    """Typing of compound expressions."""

    # ------------------------------------------------------------ unary

    def expr_UnaryOp(self, node: c_ast.UnaryOp) -> ir.Expr:
        op = node.op
        loc = self.loc(node)
        if op == "sizeof":
            return self._sizeof(node, loc)
        if op == "&":
            if isinstance(node.expr, c_ast.ArrayRef):
                base, index, sub_loc = self._subscript_operands(node.expr)
                if _is_void_pointer(base.type):
                    return self._void_pointer_offset("+", base, index, sub_loc, "subscript of")
                operand = self._subscript(base, index, sub_loc)
            else:
                operand = self.expr(node.expr)
            if isinstance(operand, ir.Swizzle) or (isinstance(operand, ir.Index) and
                                                   isinstance(operand.base.type, T.VectorType)):
                self.fail(loc, "cannot take the address of a vector component selection")
            if not self.is_lvalue(operand):
                self.fail(loc, "cannot take the address of an rvalue")
            pointer = T.PointerType(operand.type, self.lvalue_space(operand),
                                    self.is_const_lvalue(operand))
            return ir.Unary(pointer, "&", operand, loc=loc)
        if op in ("++", "--", "p++", "p--"):
            operand = self.expr(node.expr)
            self.check_modifiable(operand, f"'{op.lstrip('p')}'")
            if not (is_arith(operand.type) or isinstance(operand.type, T.PointerType)):
                self.fail(loc, f"cannot increment or decrement a value of type '{operand.type}'")
            if _is_void_pointer(operand.type):
                self.fail(loc, f"'{op.lstrip('p')}' on a 'void *' pointer: write 'p = p "
                               f"{op.strip('p')[0]} 1' (GNU C's byte arithmetic) or use a 'char *'")
            if isinstance(operand.type, T.VectorType) and operand.type.elem.is_float:
                self.fail(loc, f"'{op.lstrip('p')}' does not apply to the floating vector type "
                               f"'{operand.type}' (OpenCL C allows it on integer vectors); "
                               f"write '{'+=' if '+' in op else '-='} 1'")
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
            if not is_arith(t):
                self.fail(loc, f"invalid argument type '{t}' to unary '{op}'")
            promoted = conv.promote(t)
            return ir.Unary(promoted, op, self.implicit(operand, promoted), loc=loc)
        if op == "~":
            if not is_integer(t):
                self.fail(loc, f"invalid argument type '{t}' to unary '~' (integer required)")
            promoted = conv.promote(t)
            return ir.Unary(promoted, op, self.implicit(operand, promoted), loc=loc)
        if op == "!":
            if isinstance(t, T.VectorType):
                return ir.Unary(conv.comparison_result(t), op, operand, loc=loc)
            if not is_scalar_value(t):
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
            if isinstance(operand, ir.StringLit):
                t = T.ArrayType(T.CHAR, string_length(operand.value) + 1)
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
        if not is_arith(lt) or not is_arith(rt):
            self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")
        if op in _LOGICAL_OPS:
            if isinstance(lt, T.VectorType) or isinstance(rt, T.VectorType):
                common = self._common(op, lhs, rhs, loc)
                return ir.Binary(conv.comparison_result(common), op, self.implicit(lhs, common),
                                 self.implicit(rhs, common), loc=loc)
            return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
        if op in _SHIFT_OPS:
            if not is_integer(lt) or not is_integer(rt):
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
        if (op == "%" or op in _BITWISE_OPS) and not is_integer(common):
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
                if not is_scalar_value(lt) or not is_scalar_value(rt):
                    self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}')")
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if op in ("==", "!=") and (is_null_constant(lhs) or is_null_constant(rhs)):
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if isinstance(lt, T.PointerType) and isinstance(rt, T.PointerType):
                if lt.space != rt.space:
                    self.fail(loc, f"comparison of pointers to different address spaces "
                                   f"({lt.space.spelling} and {rt.space.spelling})")
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            if op in ("==", "!=") and (is_null_constant(lhs) or is_null_constant(rhs)):
                return ir.Binary(T.INT, op, lhs, rhs, loc=loc)
            self.fail(loc, f"comparison between pointer and non-pointer ('{lt}' and '{rt}')")
        if op == "+" or op == "-":
            if isinstance(lt, T.PointerType) and isinstance(rt, T.PointerType):
                if op == "+":
                    self.fail(loc, f"invalid operands to binary '+' ('{lt}' and '{rt}')")
                if lt.pointee != rt.pointee or lt.space != rt.space:
                    self.fail(loc, f"subtraction of incompatible pointers ('{lt}' and '{rt}')")
                if _is_void_pointer(lt):
                    lhs = self._void_as_bytes(lhs, loc, "arithmetic on")
                    rhs = ir.Cast(lhs.type, rhs, loc=rhs.loc)
                return ir.Binary(T.PTRDIFF_T, op, lhs, rhs, loc=loc)
            pointer, other = (lhs, rhs) if isinstance(lt, T.PointerType) else (rhs, lhs)
            if op == "-" and pointer is rhs:
                self.fail(loc, f"invalid operands to binary '-' ('{lt}' and '{rt}')")
            if not (isinstance(other.type, (T.ScalarType, T.EnumType)) and is_integer(other.type)):
                self.fail(loc, f"invalid operands to binary '{op}' ('{lt}' and '{rt}'): pointer "
                               "arithmetic needs an integer offset")
            assert isinstance(pointer.type, T.PointerType)
            if _is_void_pointer(pointer.type):
                return self._void_pointer_offset(op, pointer, other, loc, "arithmetic on")
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
            if _is_void_pointer(target.type):
                self.fail(loc, f"'{op}' on a 'void *' pointer: write 'p = p {binop} n' (GNU C's "
                               "byte arithmetic) or use a 'char *'")
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
        if not is_scalar_value(cond.type):
            self.fail(cond.loc, f"condition must have scalar type, not '{cond.type}'")
        tt, ot = then.type, otherwise.type
        if is_arith(tt) and is_arith(ot):
            common = conv.usual_arithmetic(tt, ot)
            if common is None:
                self.fail(loc, f"incompatible operand types ('{tt}' and '{ot}') in '?:'")
            return ir.Conditional(common, cond, self.implicit(then, common),
                                  self.implicit(otherwise, common), loc=loc)
        if isinstance(tt, T.PointerType) or isinstance(ot, T.PointerType):
            if isinstance(tt, T.PointerType) and is_null_constant(otherwise):
                return ir.Conditional(tt, cond, then, self.implicit(otherwise, tt), loc=loc)
            if isinstance(ot, T.PointerType) and is_null_constant(then):
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

    def _void_as_bytes(self, pointer: ir.Expr, loc: Loc, what: str) -> ir.Expr:
        """A ``void *`` operand of arithmetic as a ``char *`` to the same place. GNU C counts
        such arithmetic in bytes, and clang accepts it with a warning, so published kernels
        write ``(__global void *)p + off``; ppcl warns the same way."""
        assert isinstance(pointer.type, T.PointerType)
        self.warning(loc, f"{what} a 'void *' pointer is a GNU extension: the offset counts "
                          "bytes")
        as_bytes = dataclasses.replace(pointer.type, pointee=T.CHAR)
        return ir.Cast(as_bytes, pointer, loc=pointer.loc)

    def _void_pointer_offset(self, op: str, pointer: ir.Expr, offset: ir.Expr, loc: Loc,
                             what: str) -> ir.Expr:
        """``pointer op offset`` for a ``void *`` pointer: ``offset`` bytes on, a ``void *``."""
        as_bytes = self._void_as_bytes(pointer, loc, what)
        moved = ir.Binary(as_bytes.type, op, as_bytes, offset, loc=loc)
        return ir.Cast(pointer.type, moved, loc=loc)

    def _subscript_operands(self, node: c_ast.ArrayRef) -> tuple[ir.Expr, ir.Expr, Loc]:
        loc = self.operator_loc(node.subscript, "[", self.loc(node))
        base = self.expr(node.name)
        index = self.rvalue(node.subscript)
        if (isinstance(index.type, T.PointerType)
                and isinstance(base.type, (T.ScalarType, T.EnumType)) and is_integer(base.type)):
            base, index = index, base  # C's subscript is symmetric: i[p] is p[i]
        return base, index, loc

    def expr_ArrayRef(self, node: c_ast.ArrayRef) -> ir.Expr:
        return self._subscript(*self._subscript_operands(node))

    def _subscript(self, base: ir.Expr, index: ir.Expr, loc: Loc) -> ir.Expr:
        if isinstance(base.type, T.ArrayType):
            elem = base.type.elem
        elif isinstance(base.type, T.PointerType):
            elem = base.type.pointee
            if isinstance(elem, T.VoidType):
                self.fail(loc, "subscript of a 'void *' pointer (GNU C allows only its "
                               "address, '&p[i]', counted in bytes)")
        elif isinstance(base.type, T.VectorType):
            return self.vector_subscript(base, index, loc)
        else:
            self.fail(loc, f"subscripted value of type '{base.type}' is not an array or pointer")
        if not (isinstance(index.type, (T.ScalarType, T.EnumType)) and is_integer(index.type)):
            self.fail(index.loc, f"array subscript is not an integer ('{index.type}')")
        return ir.Index(elem, base, index, loc=loc)

    def vector_subscript(self, base: ir.Expr, index: ir.Expr, loc: Loc) -> ir.Expr:
        """``v[i]`` as clang accepts it: a constant index is the component ``.si``, any other
        index a subscript of the vector (an lvalue when ``v`` is)."""
        vt = base.type
        assert isinstance(vt, T.VectorType)
        if not (isinstance(index.type, (T.ScalarType, T.EnumType)) and is_integer(index.type)):
            self.fail(index.loc, f"vector subscript is not an integer ('{index.type}')")
        value = fold(index)
        selected = base
        if isinstance(base, ir.Swizzle) and isinstance(base.base.type, T.VectorType):
            selected = base.base  # v.zw[i] subscripts v through the selection
        if value is not None:
            if not 0 <= value < vt.width:
                self.fail(index.loc, f"vector subscript {value} is out of range for '{vt}' "
                                     f"(0 ... {vt.width - 1})")
            if selected is not base:
                assert isinstance(base, ir.Swizzle)
                value = base.indices[value]
            return ir.Swizzle(vt.elem, selected, (value,), f"s{value:x}", loc=base.loc)
        if selected is not base:
            assert isinstance(base, ir.Swizzle)
            indices = base.indices
            step = indices[1] - indices[0]
            if step != 0 and all(b - a == step for a, b in zip(indices, indices[1:])):
                # .hi, .odd, .zw, .s3210: the components form a progression; an lvalue still
                start = ir.IntLit(T.INT, indices[0], loc=index.loc)
                scaled = self.binary("*", ir.IntLit(T.INT, step, loc=index.loc), index, loc)
                return ir.Index(vt.elem, selected, self.binary("+", start, scaled, loc), loc=loc)
        return ir.Index(vt.elem, base, index, loc=loc)

    @abstractmethod
    def init_list(self, node: c_ast.InitList, t: T.Type, loc: Loc) -> ir.Expr:
        """A brace initializer of type ``t``: declarations' rules, ``Sema`` (sema.py)."""

    def expr_CompoundLiteral(self, node: c_ast.CompoundLiteral) -> ir.Expr:
        """``(S){1, 2.0f}``: a C99 compound literal of a struct, union, vector or scalar type,
        as the explicit cast of its brace list (printed back the same way)."""
        loc = self.loc(node)
        t = self.type_name(node.type)
        if isinstance(t, T.ArrayType):
            self.fail(loc, "compound literals of array type '(T[]){...}' are not supported by "
                           "ppcl; initialize a variable instead")
        if not isinstance(node.init, c_ast.InitList):
            self.fail(loc, "a compound literal needs a braced initializer list")
        return ir.Cast(t, self.init_list(node.init, t, loc), loc=loc)

    def expr_Compound(self, node: c_ast.Compound) -> ir.Expr:
        self.fail(self.loc(node), "statement expressions '({ ... })' used as a value are a GNU "
                                  "extension ppcl does not support")

    def expr_StructRef(self, node: c_ast.StructRef) -> ir.Expr:
        loc = self.operator_loc(node.field, node.type, self.loc(node))
        base = self.expr(node.name)
        name: str = node.field.name
        if node.type == "->":
            pointer = self.decay(base)
            if isinstance(pointer.type, T.PointerType) \
                    and isinstance(pointer.type.pointee, T.VectorType):
                # clang takes 'p->xy' on a pointer to a vector as '(*p).xy'
                target = ir.Unary(pointer.type.pointee, "*", pointer, loc=loc)
                return self.swizzle(target, name, loc)
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
        path = record.member_path(name)
        if path is None or T.is_anonymous_member(path[-1]):
            shown = self.typedef_names.get(record.name, str(record))
            self.fail(self.loc(node.field), f"no member named '{name}' in '{shown}'")
        # a member of an anonymous struct or union is reached through the generated member
        expr = base
        for step, member in enumerate(path):
            expr = ir.Member(member.type, expr, member.name, arrow and step == 0, loc=loc)
        return expr

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
        if isinstance(base, ir.Swizzle):  # v.odd.s01 is one selection from v, read or written
            indices = [base.indices[i] for i in indices]
            spelling = "s" + "".join(f"{i:x}" for i in indices)
            base = base.base
        return ir.Swizzle(result, base, tuple(indices), spelling, loc=base.loc)

    # ------------------------------------------------------------ casts and vector literals

    def expr_Cast(self, node: c_ast.Cast) -> ir.Expr:
        loc = self.loc(node)
        target = self.type_name(node.to_type)
        if isinstance(target, T.VectorType) and isinstance(node.expr, c_ast.ExprList):
            return self.vector_literal(target, node.expr, loc)
        if target == T.HALF and not self.half_values:
            self.fail_half(loc, "a conversion to 'half'", "store a float as half with "
                                                          "vstore_half()")
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
            if not is_arith(src):
                self.fail(loc, f"cannot cast '{src}' to '{target}'")
            return ir.Cast(target, operand, loc=loc)
        if isinstance(src, T.VectorType):
            self.fail(loc, f"cannot cast vector '{src}' to '{target}'")
        if isinstance(target, T.PointerType):
            if isinstance(src, T.PointerType):
                if src.space != target.space and not is_null_constant(operand):
                    self.fail(loc, f"casting '{src}' to '{target}' changes the address space "
                                   f"({src.space.spelling} to {target.space.spelling})")
                return ir.Cast(target, operand, loc=loc)
            if is_integer(src):
                return ir.Cast(target, operand, loc=loc)
            self.fail(loc, f"cannot cast '{src}' to '{target}'")
        if isinstance(target, (T.ScalarType, T.EnumType)):
            if isinstance(src, T.PointerType):
                if isinstance(target, T.ScalarType) and target.is_float:
                    self.fail(loc, f"cannot cast pointer '{src}' to '{target}'")
                return ir.Cast(target, operand, loc=loc)
            if not is_arith(src):
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
            elif is_arith(e.type):
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
        if name == "__ppcl_alignof":
            return self._alignof(arg_nodes, loc)
        if name == "__ppcl_offsetof":
            return self._offsetof(arg_nodes, loc)
        sym = self.lookup(name)
        if sym is not None and sym.kind == "func":
            return self._user_call(sym, arg_nodes, loc)
        if sym is not None and sym.kind == "overloads":
            return self.overloaded_call(name, arg_nodes, loc)
        if name == "__builtin_expect":  # a program's own function of that name comes first
            return self._builtin_expect(arg_nodes, loc)
        builtins = builtins_module()
        if not builtins.is_builtin(name):
            newer = opencl_2_function(name)
            if newer is not None:
                self.fail(loc, newer)
            self.fail(loc, f"implicit declaration of function '{name}' is not allowed in "
                           "OpenCL C")
        return self._builtin_call(builtins, name, arg_nodes, loc)

    def _builtin_expect(self, args: list[c_ast.Node], loc: Loc) -> ir.Expr:
        """clang's ``long __builtin_expect(long value, long expected)``: a branch hint whose
        value is its first argument converted to ``long``; the hint itself is dropped."""
        if len(args) != 2:
            self.fail(loc, f"__builtin_expect takes 2 arguments, got {len(args)}")
        value, expected = (self.rvalue(a) for a in args)
        for arg in (value, expected):
            if not (isinstance(arg.type, T.ScalarType | T.EnumType) and is_integer(arg.type)):
                self.fail(arg.loc, f"__builtin_expect takes integer arguments, not "
                                   f"'{arg.type}'")
        return self.convert(value, T.LONG, "argument 1 of '__builtin_expect'")

    def _alignof(self, args: list[c_ast.Node], loc: Loc) -> ir.Expr:
        """``__alignof__(T)``, ``_Alignof(T)`` or of an expression: the alignment in bytes
        that OpenCL's layout gives the type (a ``size_t`` constant)."""
        if len(args) != 1 or not (isinstance(args[0], c_ast.UnaryOp) and args[0].op == "sizeof"):
            self.fail(loc, "__alignof__ takes one type or expression")
        inner = args[0].expr
        t = self.type_name(inner) if isinstance(inner, c_ast.Typename) else self.expr(inner).type
        if isinstance(t, T.VoidType | T.FunctionType):
            self.fail(loc, f"invalid application of '__alignof__' to '{t}'")
        try:
            return ir.IntLit(T.ULONG, t.align, loc=loc)
        except TypeError:
            self.fail(loc, f"invalid application of '__alignof__' to an incomplete type '{t}'")

    def _offsetof(self, args: list[c_ast.Node], loc: Loc) -> ir.Expr:
        """``__builtin_offsetof(T, member)``, the member a name, ``a.b`` or ``a[2]``: its byte
        offset in OpenCL's layout of ``T`` (a ``size_t`` constant)."""
        if len(args) != 2 or not (isinstance(args[0], c_ast.UnaryOp) and
                                  isinstance(args[0].expr, c_ast.Typename)):
            self.fail(loc, "__builtin_offsetof takes a type and a member")
        offset, _ = self._member_offset(self.type_name(args[0].expr), args[1], loc)
        return ir.IntLit(T.ULONG, offset, loc=loc)

    def _member_offset(self, t: T.Type, node: c_ast.Node, loc: Loc) -> tuple[int, T.Type]:
        """(offset, type) of the member designated by ``node`` inside a ``t``."""
        if isinstance(node, c_ast.ArrayRef):
            offset, array = self._member_offset(t, node.name, loc)
            index = fold(self.rvalue(node.subscript))
            if not isinstance(array, T.ArrayType) or index is None:
                self.fail(loc, "__builtin_offsetof subscripts an array by a constant")
            return offset + index * array.elem.size, array.elem
        if isinstance(node, c_ast.StructRef) and node.type == ".":
            offset, record = self._member_offset(t, node.name, loc)
            inner, member = self._member_offset(record, node.field, loc)
            return offset + inner, member
        if not isinstance(node, c_ast.ID) or not isinstance(t, T.StructType):
            self.fail(loc, f"__builtin_offsetof needs a member of a struct or union, not of "
                           f"'{t}'")
        offsets, _, _ = t.layout()
        for f, offset in zip(t.fields, offsets):
            if f.name == node.name:
                return offset, f.type
        self.fail(loc, f"no member named '{node.name}' in '{self.typedef_names.get(t.name, t)}'")

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
        return self._call_with(sym, [self.rvalue(a) for a in arg_nodes], sym.name, loc)

    def _call_with(self, sym: Symbol, values: list[ir.Expr], shown: str, loc: Loc) -> ir.Expr:
        ftype = sym.type
        assert isinstance(ftype, T.FunctionType)
        args = []
        for i, (arg, param) in enumerate(zip(values, ftype.params)):
            args.append(self.convert(arg, param, f"argument {i + 1} of '{shown}'"))
        if self.func is not None:
            self.func.calls.append((sym.name, loc))
        return ir.Call(ftype.ret, sym.name, tuple(args), loc=loc)

    def overloaded_call(self, name: str, arg_nodes: list[c_ast.Node], loc: Loc) -> ir.Expr:
        """A call of an ``overloadable`` function: the overload whose parameters the arguments
        convert to best, by clang's rules (exact, promotion, conversion, scalar to vector)."""
        args = [self.rvalue(a) for a in arg_nodes]
        candidates = self.overload_sets[name]
        viable: list[tuple[Symbol, tuple[int, ...]]] = []
        for sym in candidates:
            ranks = _argument_ranks(sym.type, args)
            if ranks is not None:
                viable.append((sym, ranks))
        shown = ", ".join(str(a.type) for a in args)
        if not viable:
            self.fail(loc, f"no matching function for call to '{name}({shown})'; candidates: "
                           f"{_signatures(name, candidates)}")
        best = conv.best_ranked(viable)
        if len(best) > 1:
            self.fail(loc, f"call to '{name}({shown})' is ambiguous; candidates: "
                           f"{_signatures(name, [sym for sym, _ in best])}")
        return self._call_with(best[0][0], args, name, loc)

    def note_kernel_call(self, sym: Symbol, loc: Loc) -> None:
        """Calling a kernel from a kernel is allowed by OpenCL C 1.2 (it is a plain call)."""

    def _builtin_call(self, builtins: Any, name: str, arg_nodes: list[c_ast.Node],
                      loc: Loc) -> ir.Expr:
        args = [self.rvalue(a) for a in arg_nodes]
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
        if name == "printf" and converted:
            converted = self._checked_printf(converted, loc)
        return ir.Call(overload.ret, name, tuple(converted), builtin=overload.key, loc=loc)

    def _checked_printf(self, args: list[ir.Expr], loc: Loc) -> list[ir.Expr]:
        """The arguments of a ``printf`` call checked against its format, the format spelled
        as it was checked (``printf_format.py``); a mismatch is an error of the build, except an
        integer read at another width or signedness, which is converted with a warning."""
        def error(at: Loc, message: str) -> None:
            self.error(at if at.line > 0 else loc, message)

        def warning(at: Loc, message: str) -> None:
            self.warning(at if at.line > 0 else loc, message)

        fmt = args[0]
        while isinstance(fmt, ir.Cast):
            fmt = fmt.operand
        readings: dict[int, str] = {}
        canonical = check_printf(fmt, args[1:], loc, error, warning, readings)
        if canonical is None or not isinstance(fmt, ir.StringLit):
            return args
        spelled: list[ir.Expr] = [dataclasses.replace(fmt, value=canonical)]
        for i, arg in enumerate(args[1:]):
            if i in readings:
                arg = ir.Cast(T.ScalarType(readings[i]), arg, loc=arg.loc)
            if isinstance(arg, ir.StringLit):
                try:
                    arg = dataclasses.replace(arg, value=canonical_literal(decode(arg.value)[0]))
                except FormatError as exc:
                    error(arg.loc, str(exc))
            spelled.append(arg)
        return spelled

    def _builtin_arg(self, arg: ir.Expr, param: T.Type, name: str, index: int) -> ir.Expr:
        if arg.type == param:
            return arg
        if isinstance(arg.type, T.PointerType) and isinstance(param, T.PointerType) \
                and arg.type.pointee == param.pointee:
            return arg  # only qualifiers differ
        if isinstance(arg, ir.StringLit):
            return arg
        return self.convert(arg, param, f"argument {index + 1} of '{name}'")



def _argument_ranks(ftype: T.Type, args: list[ir.Expr]) -> tuple[int, ...] | None:
    """The conversion rank of each argument to its parameter, or None when not callable."""
    assert isinstance(ftype, T.FunctionType)
    if len(args) != len(ftype.params):
        return None
    ranks: list[int] = []
    for arg, param in zip(args, ftype.params):
        if isinstance(param, T.PointerType) and is_null_constant(arg):
            rank: int | None = conv.CONVERSION
        else:
            rank = conv.implicit_conversion_rank(arg.type, param)
        if rank is None:
            return None
        ranks.append(rank)
    return tuple(ranks)


def _signatures(name: str, symbols: list[Symbol]) -> str:
    """``float f(float); int f(int)``: the overloads as a message lists them."""
    spelled = []
    for sym in symbols:
        assert isinstance(sym.type, T.FunctionType)
        spelled.append(f"{sym.type.ret} {name}({', '.join(str(p) for p in sym.type.params)})")
    return "; ".join(spelled)


def _first(node: c_ast.Node) -> c_ast.Node:
    return _first_coord_node(node)
