"""IR verifier: the invariants every pass may rely on and must preserve.

``verify(module)`` returns one message per violated invariant, each starting with the location
of the offending node (``file:line:col: in 'function': ...``); ``check(module)`` raises
``VerificationError`` carrying them all. Tests run the verifier after every pass (see
``compiler.passes``).

The invariants follow the front end's conventions:

* every implicit conversion is an explicit ``Cast``, so arithmetic and comparison operands have
  identical types; shifts keep the type of their left operand; pointer arithmetic and pointer
  comparisons take operands as they are;
* compound assignments (``a op= b``) keep the value in the operation's type: ``b`` is
  converted to the common type of ``a`` and ``b`` (to the promoted type of ``a`` for shifts),
  never back to the type of ``a``;
* conversions between pointers that differ only in qualifiers (``const``, ``volatile``,
  ``restrict``) are no-ops and are not materialized, so pointer types are compared without
  them.

``verify_barriers_uniform`` is separate: a barrier under control that the uniformity analysis
cannot prove uniform is not an error (work-group formation runs it in masked lock step); it
lists them as information.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from ppcl.compiler.analysis.uniformity import Uniformity
from ppcl.compiler.diagnostics import Loc
from ppcl.compiler.ir import builtins
from ppcl.compiler.ir import conversions as conv
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.visit import Node, children

__all__ = ["VerificationError", "check", "verify", "verify_barriers_uniform"]

_ARITH_OPS = {"+", "-", "*", "/", "%", "&", "|", "^"}
_SHIFT_OPS = {"<<", ">>"}
_COMPARE_OPS = {"<", ">", "<=", ">=", "==", "!="}
_LOGICAL_OPS = {"&&", "||"}
_LOOPS = (ir.For, ir.While, ir.DoWhile)
_BARRIERS = ("barrier", "work_group_barrier")
_SPLAT_SPELLINGS = ("lo", "hi", "even", "odd")


class VerificationError(Exception):
    """The IR breaks invariants; ``problems`` lists every one, located."""

    def __init__(self, problems: list[str], context: str = ""):
        self.problems = list(problems)
        self.context = context
        head = f"invalid IR{' ' + context if context else ''}: {len(problems)} problem" \
               f"{'s' if len(problems) != 1 else ''}"
        super().__init__("\n".join([head, *("  " + p for p in problems)]))


def check(module: ir.Module, context: str = "", *, unique_names: bool = True) -> None:
    """Raise ``VerificationError`` when ``module`` breaks any invariant."""
    problems = verify(module, unique_names=unique_names)
    if problems:
        raise VerificationError(problems, context)


def verify(module: ir.Module, *, unique_names: bool = True) -> list[str]:
    """Every violated invariant of ``module``, located; empty when the IR is valid.

    ``unique_names``: a variable name is declared once per function, as the front end leaves
    it. Work-group formation declares a recomputed value again in each region that reads it
    and copies the code of interchanged loops, so formed kernels are checked without it."""
    return _Verifier(module, unique_names).run()


# ---------------------------------------------------------------- type comparison


def _unqualified(t: T.Type) -> T.Type:
    if isinstance(t, T.PointerType):
        return T.PointerType(t.pointee, t.space)
    return t


def same_type(a: T.Type, b: T.Type) -> bool:
    """Equal types, pointers compared without the qualifiers of what they point at (the front
    end leaves qualifier-only pointer conversions implicit)."""
    return _unqualified(a) == _unqualified(b)


def _is_integer_scalar(t: T.Type) -> bool:
    return isinstance(t, T.EnumType) or (isinstance(t, T.ScalarType) and t.is_integer)


def _is_condition_type(t: T.Type) -> bool:
    return isinstance(t, (T.ScalarType, T.EnumType, T.PointerType))


# ---------------------------------------------------------------- the verifier


@dataclasses.dataclass
class _Context:
    function: ir.Function
    scopes: list[dict[str, T.Type]]
    names: dict[str, Loc]
    loop_depth: int = 0
    switch_depth: int = 0


class _Verifier:
    def __init__(self, module: ir.Module, unique_names: bool = True):
        self.module = module
        self.unique_names = unique_names
        self.problems: list[str] = []
        self.globals: dict[str, T.Type] = {}
        self.signatures: dict[str, ir.Function] = {}
        self.ctx: _Context | None = None

    def run(self) -> list[str]:
        for decl in self.module.decls:
            if isinstance(decl, ir.GlobalVar):
                self.global_var(decl)
            elif isinstance(decl, ir.Function):
                self.signatures.setdefault(decl.name, decl)
                if decl.body is not None:
                    self.signatures[decl.name] = decl
                    self.function(decl)
        return self.problems

    def report(self, loc: Loc, message: str) -> None:
        where = f" in '{self.ctx.function.name}':" if self.ctx is not None else ""
        self.problems.append(f"{loc}:{where} {message}")

    # ------------------------------------------------------------ declarations

    def global_var(self, g: ir.GlobalVar) -> None:
        d = g.decl
        if d.name in self.globals:
            self.report(d.loc, f"program-scope variable '{d.name}' is declared twice")
        if d.space is not T.AddressSpace.CONSTANT:
            self.report(d.loc, f"program-scope variable '{d.name}' is in "
                               f"{d.space.spelling}, not __constant")
        self.globals[d.name] = d.type
        if d.init is not None:
            self.expr(d.init)
            self.check_init(d)

    def function(self, f: ir.Function) -> None:
        assert f.body is not None
        self.ctx = _Context(f, [dict(self.globals), {}], {})
        if f.is_kernel and not isinstance(f.ret, T.VoidType):
            self.report(f.loc, f"kernel '{f.name}' returns '{f.ret}', not void")
        for p in f.params:
            self.declare(p.name, p.type, p.loc)
        self.stmt(f.body)
        self.ctx = None

    def declare(self, name: str, t: T.Type, loc: Loc) -> None:
        assert self.ctx is not None
        previous = self.ctx.names.get(name)
        if previous is not None:
            if self.unique_names:
                self.report(loc, f"variable name '{name}' is not unique in the function "
                                 f"(also declared at {previous})")
        elif name in self.globals:
            self.report(loc, f"local variable '{name}' has the name of a program-scope "
                             "variable")
        self.ctx.names.setdefault(name, loc)
        self.ctx.scopes[-1][name] = t

    def lookup(self, name: str) -> T.Type | None:
        assert self.ctx is not None
        for scope in reversed(self.ctx.scopes):
            if name in scope:
                return scope[name]
        return None

    def var_decl(self, d: ir.VarDecl) -> None:
        assert self.ctx is not None
        if d.space is T.AddressSpace.LOCAL and not self.ctx.function.is_kernel:
            self.report(d.loc, f"__local variable '{d.name}' outside a kernel")
        if d.space is T.AddressSpace.GLOBAL:
            self.report(d.loc, f"variable '{d.name}' declared in __global inside a function")
        if d.space is T.AddressSpace.LOCAL and d.init is not None:
            self.report(d.loc, f"__local variable '{d.name}' has an initializer")
        self.declare(d.name, d.type, d.loc)  # C: a variable is in scope in its own initializer
        if d.init is not None:
            self.expr(d.init)
            self.check_init(d)

    def check_init(self, d: ir.VarDecl) -> None:
        assert d.init is not None
        if not same_type(d.init.type, d.type):
            self.report(d.init.loc, f"initializer of '{d.name}' has type '{d.init.type}', "
                                    f"the variable '{d.type}'")

    # ------------------------------------------------------------ statements

    def block(self, stmts: Iterator[ir.Stmt] | tuple[ir.Stmt, ...]) -> None:
        assert self.ctx is not None
        self.ctx.scopes.append({})
        try:
            for s in stmts:
                self.stmt(s)
        finally:
            self.ctx.scopes.pop()

    def condition(self, e: ir.Expr, what: str) -> None:
        self.expr(e)
        if not _is_condition_type(e.type):
            self.report(e.loc, f"{what} condition has type '{e.type}', not a scalar")

    def loop_body(self, body: ir.Stmt) -> None:
        assert self.ctx is not None
        self.ctx.loop_depth += 1
        try:
            self.block((body,))
        finally:
            self.ctx.loop_depth -= 1

    def stmt(self, s: ir.Stmt) -> None:
        ctx = self.ctx
        assert ctx is not None
        if isinstance(s, ir.Block):
            self.block(s.stmts)
        elif isinstance(s, ir.DeclStmt):
            for d in s.decls:
                self.var_decl(d)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.expr)
        elif isinstance(s, ir.If):
            self.condition(s.cond, "if")
            self.block((s.then,))
            if s.otherwise is not None:
                self.block((s.otherwise,))
        elif isinstance(s, ir.For):
            ctx.scopes.append({})
            try:
                if s.init is not None:
                    self.stmt(s.init)
                if s.cond is not None:
                    self.condition(s.cond, "for")
                if s.step is not None:
                    self.expr(s.step)
                self.loop_body(s.body)
            finally:
                ctx.scopes.pop()
        elif isinstance(s, ir.While):
            self.condition(s.cond, "while")
            self.loop_body(s.body)
        elif isinstance(s, ir.DoWhile):
            self.loop_body(s.body)
            self.condition(s.cond, "do-while")
        elif isinstance(s, ir.Switch):
            self.expr(s.expr)
            if not _is_integer_scalar(s.expr.type):
                self.report(s.expr.loc, f"switch on '{s.expr.type}', not an integer")
            ctx.switch_depth += 1
            try:
                self.stmt(s.body)
            finally:
                ctx.switch_depth -= 1
        elif isinstance(s, (ir.Case, ir.Default)):
            if ctx.switch_depth == 0:
                self.report(s.loc, f"'{'case' if isinstance(s, ir.Case) else 'default'}' "
                                   "label outside a switch")
        elif isinstance(s, ir.Break):
            if ctx.loop_depth == 0 and ctx.switch_depth == 0:
                self.report(s.loc, "'break' outside a loop or switch")
        elif isinstance(s, ir.Continue):
            if ctx.loop_depth == 0:
                self.report(s.loc, "'continue' outside a loop")
        elif isinstance(s, ir.Return):
            self.return_stmt(s)
        elif isinstance(s, ir.Empty):
            pass
        else:
            self.other_stmt(s)

    def other_stmt(self, s: ir.Stmt) -> None:
        """Statements of later IR stages (``ir.wgnodes``): a node with a ``name`` and a ``type``
        declares that name; everything inside is verified as usual."""
        assert self.ctx is not None
        name = getattr(s, "name", None)
        t = getattr(s, "type", None)
        if isinstance(name, str) and isinstance(t, T.Type):
            self.ctx.scopes[-1][name] = t
        for child in children(s):
            if isinstance(child, ir.Stmt):
                self.stmt(child)
            elif isinstance(child, ir.Expr):
                self.expr(child)

    def return_stmt(self, s: ir.Return) -> None:
        assert self.ctx is not None
        ret = self.ctx.function.ret
        if s.value is None:
            if not isinstance(ret, T.VoidType):
                self.report(s.loc, f"return without a value in a function returning '{ret}'")
            return
        self.expr(s.value)
        if isinstance(ret, T.VoidType):
            self.report(s.loc, "return with a value in a void function")
        elif not same_type(s.value.type, ret):
            self.report(s.value.loc, f"return value has type '{s.value.type}', the function "
                                     f"returns '{ret}'")

    # ------------------------------------------------------------ expressions

    def expr(self, e: ir.Expr) -> None:
        for child in children(e):
            if isinstance(child, ir.Expr):
                self.expr(child)
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is not None:
            method(e)

    def expr_VarRef(self, e: ir.VarRef) -> None:
        if self.ctx is None:
            declared = self.globals.get(e.name)
        else:
            declared = self.lookup(e.name)
        if declared is None:
            self.report(e.loc, f"'{e.name}' is not a variable in scope")
        elif not same_type(declared, e.type):
            self.report(e.loc, f"reference to '{e.name}' has type '{e.type}', the variable "
                               f"'{declared}'")

    def expr_Unary(self, e: ir.Unary) -> None:
        t = e.operand.type
        if e.op == "*":
            if not isinstance(t, T.PointerType):
                self.report(e.loc, f"dereference of '{t}', not a pointer")
            elif e.type != t.pointee:
                self.report(e.loc, f"dereference of '{t}' has type '{e.type}'")
        elif e.op == "&":
            if not isinstance(e.type, T.PointerType) or e.type.pointee != t:
                self.report(e.loc, f"address of a '{t}' has type '{e.type}'")
        elif e.op == "!":
            if e.type != conv.comparison_result(t):
                self.report(e.loc, f"'!' of '{t}' has type '{e.type}'")
        elif e.type != t:
            self.report(e.loc, f"unary '{e.op}' of '{t}' has type '{e.type}'")

    def expr_Binary(self, e: ir.Binary) -> None:
        lt, rt = e.lhs.type, e.rhs.type
        if isinstance(lt, T.PointerType) or isinstance(rt, T.PointerType):
            if (e.op in _COMPARE_OPS or e.op in _LOGICAL_OPS) and e.type != T.INT:
                self.report(e.loc, f"pointer '{e.op}' has type '{e.type}', not int")
            return  # pointer arithmetic: offsets keep their own integer type
        if e.op in _LOGICAL_OPS and not isinstance(lt, T.VectorType) \
                and not isinstance(rt, T.VectorType):
            if e.type != T.INT:
                self.report(e.loc, f"'{e.op}' has type '{e.type}', not int")
            return
        if e.op in _SHIFT_OPS:
            if lt != e.type:
                self.report(e.loc, f"shift of '{lt}' has type '{e.type}'")
            return
        if lt != rt:
            self.report(e.loc, f"operands of '{e.op}' have different types ('{lt}' and "
                               f"'{rt}')")
            return
        if e.op in _COMPARE_OPS or e.op in _LOGICAL_OPS:
            expected = conv.comparison_result(lt)
            if e.type != expected:
                self.report(e.loc, f"'{e.op}' of '{lt}' has type '{e.type}', not '{expected}'")
        elif e.type != lt:
            self.report(e.loc, f"'{e.op}' of '{lt}' operands has type '{e.type}'")

    def expr_Assign(self, e: ir.Assign) -> None:
        target, value = e.target.type, e.value.type
        if not same_type(e.type, target):
            self.report(e.loc, f"assignment to '{target}' has type '{e.type}'")
        if e.op == "=":
            if not same_type(target, value):
                self.report(e.loc, f"assignment of '{value}' to '{target}'")
            return
        op = e.op[:-1]
        if isinstance(target, T.PointerType):
            if not _is_integer_scalar(value):
                self.report(e.loc, f"'{e.op}' on a pointer with a '{value}' offset")
            return
        expected = conv.promote(target) if op in _SHIFT_OPS else \
            conv.usual_arithmetic(target, value)
        if expected != value:
            self.report(e.loc, f"'{e.op}' on '{target}' with a value of type '{value}', not of "
                               f"the operation's type '{expected}'")

    def expr_Conditional(self, e: ir.Conditional) -> None:
        if not same_type(e.then.type, e.otherwise.type):
            self.report(e.loc, f"'?:' branches have different types ('{e.then.type}' and "
                               f"'{e.otherwise.type}')")
        elif not same_type(e.type, e.then.type):
            self.report(e.loc, f"'?:' of '{e.then.type}' branches has type '{e.type}'")
        if not (_is_condition_type(e.cond.type) or isinstance(e.cond.type, T.VectorType)):
            self.report(e.cond.loc, f"'?:' condition has type '{e.cond.type}'")

    def expr_Comma(self, e: ir.Comma) -> None:
        if not e.exprs or e.type != e.exprs[-1].type:
            self.report(e.loc, "comma expression does not have the type of its last operand")

    def expr_Cast(self, e: ir.Cast) -> None:
        src = e.operand.type
        if e.implicit and isinstance(src, T.VectorType) and isinstance(e.type, T.VectorType) \
                and src != e.type:
            self.report(e.loc, f"implicit conversion between vector types '{src}' and "
                               f"'{e.type}'")

    def expr_Call(self, e: ir.Call) -> None:
        if e.builtin is not None:
            self.builtin_call(e, e.builtin)
        else:
            self.user_call(e)

    def builtin_call(self, e: ir.Call, key: str) -> None:
        try:
            overload = builtins.lookup(key)
        except KeyError:
            self.report(e.loc, f"call of '{e.name}' names no builtin overload ('{key}')")
            return
        if overload.name != e.name:
            self.report(e.loc, f"call of '{e.name}' resolved to '{overload.name}'")
        if e.type != overload.ret:
            self.report(e.loc, f"call of '{overload}' has type '{e.type}'")
        self.arguments(e, overload.params, overload.variadic, str(overload))

    def user_call(self, e: ir.Call) -> None:
        callee = self.signatures.get(e.name)
        if callee is None:
            callee = next((f for f in self.module.decls
                           if isinstance(f, ir.Function) and f.name == e.name), None)
        if callee is None:
            self.report(e.loc, f"call of '{e.name}', which is not a function of the module")
            return
        if e.type != callee.ret:
            self.report(e.loc, f"call of '{e.name}' has type '{e.type}', the function returns "
                               f"'{callee.ret}'")
        self.arguments(e, tuple(p.type for p in callee.params), False, f"'{e.name}'")

    def arguments(self, e: ir.Call, params: tuple[T.Type, ...], variadic: bool,
                  callee: str) -> None:
        if len(e.args) < len(params) or (len(e.args) > len(params) and not variadic):
            self.report(e.loc, f"{len(e.args)} arguments passed to {callee}")
            return
        for i, (arg, param) in enumerate(zip(e.args, params)):
            if isinstance(arg, ir.StringLit):
                continue  # printf formats: the literal's array type, passed as it is
            if not same_type(arg.type, param):
                self.report(arg.loc, f"argument {i + 1} of {callee} has type '{arg.type}', "
                                     f"not '{param}'")

    def expr_Index(self, e: ir.Index) -> None:
        base = e.base.type
        if isinstance(base, T.PointerType):
            elem = base.pointee
        elif isinstance(base, T.ArrayType | T.VectorType):
            elem = base.elem
        else:
            self.report(e.loc, f"subscript of '{base}', not a pointer, array or vector")
            return
        if e.type != elem:
            self.report(e.loc, f"subscript of '{base}' has type '{e.type}'")
        if not _is_integer_scalar(e.index.type):
            self.report(e.index.loc, f"subscript of type '{e.index.type}', not an integer")

    def expr_Member(self, e: ir.Member) -> None:
        base = e.base.type
        record = base.pointee if e.arrow and isinstance(base, T.PointerType) else base
        if not isinstance(record, T.StructType):
            self.report(e.loc, f"member '{e.field_name}' of '{base}', not a struct or union")
            return
        member = record.field(e.field_name)
        if member is None:
            self.report(e.loc, f"'{record}' has no member '{e.field_name}'")
        elif member.type != e.type:
            self.report(e.loc, f"member '{e.field_name}' has type '{e.type}', the field "
                               f"'{member.type}'")

    def expr_Swizzle(self, e: ir.Swizzle) -> None:
        base = e.base.type
        if not isinstance(base, T.VectorType):
            self.report(e.loc, f"component selection on '{base}', not a vector")
            return
        # .lo/.hi/.even/.odd of a 3-component vector read it as the 4-component vector it is
        # stored as (OpenCL C 6.1.7)
        limit = base.storage_width if e.spelling in _SPLAT_SPELLINGS else base.width
        bad = [i for i in e.indices if not 0 <= i < limit]
        if bad:
            self.report(e.loc, f"component {bad[0]} out of range for '{base}' "
                               f"(in '.{e.spelling}')")
        expected = T.vector_or_scalar(base.elem, len(e.indices)) if e.indices else None
        if expected is not None and e.type != expected:
            self.report(e.loc, f"'.{e.spelling}' of '{base}' has type '{e.type}', not "
                               f"'{expected}'")

    def expr_VectorLiteral(self, e: ir.VectorLiteral) -> None:
        vt = e.type
        if not isinstance(vt, T.VectorType):
            self.report(e.loc, f"vector literal of non-vector type '{vt}'")
            return
        if len(e.elems) == 1 and not isinstance(e.elems[0].type, T.VectorType):
            if e.elems[0].type != vt.elem:
                self.report(e.loc, f"splat of '{e.elems[0].type}' into '{vt}'")
            return
        count = 0
        for elem in e.elems:
            et = elem.type
            if isinstance(et, T.VectorType):
                count += et.width
                ok = et.elem == vt.elem
            else:
                count += 1
                ok = et == vt.elem
            if not ok:
                self.report(elem.loc, f"component of type '{et}' in a vector literal of '{vt}'")
        if count != vt.width:
            self.report(e.loc, f"vector literal of '{vt}' has {count} components")

    def expr_InitList(self, e: ir.InitList) -> None:
        t = e.type
        if isinstance(t, T.ArrayType):
            expected: list[T.Type] = [t.elem] * len(e.elems)
        elif isinstance(t, T.StructType):
            expected = [f.type for f in t.fields[: len(e.elems)]]
        elif isinstance(t, T.VectorType):
            expected = [t.elem] * len(e.elems)
        else:
            expected = [t] * len(e.elems)
        if len(expected) != len(e.elems):
            self.report(e.loc, f"too many initializers for '{t}'")
            return
        for elem, want in zip(e.elems, expected):
            if not same_type(elem.type, want):
                self.report(elem.loc, f"initializer of type '{elem.type}' for '{want}'")


# ---------------------------------------------------------------- barriers


def _is_barrier(node: Node) -> bool:
    return isinstance(node, ir.Call) and node.builtin is not None and node.name in _BARRIERS


def _control_statements(node: Node, enclosing: tuple[ir.Stmt, ...]
                        ) -> Iterator[tuple[ir.Call, tuple[ir.Stmt, ...]]]:
    """Every barrier call under ``node`` with the If/loop/switch statements around it."""
    if _is_barrier(node):
        yield node, enclosing
    inner = enclosing
    if isinstance(node, (ir.If, ir.Switch, *_LOOPS)):
        inner = (*enclosing, node)
    for child in children(node):
        yield from _control_statements(child, inner)


def verify_barriers_uniform(kernel: ir.Function, uniformity: Uniformity) -> list[str]:
    """Barriers of ``kernel`` under an If, loop or switch whose control the uniformity analysis
    (``uniformity``, computed for this very ``kernel`` object) does not prove uniform, one
    located message each. Information, not errors: work-group formation runs those regions in
    masked lock step."""
    if kernel.body is None:
        return []
    found: list[str] = []
    for call, enclosing in _control_statements(kernel.body, ()):
        varying = [s for s in enclosing if not uniformity.control_uniform(s)]
        if not varying:
            continue
        outermost = varying[0]  # where the work-items may part ways
        kind = type(outermost).__name__.lower()
        found.append(f"{call.loc}: in '{kernel.name}': barrier under {kind} at "
                     f"{outermost.loc} whose control is not proven uniform")
    return found
