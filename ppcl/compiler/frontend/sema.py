"""Semantic analysis, part 3: statements, functions and program-scope declarations.

``analyze(ast, ...)`` turns a pycparser translation unit into an ``ir.Module``. Errors are
reported to the build's ``Diagnostics``; an error abandons the statement (or program-scope
declaration) it is in, and analysis goes on with the next one, so one build reports several.
Whole-program rules (no recursion, called functions defined) are in ``checks``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from pycparser import c_ast

from ppcl.compiler.diagnostics import NO_LOC, Diagnostics, Loc
from ppcl.compiler.frontend import checks
from ppcl.compiler.frontend.consteval import fold, fold_integer_constants
from ppcl.compiler.frontend.kernel_calls import kernels_as_functions
from ppcl.compiler.frontend.parse import Tokens
from ppcl.compiler.frontend.sema_expr import ExprSema
from ppcl.compiler.frontend.sema_types import (
    FunctionState,
    QualType,
    SemaError,
    Symbol,
    is_function_declarator,
)
from ppcl.compiler.frontend.sema_values import string_length
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T

_KERNEL_SPECS = {"__kernel", "kernel"}
_UNROLL_PRAGMA = re.compile(r"unroll(?=$|[\s(])")
_KERNEL_ATTRIBUTES = {"reqd_work_group_size", "work_group_size_hint", "vec_type_hint"}
_IGNORED_ATTRIBUTES = {"always_inline", "noinline", "pure", "const", "overloadable", "unused",
                       "used", "nodebug", "flatten"}


class Sema(ExprSema):
    """The whole analysis of one translation unit."""

    def __init__(self, *args: object, **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.decls: list[ir.TopLevel] = []
        self.functions: dict[str, ir.Function] = {}
        self.call_sites: dict[str, list[tuple[str, Loc]]] = {}
        self.prototype_only: set[str] = set()
        self.pending_unroll: list[tuple[Loc, int]] = []  # '#pragma unroll' lines, in order
        self.last_statement: Loc = NO_LOC  # where the statement analysed last begins
        # a unit compiled apart (clCompileProgram): what it declares another unit may define
        self.separate_unit = False

    # ------------------------------------------------------------ translation unit

    def module(self, ast: c_ast.FileAST) -> ir.Module:
        for node in ast.ext or []:
            try:
                produced = self.top_level(node)
            except SemaError as exc:
                self.error(exc.loc, exc.message)
                produced = []
            self.decls.extend(self.pending)
            self.pending.clear()
            self.decls.extend(produced)
        defined = self.defined_functions()
        if self.separate_unit:
            defined |= {d.name for d in self.decls if isinstance(d, ir.Function)}
        shown: dict[str, str] = {}  # overloads by their source name and parameters
        for name, members in self.overload_sets.items():
            for sym in members:
                assert isinstance(sym.type, T.FunctionType)
                shown[sym.name] = f"{name}({', '.join(map(str, sym.type.params))})"
        checks.check_calls(self.diags, self.call_sites, defined, shown)
        module, errors = kernels_as_functions(
            ir.Module(tuple(self.decls), tuple(self.extensions.items())))
        for loc, message in errors:
            self.error(loc, message)
        return module

    def defined_functions(self) -> set[str]:
        return {d.name for d in self.decls if isinstance(d, ir.Function) and d.body is not None}

    def top_level(self, node: c_ast.Node) -> list[ir.TopLevel]:
        if isinstance(node, c_ast.FuncDef):
            return [self.function(node.decl, node.body)]
        if isinstance(node, c_ast.Typedef):
            return self.typedef(node)
        if isinstance(node, c_ast.Decl):
            if is_function_declarator(node.type):
                if self.redeclares_printf(node):
                    return []
                return [self.function(node, None)]
            return self.program_scope_decl(node)
        if isinstance(node, c_ast.Pragma) or type(node).__name__ in ("Pragma", "PreprocessorLine"):
            return []
        self.fail(self.loc(node), f"unsupported declaration ({type(node).__name__})")

    def redeclares_printf(self, node: c_ast.Decl) -> bool:
        """Whether ``node`` is a prototype of the builtin printf, ``int printf(const char
        *restrict format, ...);``, as kernels written for compilers without it declare: it
        adds nothing and is dropped (clang accepts it). Another variadic prototype named
        printf conflicts with the builtin's type."""
        args = node.type.args
        if node.name != "printf" or args is None or not args.params \
                or not isinstance(args.params[-1], c_ast.EllipsisParam):
            return False
        loc = self.loc(node)
        ret = self.declarator(node.type.type).type
        fixed = args.params[:-1]
        first = self.declarator(fixed[0].type).type if len(fixed) == 1 else None
        if ret != T.INT or not isinstance(first, T.PointerType) or first.pointee != T.CHAR:
            self.fail(loc, "conflicting types for 'printf': the builtin is "
                           "'int printf(__constant char *restrict format, ...)'")
        return True

    def typedef(self, node: c_ast.Typedef) -> list[ir.TopLevel]:
        loc = self.loc(node)
        if self.waiting_typedef(node.name, node.type, loc):
            return []  # declared with the record's definition
        qt = self.declarator(node.type)
        if isinstance(qt.type, T.StructType) and T.is_tagless_record_name(qt.type.name):
            self.typedef_names.setdefault(qt.type.name, node.name)
        self.declare(node.name, Symbol("typedef", node.name, qt.type,
                                       space=qt.space or T.AddressSpace.PRIVATE, const=qt.const,
                                       volatile=qt.volatile, loc=loc), loc)
        if self.func is None:
            self.global_names.add(node.name)
            sized = self.device_sized_spelling(node.type)
            if sized is not None:
                self.device_sized_typedefs[node.name] = sized
        return [ir.TypeDef(node.name, qt.type, loc=loc)]

    def program_scope_decl(self, node: c_ast.Decl) -> list[ir.TopLevel]:
        loc = self.loc(node)
        self._check_storage(node, loc, program_scope=True)
        if node.name is None and self.forward_record(node.type) is not None:
            return []  # 'struct S;': S is defined later (or a use says it is not)
        qt = self.declarator(node.type)
        if node.name is None:
            return []  # a struct, union or enum definition alone: already in self.pending
        if qt.type == T.SAMPLER_T and qt.space is None and qt.const:
            qt.space = T.AddressSpace.CONSTANT  # `const sampler_t s = ...;` (section 6.12.14.1)
        if qt.space is not T.AddressSpace.CONSTANT:
            where = f"the {qt.space.spelling} address space" if qt.space else "no address space"
            self.fail(loc, f"program scope variable '{node.name}' must be declared in the "
                           f"__constant address space (it has {where})")
        t = self._complete_array(qt.type, node.init, loc)
        self.check_object_type(t, loc, what=f"variable '{node.name}'")
        if node.init is None:
            self.fail(loc, f"__constant variable '{node.name}' must be initialized")
        init = fold_integer_constants(self.initializer(node.init, t, loc))
        align = qt.align if qt.align is not None else self.align_attribute(node.funcspec)
        decl = ir.VarDecl(node.name, t, T.AddressSpace.CONSTANT, True, qt.volatile, init, align,
                          loc=loc)
        sym = Symbol("var", node.name, t, T.AddressSpace.CONSTANT, True, qt.volatile, loc=loc,
                     const_value=self.constant_value(QualType(t, const=True), init))
        self.declare(node.name, sym, loc)
        self.global_names.add(node.name)
        self.var_symbols[node.name] = sym
        return [ir.GlobalVar(decl, loc=loc)]

    def _check_storage(self, node: c_ast.Decl, loc: Loc, *, program_scope: bool,
                       function: bool = False) -> None:
        for storage in node.storage or []:
            if storage == "extern" and not function:
                # A function's 'extern' (OpenCL C 1.2, 6.8) says what a prototype says; a
                # variable defined in another unit has no place in one translation unit
                self.fail(loc, "'extern' variables are not supported by ppcl: a program is one "
                               "translation unit")
            if storage == "static" and not program_scope:
                self.fail(loc, "static local variables are not supported in OpenCL C")
            if storage in ("auto", "register"):
                # OpenCL C (6.8 in 1.2) supports neither; clang and pocl reject them. Reported
                # without dropping the declaration, so its uses raise no second error
                self.error(loc, f"OpenCL C does not support the '{storage}' storage class "
                                "specifier")

    # ------------------------------------------------------------ functions

    def function(self, decl: c_ast.Decl, body: c_ast.Compound | None) -> ir.Function:
        loc = self.loc(decl)
        name: str = decl.name
        self._check_storage(decl, loc, program_scope=True, function=True)
        specs = [s for s in decl.funcspec or [] if isinstance(s, str)]
        is_kernel = any(s in _KERNEL_SPECS for s in specs)
        inline = "inline" in specs or "__inline" in specs
        fnode = decl.type
        ret_qt = self.declarator(fnode.type)
        ret = ret_qt.type
        if is_kernel and not isinstance(ret, T.VoidType):
            self.fail(self.loc(fnode.type), f"kernel function '{name}' must return void, not "
                                            f"'{ret}'")
        if isinstance(ret, T.ArrayType):
            self.fail(loc, f"function '{name}' cannot return an array")
        attrs = self.kernel_attributes(decl, fnode, is_kernel)
        params = self.parameters(fnode, name, is_kernel, definition=body is not None)
        ftype = T.FunctionType(ret, tuple(p.type for p in params))
        previous = self.scopes[0].get(name)
        overloadable = any(a[0].strip("_") == "overloadable" for a in self.attributes(
            list(decl.funcspec or [])) + self.attributes(getattr(fnode, "attributes", None)))
        if overloadable or name in self.overload_sets:
            sym = self.overload(name, ftype, overloadable, is_kernel, body is not None, loc)
        elif previous is not None:
            if previous.kind != "func":
                self.fail(loc, f"redefinition of '{name}' as a function")
            if previous.type != ftype:
                self.fail(loc, f"conflicting types for '{name}': '{ftype}' here, '{previous.type}'"
                               " before")
            if previous.defined and body is not None:
                self.fail(loc, f"redefinition of function '{name}'")
            sym = previous
        else:
            sym = Symbol("func", name, ftype, is_kernel=is_kernel, loc=loc)
            self.scopes[0][name] = sym
            self.global_names.add(name)
        sym.is_kernel = sym.is_kernel or is_kernel
        if body is None:
            return ir.Function(sym.name, ret, params, None, is_kernel, attrs, inline, loc=loc)
        sym.defined = True
        block = self.function_body(sym.name, is_kernel, ret, params, body)
        return ir.Function(sym.name, ret, params, block, is_kernel, attrs, inline, loc=loc)

    def overload(self, name: str, ftype: T.FunctionType, overloadable: bool, is_kernel: bool,
                 has_body: bool, loc: Loc) -> Symbol:
        """The symbol of one overload of an ``overloadable`` function (clang's extension to C):
        each has an IR name of its own, ``__ovl<n>_<name>`` (reserved in C, so it meets no
        program name); calls pick one by ``ExprSema.overloaded_call``."""
        if is_kernel:
            self.fail(loc, f"kernel function '{name}' cannot be 'overloadable'")
        members = self.overload_sets.get(name)
        if not overloadable or (members is None and name in self.scopes[0]):
            self.fail(loc, f"redeclaration of '{name}' must have the 'overloadable' attribute "
                           "(every declaration of an overloaded function needs it)")
        if members is None:
            members = self.overload_sets[name] = []
            self.scopes[0][name] = Symbol("overloads", name, ftype, loc=loc)
            self.global_names.add(name)
        for sym in members:
            assert isinstance(sym.type, T.FunctionType)
            if sym.type.params != ftype.params:
                continue
            if sym.type.ret != ftype.ret:
                self.fail(loc, f"conflicting types for '{name}': '{ftype}' here, '{sym.type}' "
                               "before (overloads differ in their parameters, not only in the "
                               "return type)")
            if sym.defined and has_body:
                self.fail(loc, f"redefinition of function '{name}' ('{ftype}')")
            return sym
        sym = Symbol("func", f"__ovl{len(members)}_{name}", ftype, loc=loc)
        members.append(sym)
        return sym

    def parameters(self, fnode: c_ast.Node, fname: str, is_kernel: bool,
                   definition: bool = True) -> tuple[ir.Param, ...]:
        """The parameters of a function; a prototype (``definition`` false, as separately
        compiled units declare what another unit defines) may leave them unnamed."""
        args = fnode.args
        if args is None:
            return ()
        params: list[ir.Param] = []
        for index, param in enumerate(args.params):
            ploc = self.loc(param)
            if isinstance(param, c_ast.EllipsisParam):
                self.fail(ploc, "variadic functions are not supported in OpenCL C")
            if isinstance(param, c_ast.ID):
                # an old-style identifier list, 'f(n)'; the checks below read a declarator
                self.fail(ploc, f"parameter '{param.name}' of '{fname}' has no type (OpenCL C "
                                "has no implicit int)")
            if isinstance(param, c_ast.Typename):
                t = self.type_name(param)
                if isinstance(t, T.VoidType) and len(args.params) == 1:
                    return ()
                if definition:
                    self.fail(ploc, f"parameter {index + 1} of '{fname}' has no name")
                param = c_ast.Decl(f"__unnamed{index}", param.quals, None, [], [], param.type,
                                   None, None, coord=param.coord)
                _name_declarator(param.type, param.name)
            ploc = self.loc(_declname_node(param.type)) or ploc
            qt = self.declarator(param.type)
            t = qt.type
            is_array = isinstance(t, T.ArrayType)
            if isinstance(t, T.ArrayType):
                # 'T a[]' is 'T *a'; an address space in it is the elements' ('__local int
                # t[2][3]' points to __local memory)
                t = T.PointerType(t.elem, qt.space or T.AddressSpace.PRIVATE, qt.const,
                                  qt.volatile)
            if is_kernel:
                self.check_kernel_param(param, qt, t, ploc)
            elif not is_array and qt.space not in (None, T.AddressSpace.PRIVATE):
                self.fail(ploc, f"parameter '{param.name}' cannot be declared in the "
                                f"{qt.space.spelling} address space")
            self.check_object_type(t, ploc, what=f"parameter '{param.name}'")
            params.append(ir.Param(param.name, t, qt.const, qt.volatile, loc=ploc,
                                   type_name=self.typedef_spelling(param.type)))
        return tuple(params)

    def check_kernel_param(self, param: c_ast.Decl, qt: QualType, t: T.Type, loc: Loc) -> None:
        name = param.name
        if isinstance(t, T.PointerType):
            if isinstance(t.pointee, T.PointerType):
                self.fail(loc, f"kernel parameter '{name}' cannot be a pointer to a pointer")
            if t.space is T.AddressSpace.PRIVATE:
                self.fail(loc, f"kernel pointer argument '{name}' must point to __global, "
                               "__constant or __local memory")
            return
        if qt.space not in (None, T.AddressSpace.PRIVATE):
            self.fail(loc, f"kernel parameter '{name}' is not a pointer and cannot be "
                           f"{qt.space.spelling}")
        if t == T.BOOL:
            self.fail(loc, f"kernel parameter '{name}' cannot have type 'bool'")
        sized = self.device_sized_spelling(param.type)
        if sized is not None:
            self.fail(loc, f"kernel parameter '{name}' cannot have type '{sized}' (its size "
                           "is the device's, unknown to the host); use a fixed-size type such "
                           "as 'uint' or 'ulong'")
        if t == T.EVENT_T:
            self.fail(loc, f"kernel parameter '{name}' cannot have type 'event_t'")
        if isinstance(t, T.StructType) and _holds_pointer(t):
            shown = self.typedef_names.get(t.name, str(t))
            self.fail(loc, f"kernel parameter '{name}' of type '{shown}': struct kernel "
                           "parameters may not contain pointers")
        if isinstance(t, T.StructType) and t.name in self.host_unsized_members:
            shown = self.typedef_names.get(t.name, str(t))
            self.fail(loc, f"kernel parameter '{name}' of type '{shown}' cannot hold "
                           f"{self.host_unsized_members[t.name]} (its size is the device's, "
                           "unknown to the host)")

    def kernel_attributes(self, decl: c_ast.Decl, fnode: c_ast.Node,
                          is_kernel: bool) -> ir.KernelAttrs:
        found = self.attributes(list(decl.funcspec or [])) + \
            self.attributes(getattr(fnode, "attributes", None))
        reqd: tuple[int, int, int] | None = None
        hint: tuple[int, int, int] | None = None
        vec_hint: T.Type | None = None
        for name, args, node in found:
            loc = self.loc(node)
            if name in _KERNEL_ATTRIBUTES and not is_kernel:
                self.warning(loc, f"attribute '{name}' only applies to kernel functions; "
                                  "ignored")
                continue
            if name in ("reqd_work_group_size", "work_group_size_hint"):
                if len(args) != 3:
                    self.fail(loc, f"attribute '{name}' takes 3 arguments, {len(args)} given")
                sizes = tuple(self.constant_int(a, f"argument of '{name}'") for a in args)
                if any(s <= 0 for s in sizes):
                    self.fail(loc, f"attribute '{name}' needs positive sizes, got {sizes}")
                value = (sizes[0], sizes[1], sizes[2])
                if name == "reqd_work_group_size":
                    reqd = value
                else:
                    hint = value
            elif name == "vec_type_hint":
                if len(args) != 1 or not isinstance(args[0], c_ast.ID):
                    self.fail(loc, "attribute 'vec_type_hint' takes one type name")
                hinted = self.named_type([args[0].name], loc)
                if not isinstance(hinted, (T.ScalarType, T.VectorType)) or hinted == T.BOOL:
                    self.fail(loc, f"invalid type '{hinted}' for 'vec_type_hint'")
                vec_hint = hinted
            elif name.strip("_") not in _IGNORED_ATTRIBUTES:
                self.warning(loc, f"unknown attribute '{name}' ignored")
        return ir.KernelAttrs(reqd, hint, vec_hint)

    def function_body(self, name: str, is_kernel: bool, ret: T.Type,
                      params: tuple[ir.Param, ...], body: c_ast.Compound) -> ir.Block:
        self.func = FunctionState(name, is_kernel, ret)
        self.push_scope()
        try:
            for p in params:
                if p.name in self.func.used_names:
                    self.error(p.loc, f"redefinition of parameter '{p.name}'")
                self.check_name(p.name, p.loc)
                self.func.used_names.add(p.name)
                sym = Symbol("var", p.name, p.type, T.AddressSpace.PRIVATE, p.const, p.volatile,
                             loc=p.loc)
                self.scopes[-1][p.name] = sym
                self.var_symbols[p.name] = sym
            block = self.compound(body, new_scope=False)
        finally:
            self.pop_scope()
            self.call_sites[name] = self.func.calls
            self.func = None
        return block

    # ------------------------------------------------------------ statements

    def compound(self, node: c_ast.Compound, *, new_scope: bool = True) -> ir.Block:
        if new_scope:
            self.push_scope()
        stmts: list[ir.Stmt] = []
        try:
            for item in node.block_items or []:
                stmts.extend(self.statement_list(item))
        finally:
            if new_scope:
                self.pop_scope()
        return ir.Block(tuple(stmts), loc=self.loc(node))

    def unroll_pragmas(self, pragmas: list[tuple[Loc, str]]) -> None:
        """The ``#pragma unroll`` lines of the program (the preprocessor keeps pragmas out of
        the parsed text), each checked and kept for the ``for`` loop right after it."""
        for loc, text in pragmas:
            text = text.strip()
            if text == "nounroll":
                self.pending_unroll.append((loc, 1))
                continue
            if not _UNROLL_PRAGMA.match(text):
                continue  # another pragma
            argument = text[len("unroll"):].strip()
            count = argument[1:-1].strip() if argument.startswith("(") else argument
            if count and (not count.isdigit() or int(count) < 1):
                self.error(loc, f"'#pragma unroll' takes a positive integer count, not "
                                f"'{argument}'")
                continue
            self.pending_unroll.append((loc, int(count) if count else 0))

    def unroll_before(self, loc: Loc, previous: Loc) -> int | None:
        """The count of a ``#pragma unroll`` between the statement before (``previous``) and
        the loop at ``loc``: it belongs to that loop."""
        for i, (at, count) in enumerate(self.pending_unroll):
            if at.file == loc.file and previous.line < at.line < loc.line:
                del self.pending_unroll[i]
                return count
        return None

    def statement_list(self, node: c_ast.Node) -> list[ir.Stmt]:
        """The statements for one source statement; errors are reported and the statement
        dropped."""
        try:
            return self.statement(node)
        except SemaError as exc:
            self.error(exc.loc, exc.message)
            return []

    def single(self, node: c_ast.Node) -> ir.Stmt:
        stmts = self.statement_list(node)
        if len(stmts) == 1:
            return stmts[0]
        return ir.Block(tuple(stmts), loc=self.loc(node))

    def statement(self, node: c_ast.Node) -> list[ir.Stmt]:
        loc = self.loc(node)
        assert self.func is not None
        previous, self.last_statement = self.last_statement, loc
        if isinstance(node, c_ast.Compound):
            return [self.compound(node)]
        if isinstance(node, c_ast.Decl):
            return self.local_declaration([node], loc)
        if isinstance(node, c_ast.DeclList):
            return self.local_declaration(list(node.decls), loc)
        if isinstance(node, c_ast.Typedef):
            self.typedef(node)
            return []
        if isinstance(node, c_ast.If):
            cond = self.condition(node.cond)
            then = self.single(node.iftrue)
            otherwise = self.single(node.iffalse) if node.iffalse is not None else None
            return [ir.If(cond, then, otherwise, loc=loc)]
        if isinstance(node, c_ast.For):
            loop = self.for_loop(node, loc)
            unroll = self.unroll_before(loc, previous) if self.pending_unroll else None
            if unroll is not None:
                assert isinstance(loop, ir.For)
                loop = dataclasses.replace(loop, unroll=unroll)
            return [loop]
        if isinstance(node, c_ast.While):
            cond = self.condition(node.cond)
            return [ir.While(cond, self.loop_body(node.stmt), loc=loc)]
        if isinstance(node, c_ast.DoWhile):
            body = self.loop_body(node.stmt)
            return [ir.DoWhile(body, self.condition(node.cond), loc=loc)]
        if isinstance(node, c_ast.Switch):
            return [self.switch(node, loc)]
        if isinstance(node, c_ast.Case):
            return self.case(node, loc)
        if isinstance(node, c_ast.Default):
            if self.func.switch_depth == 0:
                self.fail(loc, "'default' label not within a switch statement")
            first_default = self.func.switch_defaults[-1]
            if first_default is not None:
                # the C compiler rejects the generated switch: a located error here instead
                self.fail(loc, f"multiple default labels in one switch (the first is at "
                               f"line {first_default.line})")
            self.func.switch_defaults[-1] = loc
            return [ir.Default(loc=loc), *self.labelled_statements(node, "default")]
        if isinstance(node, c_ast.Break):
            if self.func.loop_depth == 0 and self.func.switch_depth == 0:
                self.fail(loc, "'break' statement not in loop or switch statement")
            return [ir.Break(loc=loc)]
        if isinstance(node, c_ast.Continue):
            if self.func.loop_depth == 0:
                self.fail(loc, "'continue' statement not in loop statement")
            return [ir.Continue(loc=loc)]
        if isinstance(node, c_ast.Return):
            return [self.return_statement(node, loc)]
        if isinstance(node, (c_ast.Goto, c_ast.Label)):
            self.fail(loc, "'goto' is not supported by ppcl (labels and goto cannot be "
                           "compiled into work-group functions)")
        if isinstance(node, c_ast.EmptyStatement):
            return [ir.Empty(loc=loc)]
        if isinstance(node, c_ast.Pragma) or type(node).__name__ == "Pragma":
            return []
        if type(node).__name__ == "Asm":
            self.fail(loc, "inline assembly is not supported by ppcl")
        return [ir.ExprStmt(self.expr(node), loc=loc)]

    def loop_body(self, node: c_ast.Node) -> ir.Stmt:
        assert self.func is not None
        self.func.loop_depth += 1
        try:
            return self.single(node)
        finally:
            self.func.loop_depth -= 1

    def for_loop(self, node: c_ast.For, loc: Loc) -> ir.Stmt:
        self.push_scope()
        try:
            init: ir.Stmt | None = None
            if isinstance(node.init, c_ast.DeclList):
                decls = self.local_declaration(list(node.init.decls), self.loc(node.init))
                init = decls[0] if decls else None
            elif node.init is not None:
                init = ir.ExprStmt(self.expr(node.init), loc=self.loc(node.init))
            cond = self.condition(node.cond) if node.cond is not None else None
            step = self.expr(node.next) if node.next is not None else None
            body = self.loop_body(node.stmt)
        finally:
            self.pop_scope()
        return ir.For(init, cond, step, body, loc=loc)

    def switch(self, node: c_ast.Switch, loc: Loc) -> ir.Stmt:
        assert self.func is not None
        value = self.rvalue(node.cond)
        if not (isinstance(value.type, (T.ScalarType, T.EnumType)) and
                T.scalar_of(value.type) is not None and value.type != T.FLOAT and
                getattr(T.scalar_of(value.type), "is_integer", False)):
            self.fail(value.loc, f"switch condition must have integer type, not '{value.type}'")
        promoted = _promote(value.type)
        value = self.implicit(value, promoted)
        self.func.switch_depth += 1
        saved_loops = self.func.loop_depth
        self.func.case_values.append(set())
        self.func.switch_defaults.append(None)
        try:
            if isinstance(node.stmt, c_ast.Compound):
                body = self.compound(node.stmt)
            else:
                body = ir.Block(tuple(self.statement_list(node.stmt)), loc=self.loc(node.stmt))
        finally:
            self.func.switch_depth -= 1
            self.func.loop_depth = saved_loops
            self.func.case_values.pop()
            self.func.switch_defaults.pop()
        return ir.Switch(value, body, loc=loc)

    def case(self, node: c_ast.Case, loc: Loc) -> list[ir.Stmt]:
        assert self.func is not None
        if self.func.switch_depth == 0:
            self.fail(loc, "'case' label not within a switch statement")
        label = self.expr(node.expr)
        value = fold(label)
        if value is None:
            self.fail(label.loc, "case label is not an integer constant expression")
        seen = self.func.case_values[-1]
        if value in seen:
            self.fail(label.loc, f"duplicate case value '{value}'")
        seen.add(value)
        return [ir.Case(value, label, loc=loc), *self.labelled_statements(node, "case")]

    def labelled_statements(self, node: c_ast.Case | c_ast.Default, label: str) -> list[ir.Stmt]:
        """The statements after a ``case`` or ``default`` label up to the next label. In C99,
        on which OpenCL C is built, a label is followed by a statement, not a declaration
        (clang rejects ``case 0: int x = 1;``)."""
        items = list(node.stmts or [])
        if items and isinstance(items[0], c_ast.EmptyStatement) and \
                _same_place(items[0], node):
            items = items[1:]  # pycparser's own, standing for no statement (C23 allows that)
            if items and isinstance(items[0], (c_ast.Decl, c_ast.DeclList, c_ast.Typedef)):
                self.error(self.loc(items[0]), f"a declaration cannot directly follow a "
                                               f"'{label}' label; put the case's statements "
                                               "in braces")
        stmts: list[ir.Stmt] = []
        for item in items:
            stmts.extend(self.statement_list(item))
        return stmts

    def return_statement(self, node: c_ast.Return, loc: Loc) -> ir.Stmt:
        assert self.func is not None
        ret = self.func.ret
        if node.expr is None:
            if not isinstance(ret, T.VoidType):
                self.fail(loc, f"non-void function '{self.func.name}' should return a value of "
                               f"type '{ret}'")
            return ir.Return(None, loc=loc)
        value = self.rvalue(node.expr)
        if isinstance(ret, T.VoidType):
            self.fail(loc, f"void function '{self.func.name}' should not return a value")
        return ir.Return(self.convert(value, ret, "return value"), loc=loc)

    # ------------------------------------------------------------ local declarations

    def local_declaration(self, decls: list[c_ast.Decl], loc: Loc) -> list[ir.Stmt]:
        result: list[ir.VarDecl] = []
        for decl in decls:
            var = self.local_variable(decl)
            if var is not None:
                result.append(var)
        if not result:
            return []
        return [ir.DeclStmt(tuple(result), loc=loc)]

    def local_variable(self, decl: c_ast.Decl) -> ir.VarDecl | None:
        assert self.func is not None
        loc = self.loc(decl)
        self._check_storage(decl, loc, program_scope=False)
        if is_function_declarator(decl.type):
            self.fail(loc, "function declarations inside functions are not supported")
        if decl.name is None and self.forward_record(decl.type) is not None:
            return None  # 'struct S;': S is defined later (or a use says it is not)
        qt = self.declarator(decl.type)
        if decl.name is None:
            return None  # a struct/enum definition alone (hoisted to program scope)
        space = qt.space or T.AddressSpace.PRIVATE
        # the rules on where a variable of an address space may be declared are reported
        # without dropping the declaration, so its uses raise no second error ('use of
        # undeclared identifier'), as clang's diagnostics do
        for rule in self._address_space_rules(decl, space):
            self.error(loc, rule)
        t = self._complete_array(qt.type, decl.init, loc)
        self.check_object_type(t, loc, what=f"variable '{decl.name}'")
        if isinstance(t, T.ArrayType) and t.length is None:
            self.fail(loc, f"array '{decl.name}' needs an explicit size or an initializer")
        name = self.unique_local_name(decl.name)
        const = qt.const or space is T.AddressSpace.CONSTANT
        sym = Symbol("var", name, t, space, const, qt.volatile, loc=loc)
        self.declare(decl.name, sym, loc)
        self.var_symbols[name] = sym
        init = self.initializer(decl.init, t, loc) if decl.init is not None else None
        sym.const_value = self.constant_value(QualType(t, const=const), init)
        align = qt.align if qt.align is not None else self.align_attribute(decl.funcspec)
        return ir.VarDecl(name, t, space, const, qt.volatile, init, align, loc=loc)

    def _address_space_rules(self, decl: c_ast.Decl, space: T.AddressSpace) -> list[str]:
        """The messages of the address-space rules a function's variable ``decl`` breaks.
        A kernel's __local variables belong to its outermost block (OpenCL C 1.2 6.5.2):
        they exist once per work-group, not per entry into a block. The scopes are the
        program's, the function's and one per inner block. (__constant ones, which the same
        rule covers, stay allowed in inner blocks: coarsening and fusion nest a kernel's
        body in a loop or block and build the printed result again.)"""
        assert self.func is not None
        name = decl.name
        broken: list[str] = []
        if space is T.AddressSpace.GLOBAL:
            broken.append(f"variable '{name}' cannot be declared in the __global address "
                          "space inside a function")
        if space is T.AddressSpace.LOCAL:
            if not self.func.is_kernel:
                broken.append(f"__local variable '{name}' can only be declared in a kernel "
                              "function")
            elif len(self.scopes) > 2:
                broken.append(f"__local variable '{name}' must be declared in the outermost "
                              "block of the kernel function")
            if decl.init is not None:
                broken.append(f"__local variable '{name}' cannot have an initializer")
        if space is T.AddressSpace.CONSTANT:
            if not self.func.is_kernel:
                broken.append(f"__constant variable '{name}' can only be declared in a "
                              "kernel function or at program scope")
            if decl.init is None:
                broken.append(f"__constant variable '{name}' must be initialized")
        return broken

    def _complete_array(self, t: T.Type, init: c_ast.Node | None, loc: Loc) -> T.Type:
        if isinstance(t, T.ArrayType) and t.length is None:
            if isinstance(init, c_ast.InitList):
                return T.ArrayType(t.elem, len(self._placed(list(init.exprs), None, t)))
            if isinstance(init, c_ast.Constant) and _is_string(init) and t.elem in (T.CHAR, T.UCHAR):
                return T.ArrayType(t.elem, string_length(init.value[1:-1]) + 1)
        return t

    def initializer(self, node: c_ast.Node, t: T.Type, at: Loc | None = None) -> ir.Expr:
        loc = self.loc(node)
        if isinstance(node, c_ast.InitList):
            return self.init_list(node, t, loc)
        if isinstance(node, c_ast.NamedInitializer):
            self.fail(loc, "a designator '.field' or '[index]' belongs in a braced list of a "
                           "struct, union or array")
        if _is_string(node) and isinstance(t, T.ArrayType) and t.elem in (T.CHAR, T.UCHAR):
            assert t.length is not None
            body = self.string_body(node.value, loc)
            if string_length(body) + 1 > t.length:
                self.fail(loc, f"initializer string is too long for '{t}'")
            return ir.StringLit(t, body, loc=loc)
        value = self.rvalue(node)
        if isinstance(t, T.ArrayType):
            self.fail(value.loc, f"array of type '{t}' must be initialized with a braced list")
        converted = self.convert(value, t, "initialization", at)
        self._warn_narrowing(value, t)
        return converted

    def _placed(self, items: list[c_ast.Node], count: int | None,
                t: T.Type) -> list[c_ast.Node | None]:
        """The initializers of a braced list in the order of the elements or fields of ``t``
        they initialize (C99 designators ``.field`` and ``[index]`` move the position), None
        where a gap is left; ``count`` is the number of slots (None: an array of unknown
        length, as long as the list makes it)."""
        slots: list[c_ast.Node | None] = []
        position = 0
        for item in items:
            if isinstance(item, c_ast.NamedInitializer):
                position = self._designated(item, t)
                item = item.expr
            if count is not None and position >= count:
                self.fail(self.loc(item), f"too many initializers for '{t}' (element "
                                          f"{position + 1} of {count})")
            slots.extend([None] * (position + 1 - len(slots)))
            slots[position] = item
            position += 1
        return slots

    def _designated(self, item: c_ast.NamedInitializer, t: T.Type) -> int:
        """The position a designator names in ``t``."""
        loc = self.loc(item)
        if len(item.name) != 1:
            self.fail(loc, "nested designators ('.a.b', '[i].f') are not supported by ppcl; "
                           "initialize the inner record with its own braced list")
        designator = item.name[0]
        if isinstance(t, T.ArrayType):
            if isinstance(designator, c_ast.ID):
                self.fail(loc, f"field designator '.{designator.name}' in the initializer of "
                               f"array '{t}'")
            index = fold(self.rvalue(designator))
            if index is None or index < 0:
                self.fail(loc, "array designator is not a non-negative integer constant")
            return index
        if not isinstance(t, T.StructType) or not isinstance(designator, c_ast.ID):
            self.fail(loc, f"designator in the initializer of '{t}'")
        names = [f.name for f in t.fields]
        path = t.member_path(designator.name)
        if path is not None and len(path) > 1:
            self.fail(loc, f"designator '.{designator.name}' names a member of an anonymous "
                           "struct or union, which ppcl does not support; initialize the "
                           "anonymous member with a braced list at its position")
        if designator.name not in names:
            shown = self.typedef_names.get(t.name, str(t))
            self.fail(loc, f"no member named '{designator.name}' in '{shown}'")
        position = names.index(designator.name)
        if t.is_union and position != 0:
            self.fail(loc, f"a union is initialized through its first member ('.{names[0]}'); "
                           f"ppcl does not support initializing '.{designator.name}'")
        return position

    def zero(self, t: T.Type, loc: Loc) -> ir.Expr:
        """The value of an element or field a braced list leaves out: zero, as C gives it."""
        if isinstance(t, T.ArrayType | T.StructType):
            return ir.InitList(t, (), loc=loc)
        return self.convert(ir.IntLit(T.INT, 0, loc=loc), t, "initialization")

    def _warn_narrowing(self, value: ir.Expr, t: T.Type) -> None:
        src = T.scalar_of(value.type)
        dst = T.scalar_of(t)
        if src == T.DOUBLE and dst == T.FLOAT and not isinstance(value, ir.FloatLit):
            self.warning(value.loc, "implicit conversion from 'double' to 'float' may lose "
                                    "precision")

    def init_list(self, node: c_ast.InitList, t: T.Type, loc: Loc) -> ir.Expr:
        items = list(node.exprs)
        if isinstance(t, T.ArrayType):
            assert t.length is not None
            slots = self._placed(items, t.length, t)
            elems = tuple(self.zero(t.elem, loc) if item is None else
                          self.initializer(item, t.elem) for item in slots)
            return ir.InitList(t, elems, loc=loc)
        if isinstance(t, T.StructType):
            fields = t.fields[:1] if t.is_union else t.fields
            slots = self._placed(items, len(fields), t)
            elems = tuple(self.zero(f.type, loc) if item is None else
                          self.initializer(item, f.type) for item, f in zip(slots, fields))
            return ir.InitList(t, elems, loc=loc)
        if isinstance(t, T.VectorType):
            if len(items) > t.width:
                self.fail(loc, f"too many initializers for '{t}' ({len(items)} given)")
            elems = tuple(self.convert(self.rvalue(item), t.elem, "initialization")
                          for item in items)
            return ir.InitList(t, elems, loc=loc)
        if len(items) != 1:
            self.fail(loc, f"a scalar of type '{t}' takes one initializer, {len(items)} given")
        return self.initializer(items[0], t)


def _holds_pointer(t: T.Type) -> bool:
    """Whether a value of type ``t`` contains a pointer (in a member, at any depth)."""
    while isinstance(t, T.ArrayType):
        t = t.elem
    if isinstance(t, T.PointerType):
        return True
    return isinstance(t, T.StructType) and any(_holds_pointer(f.type) for f in t.fields)


def _declname_node(node: c_ast.Node) -> c_ast.Node:
    while not isinstance(node, c_ast.TypeDecl) and hasattr(node, "type"):
        node = node.type
    return node


def _is_string(node: c_ast.Node | None) -> bool:
    return isinstance(node, c_ast.Constant) and node.type == "string"


def _promote(t: T.Type) -> T.Type:
    from ppcl.compiler.ir.conversions import promote

    return promote(t)


def _same_place(a: c_ast.Node, b: c_ast.Node) -> bool:
    """Whether two nodes start at the same token."""
    here, there = getattr(a, "coord", None), getattr(b, "coord", None)
    return here is not None and there is not None and \
        (here.line, here.column) == (there.line, there.column)


def analyze(ast: c_ast.FileAST, diagnostics: Diagnostics, *, filename: str = "<source>",
            tokens: Tokens | None = None,
            fp64: bool = True, cl_version: int = 120, extensions: dict[str, bool] | None = None,
            single_precision_constant: bool = False,
            locate: Callable[[str, int, int], Loc] | None = None,
            pragmas: list[tuple[Loc, str]] | None = None,
            separate_unit: bool = False) -> ir.Module:
    """Type-check a parsed translation unit into an IR module; errors go to ``diagnostics``.
    ``pragmas`` are the preprocessor's (location, text) of the ``#pragma`` lines;
    ``separate_unit``: the unit is compiled apart and linked later."""
    sema = Sema(diagnostics, filename=filename, fp64=fp64, cl_version=cl_version,
                extensions=dict(extensions or {}),
                single_precision_constant=single_precision_constant, locate=locate)
    sema.tokens = tokens
    sema.unroll_pragmas(pragmas or [])
    sema.separate_unit = separate_unit
    return sema.module(ast)


def _name_declarator(node: c_ast.Node, name: str) -> None:
    """Give the innermost declarator of an unnamed parameter's type the name ``name``."""
    while not isinstance(node, c_ast.TypeDecl):
        node = node.type
    node.declname = name
