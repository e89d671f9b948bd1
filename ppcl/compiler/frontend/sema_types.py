"""Semantic analysis, part 1: shared state, scopes, and types of declarations.

Turns pycparser declarators (``TypeDecl``/``PtrDecl``/``ArrayDecl`` chains over
``IdentifierType``/``Struct``/``Union``/``Enum``) into IR types, with OpenCL's address-space
qualifiers, and builds records and enums. ``ValueSema`` (sema_values), ``ExprSema``
(sema_expr) and ``Sema`` (sema) extend this class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import NoReturn

from pycparser import c_ast

from ppcl.compiler.diagnostics import NO_LOC, Diagnostics, Loc
from ppcl.compiler.frontend.consteval import fold
from ppcl.compiler.frontend.parse import KEYWORD_TYPE_NAMES, Tokens
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.visit import Rewriter

SPACE_QUALIFIERS: dict[str, T.AddressSpace] = {
    "__global": T.AddressSpace.GLOBAL, "global": T.AddressSpace.GLOBAL,
    "__local": T.AddressSpace.LOCAL, "local": T.AddressSpace.LOCAL,
    "__constant": T.AddressSpace.CONSTANT, "constant": T.AddressSpace.CONSTANT,
    "__private": T.AddressSpace.PRIVATE, "private": T.AddressSpace.PRIVATE,
}
IMAGE_QUALIFIERS = {"__read_only", "read_only", "__write_only", "write_only", "__read_write",
                    "read_write"}

# OpenCL type names that are typedefs in the language, mapped to their IR types.
NAMED_TYPES: dict[str, T.Type] = {
    "size_t": T.ULONG, "uintptr_t": T.ULONG, "ptrdiff_t": T.LONG, "intptr_t": T.LONG,
    "event_t": T.EVENT_T, "cl_mem_fence_flags": T.UINT,
}

_C_WORDS = {"signed", "unsigned", "short", "long", "int", "char"}


class SemaError(Exception):
    """An error that abandons the current statement or declaration (already located)."""

    def __init__(self, loc: Loc, message: str):
        super().__init__(message)
        self.loc = loc
        self.message = message


@dataclass
class Symbol:
    kind: str  # "var", "func", "typedef", "enum", "overloads" (the name of overloaded functions)
    name: str  # the IR name (locals are renamed to be unique in their function)
    type: T.Type
    space: T.AddressSpace = T.AddressSpace.PRIVATE
    const: bool = False
    volatile: bool = False
    value: int = 0  # enumerators
    # a const integer variable whose initializer folds to a constant: its value, which an
    # array size may use (clang folds 'const int n = 4; float a[n];' to a constant array)
    const_value: int | None = None
    is_kernel: bool = False
    defined: bool = False
    loc: Loc = NO_LOC


@dataclass
class QualType:
    """A declared type with the qualifiers of the declared object."""

    type: T.Type
    const: bool = False
    volatile: bool = False
    space: T.AddressSpace | None = None
    align: int | None = None


@dataclass
class FunctionState:
    name: str
    is_kernel: bool
    ret: T.Type
    used_names: set[str] = field(default_factory=set)
    loop_depth: int = 0
    switch_depth: int = 0
    case_values: list[set[int]] = field(default_factory=list)
    # per enclosing switch, innermost last: where its 'default' label is, once one was seen
    switch_defaults: list[Loc | None] = field(default_factory=list)
    calls: list[tuple[str, Loc]] = field(default_factory=list)


class TypeSema(ABC):
    """State shared by all parts of the analysis, scopes, and declaration types."""

    def __init__(self, diagnostics: Diagnostics, *, filename: str, fp64: bool, cl_version: int,
                 extensions: dict[str, bool], single_precision_constant: bool,
                 locate: object = None):
        self.diags = diagnostics
        self.filename = filename
        self.fp64 = fp64
        self.cl_version = cl_version
        self.extensions = extensions
        self.single_precision_constant = single_precision_constant
        self._locate = locate
        self.tokens: Tokens | None = None
        # generated name of an anonymous record -> the typedef naming it (for messages)
        self.typedef_names: dict[str, str] = {}
        self.scopes: list[dict[str, Symbol]] = [{}]
        self.tags: list[dict[str, T.Type]] = [{}]
        self.pending: list[ir.TopLevel] = []  # records/enums defined while analysing a decl
        self.anon_count = 0
        # id of a struct, union or enum definition node -> the node and the type it defined:
        # the declarators of `struct S {...} a, *b;` share one definition node
        self.definitions: dict[int, tuple[c_ast.Node, T.Type]] = {}
        self.func: FunctionState | None = None
        self.global_names: set[str] = set()
        # IR name -> symbol of every variable seen so far (names are unique while visible)
        self.var_symbols: dict[str, Symbol] = {}
        # name of an ``overloadable`` function -> its overloads (each with its own IR name)
        self.overload_sets: dict[str, list[Symbol]] = {}
        # program-scope typedef name -> the device-sized type it stands for (size_t, ...)
        self.device_sized_typedefs: dict[str, str] = {}
        # struct or union name -> its first member a kernel parameter may not hold (a bool or
        # device-sized type, at any depth), as "member 'n' of type 'size_t'"
        self.host_unsized_members: dict[str, str] = {}
        # 'struct S' -> typedefs written before S was defined ('typedef struct S S_t;' ahead
        # of 'struct S {...};'): (name, location), declared when the definition comes
        self.waiting_typedefs: dict[str, list[tuple[str, Loc]]] = {}
        # 'struct S' while its members are analysed, innermost last
        self.records_being_defined: list[str] = []

    # ------------------------------------------------------------ locations and errors

    def loc(self, node: c_ast.Node | None) -> Loc:
        coord = getattr(node, "coord", None) if node is not None else None
        if coord is None or not coord.line:
            # pycparser leaves some nodes unplaced (a compound literal, a designated
            # initializer): the first placed node inside is where they start
            for _, child in node.children() if node is not None else ():
                inner = self.loc(child)
                if inner is not NO_LOC:
                    return inner
            return NO_LOC
        col = coord.column or 1
        if callable(self._locate):
            located = self._locate(coord.file, coord.line, col)
            if isinstance(located, Loc):
                return located
        return Loc(coord.file or self.filename, coord.line, col)

    def token_loc(self, node: c_ast.Node | None, position: tuple[int, int] | None,
                  fallback: Loc) -> Loc:
        """The location of a token found through ``self.tokens`` near ``node``."""
        coord = getattr(node, "coord", None)
        if position is None or coord is None:
            return fallback
        line, col = position
        if callable(self._locate):
            located = self._locate(coord.file, line, col)
            if isinstance(located, Loc):
                return located
        return Loc(coord.file or self.filename, line, col)

    def operator_loc(self, right: c_ast.Node, op: str, fallback: Loc) -> Loc:
        """Where the operator ``op`` before the operand ``right`` is written."""
        if self.tokens is None:
            return fallback
        return self.token_loc(right, self.tokens.before(_first_coord_node(right), op), fallback)

    def fail(self, loc: Loc, message: str) -> NoReturn:
        raise SemaError(loc, message)

    def error(self, loc: Loc, message: str) -> None:
        self.diags.error(loc, message)

    def warning(self, loc: Loc, message: str) -> None:
        self.diags.warning(loc, message)

    # ------------------------------------------------------------ scopes

    def push_scope(self) -> None:
        self.scopes.append({})
        self.tags.append({})

    def pop_scope(self) -> None:
        self.scopes.pop()
        self.tags.pop()

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            sym = scope.get(name)
            if sym is not None:
                return sym
        return None

    def lookup_tag(self, name: str) -> T.Type | None:
        for scope in reversed(self.tags):
            t = scope.get(name)
            if t is not None:
                return t
        return None

    def check_name(self, source_name: str, loc: Loc) -> None:
        """Reports a declaration of one of OpenCL C's type keywords as a name (and goes on, so
        that its uses raise no second error)."""
        if source_name in KEYWORD_TYPE_NAMES:
            self.error(loc, f"'{source_name}' is a type keyword of OpenCL C and cannot be "
                            "declared as a name")

    def declare(self, source_name: str, sym: Symbol, loc: Loc) -> None:
        self.check_name(source_name, loc)
        scope = self.scopes[-1]
        previous = scope.get(source_name)
        if previous is not None and not (previous.kind == "func" and sym.kind == "func"):
            self.fail(loc, f"redefinition of '{source_name}'")
        scope[source_name] = sym

    def unique_local_name(self, name: str) -> str:
        """``name`` if no variable of the function (or program-scope name) has it yet, else
        ``name_1``, ``name_2``..."""
        assert self.func is not None
        used = self.func.used_names
        candidate = name
        counter = 0
        while candidate in used or candidate in self.global_names:
            counter += 1
            candidate = f"{name}_{counter}"
        used.add(candidate)
        return candidate

    # ------------------------------------------------------------ hooks for expressions

    @abstractmethod
    def expr(self, node: c_ast.Node) -> ir.Expr:
        """The typed IR of an expression (``ExprSema``, sema_expr.py)."""

    def constant_int(self, node: c_ast.Node, what: str) -> int:
        """Fold ``node`` as an integer constant expression or fail naming ``what``."""
        e = self.expr(node)
        value = fold(e)
        if value is None:
            self.fail(self.loc(node), f"{what} is not an integer constant expression")
        return value

    @property
    def half_values(self) -> bool:
        """Whether 'half' values may be loaded, stored, converted and computed with (the
        cl_khr_fp16 extension); without it 'half' is a storage format reached only through
        pointers and vload_half/vstore_half."""
        return self.extensions.get("cl_khr_fp16", False)

    def fail_half(self, loc: Loc, what: str, instead: str) -> NoReturn:
        self.fail(loc, f"{what} needs the cl_khr_fp16 extension, which ppcl does not support; "
                       f"{instead}")

    # ------------------------------------------------------------ base types

    def base_type(self, node: c_ast.Node, loc: Loc) -> T.Type:
        if isinstance(node, c_ast.IdentifierType):
            return self.named_type(node.names, loc)
        if isinstance(node, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
            return self.tagged_type(node)
        self.fail(loc, "unsupported type specifier")

    def tagged_type(self, node: c_ast.Struct | c_ast.Union | c_ast.Enum) -> T.Type:
        """The type a struct, union or enum specifier names, its definition analysed once
        however many declarators share it."""
        seen = self.definitions.get(id(node))
        if seen is not None:
            return seen[1]
        t = self.enum_type(node) if isinstance(node, c_ast.Enum) else self.record_type(node)
        if getattr(node, "decls", None) is not None or getattr(node, "values", None) is not None:
            self.definitions[id(node)] = (node, t)
        return t

    def named_type(self, names: list[str], loc: Loc) -> T.Type:
        if len(names) == 1:
            name = names[0]
            if name == "void":
                return T.VOID
            if name in ("bool", "_Bool"):
                return T.BOOL
            if name == "sampler_t":
                return T.SAMPLER_T
            if name in T.IMAGE_GEOMETRY:
                return T.ImageType(name)
            if name in NAMED_TYPES:
                return NAMED_TYPES[name]
            scalar = T.scalar_type_named(name)
            if scalar is not None and name not in ("short", "long", "char", "int"):
                return self._check_scalar(scalar, loc)
            vector = T.vector_type_named(name)
            if vector is not None:
                self._check_scalar(vector.elem, loc)
                if vector.elem == T.HALF and not self.half_values:
                    self.fail_half(loc, f"type '{name}'",
                                   f"use vload_{name}/vstore_{name} on a 'half *'")
                return vector
            if name not in _C_WORDS:
                sym = self.lookup(name)
                if sym is not None and sym.kind == "typedef":
                    return sym.type
                for key, waiting in self.waiting_typedefs.items():
                    if any(typedef_name == name for typedef_name, _ in waiting):
                        self.fail(loc, f"'{name}' names the incomplete type '{key}' "
                                       "(define it before use)")
                self.fail(loc, f"unknown type name '{name}'")
        return self._c_spelling(names, loc)

    def _check_scalar(self, t: T.ScalarType, loc: Loc) -> T.ScalarType:
        if t == T.DOUBLE and not self.fp64:
            self.fail(loc, "type 'double' is not supported on this device (no cl_khr_fp64)")
        return t

    def _c_spelling(self, names: list[str], loc: Loc) -> T.ScalarType:
        words = list(names)
        unknown = [w for w in words if w not in _C_WORDS]
        if unknown:
            self.fail(loc, f"invalid type '{' '.join(names)}'")
        unsigned = "unsigned" in words
        if unsigned and "signed" in words:
            self.fail(loc, "'signed' and 'unsigned' cannot be combined")
        longs = words.count("long")
        if longs > 1:
            self.fail(loc, "'long long' is reserved in OpenCL C; use 'long'")
        repeated = [w for w in ("char", "short", "int", "signed", "unsigned") if words.count(w) > 1]
        if repeated:
            self.fail(loc, f"'{repeated[0]}' given twice in type '{' '.join(names)}'")
        # one size at most ('short long', 'char int' and the like were taken as the first)
        sizes = [w for w in ("char", "short", "long") if w in words]
        if len(sizes) > 1 or (sizes == ["char"] and "int" in words):
            self.fail(loc, f"invalid type '{' '.join(names)}'")
        if "char" in words:
            base = "char"
        elif "short" in words:
            base = "short"
        elif longs:
            base = "long"
        else:
            base = "int"
        return T.ScalarType(("u" if unsigned else "") + base)

    # ------------------------------------------------------------ declarators

    def qualifiers(self, quals: list[str], loc: Loc) -> tuple[bool, bool, T.AddressSpace | None]:
        const = "const" in quals
        volatile = "volatile" in quals
        spaces = {SPACE_QUALIFIERS[q] for q in quals if q in SPACE_QUALIFIERS}
        if len(spaces) > 1:
            self.fail(loc, "multiple address spaces specified for one type")
        space = spaces.pop() if spaces else None
        if space is T.AddressSpace.CONSTANT:
            const = True
        return const, volatile, space

    def with_access(self, base: T.Type, quals: list[str], loc: Loc) -> T.Type:
        """``base`` with the access qualifier among ``quals`` (images only; read-only when
        none is written)."""
        written = {q.strip("_") for q in quals if q in IMAGE_QUALIFIERS}
        if not written:
            return base
        if not isinstance(base, T.ImageType):
            self.fail(loc, f"access qualifier '{sorted(written)[0]}' applies only to image "
                           f"types, not to '{base}'")
        if "read_write" in written:
            self.fail(loc, "read_write images are OpenCL C 2.0; ppcl implements OpenCL C 1.2 "
                           "(use __read_only or __write_only)")
        if len(written) > 1:
            self.fail(loc, "an image has one access qualifier")
        return T.ImageType(base.name, written.pop())

    def declarator(self, node: c_ast.Node, *, pointee_default: T.AddressSpace
                   = T.AddressSpace.PRIVATE) -> QualType:
        """The type of a declarator chain; ``pointee_default`` is the space of a pointer's
        target when none is written."""
        loc = self.loc(node)
        if isinstance(node, c_ast.TypeDecl):
            base_loc = self.loc(node.type) if getattr(node.type, "coord", None) else loc
            base = self.with_access(self.base_type(node.type, base_loc), node.quals, loc)
            const, volatile, space = self.qualifiers(node.quals, loc)
            align = self.align_attribute(getattr(node, "attributes", None))
            typedef = self.typedef_named(node)
            if typedef is not None:  # 'typedef const float cfloat;': a cfloat is const
                const, volatile = const or typedef.const, volatile or typedef.volatile
                if space is None and typedef.space is not T.AddressSpace.PRIVATE:
                    # 'typedef __local float lfloat;': an 'lfloat *' points to __local
                    space = typedef.space
            return QualType(base, const, volatile, space, align)
        if isinstance(node, c_ast.PtrDecl):
            if is_function_declarator(node.type):
                self.fail(loc, "pointers to functions are not allowed in OpenCL C")
            inner = self.declarator(node.type, pointee_default=pointee_default)
            self.with_access(T.VOID, node.quals, loc)
            if isinstance(inner.type, T.ImageType):
                self.fail(loc, f"pointer to '{inner.type.name}': images can only be function "
                               "parameters")
            if inner.type == T.SAMPLER_T:
                self.fail(loc, "pointer to 'sampler_t': samplers can only be function "
                               "parameters or variables (section 6.9)")
            const, volatile, space = self.qualifiers(node.quals, loc)
            pointer = T.PointerType(inner.type, inner.space or pointee_default, inner.const,
                                    inner.volatile, restrict="restrict" in node.quals)
            return QualType(pointer, const, volatile, space, inner.align)
        if isinstance(node, c_ast.ArrayDecl):
            inner = self.declarator(node.type, pointee_default=pointee_default)
            if isinstance(inner.type, T.VoidType):
                self.fail(loc, "array of void")
            length: int | None = None
            if node.dim is not None:
                length = self.array_length(node.dim)
            return QualType(T.ArrayType(inner.type, length), inner.const, inner.volatile,
                            inner.space, inner.align)
        if isinstance(node, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
            return QualType(self.base_type(node, loc))
        if is_function_declarator(node):
            self.fail(loc, "function declarators are only allowed for functions")
        self.fail(loc, f"unsupported declarator ({type(node).__name__})")

    def array_length(self, dim: c_ast.Node) -> int:
        e = self.expr(dim)
        value = self.fold_with_constants(e)
        if value is None:
            self.fail(self.loc(dim), "variable length arrays are not supported in OpenCL C")
        if value <= 0:
            self.fail(self.loc(dim), f"array size must be positive (got {value})")
        return value

    def fold_with_constants(self, e: ir.Expr) -> int | None:
        """``fold``, also reading the const integer variables of constant value that ``e``
        names (clang's extension to C's integer constant expressions in array sizes)."""
        value = fold(e)
        if value is not None:
            return value
        return fold(_ConstantValues(self.var_symbols).rewrite(e))

    def constant_value(self, qt: QualType, init: ir.Expr | None) -> int | None:
        """The value a variable declared ``const`` with an integer type and the initializer
        ``init`` always holds, or None."""
        if not qt.const or init is None:
            return None
        if not (isinstance(qt.type, T.ScalarType) and qt.type.is_integer):
            return None
        return self.fold_with_constants(init)

    def type_name(self, node: c_ast.Typename) -> T.Type:
        """The type of a ``Typename`` (casts, sizeof)."""
        qt = self.declarator(node.type)
        return qt.type

    # ------------------------------------------------------------ attributes

    @staticmethod
    def attributes(nodes: list[c_ast.Node] | c_ast.Node | None) -> list[tuple[str, list[c_ast.Node], c_ast.Node]]:
        """(name, argument nodes, node) of each attribute in AttributeSpecifiers/ExprLists."""
        result: list[tuple[str, list[c_ast.Node], c_ast.Node]] = []
        pending: list[c_ast.Node] = []
        if nodes is None:
            return result
        if isinstance(nodes, list):
            pending.extend(nodes)
        else:
            pending.append(nodes)
        for item in pending:
            if isinstance(item, str):
                continue
            exprs = getattr(item, "exprlist", None)
            if exprs is not None:
                item = exprs
            for attr in getattr(item, "exprs", None) or []:
                if isinstance(attr, c_ast.ID):
                    if attr.name:
                        result.append((attr.name, [], attr))
                elif isinstance(attr, c_ast.FuncCall) and isinstance(attr.name, c_ast.ID):
                    args = list(attr.args.exprs) if attr.args is not None else []
                    result.append((attr.name.name, args, attr))
        return result

    def align_attribute(self, attrs: c_ast.Node | None) -> int | None:
        align: int | None = None
        for name, args, node in self.attributes(attrs):
            if name.strip("_") == "aligned":
                align = self._alignment_value(args, node)
        return align

    def _alignment_value(self, args: list[c_ast.Node], node: c_ast.Node) -> int:
        if not args:
            return 16
        value = self.constant_int(args[0], "alignment")
        if value <= 0 or value & (value - 1):
            self.fail(self.loc(node), f"requested alignment {value} is not a power of two")
        return value

    # ------------------------------------------------------------ records and enums

    def record_type(self, node: c_ast.Struct | c_ast.Union) -> T.Type:
        is_union = isinstance(node, c_ast.Union)
        kind = "union" if is_union else "struct"
        loc = self.loc(node)
        if node.decls is None:
            if node.name is None:
                self.fail(loc, f"anonymous {kind} without members")
            found = self.lookup_tag(f"{kind} {node.name}")
            if found is None and f"{kind} {node.name}" in self.records_being_defined:
                self.fail(loc, f"'{kind} {node.name}' refers to itself inside its own "
                               "definition (a linked record); ppcl does not support that")
            if found is None:
                self.fail(loc, f"incomplete type '{kind} {node.name}' (define it before use)")
            return found
        self.records_being_defined.append(f"{kind} {node.name}")
        try:
            fields = self.record_fields(node)
        finally:
            self.records_being_defined.pop()
        return self.define_record(node, fields, kind, loc)

    def record_fields(self, node: c_ast.Struct | c_ast.Union) -> list[T.Field]:
        fields: list[T.Field] = []
        assert node.decls is not None
        for decl in node.decls:
            if not isinstance(decl, c_ast.Decl):
                continue
            floc = self.loc(decl)
            if decl.bitsize is not None:
                self.fail(floc, "bit-fields are not supported in OpenCL C")
            if decl.name is None and not isinstance(decl.type, (c_ast.Struct, c_ast.Union)):
                self.fail(floc, "declaration does not declare anything (a member needs a name)")
            qt = self.declarator(decl.type)
            name = decl.name
            if name is None:
                name = self.anonymous_member_name(qt.type, floc)
            self.check_object_type(qt.type, floc, what=f"member '{name}'")
            names = [n for f in fields for n in T.member_names(f)]
            for n in T.member_names(T.Field(name, qt.type)):
                if n in names:
                    self.fail(floc, f"duplicate member '{n}'")
            align = qt.align
            for attr_name, args, anode in self.attributes(decl.funcspec):
                if attr_name.strip("_") == "aligned":
                    align = self._alignment_value(args, anode)
            fields.append(T.Field(name, qt.type, align))
        return fields

    def define_record(self, node: c_ast.Struct | c_ast.Union, fields: list[T.Field], kind: str,
                      loc: Loc) -> T.Type:
        is_union = kind == "union"
        packed = False
        aligned: int | None = None
        for attr_name, args, anode in self.attributes(getattr(node, "attrib", None)):
            if attr_name.strip("_") == "packed":
                packed = True
            elif attr_name.strip("_") == "aligned":
                aligned = self._alignment_value(args, anode)
        name = node.name
        if name is None:
            name = T.tagless_name(kind, self.anon_count)
            self.anon_count += 1
        record = T.StructType(name, tuple(fields), is_union, packed, aligned)
        unsized = self.host_unsized_member(node.decls, fields)
        if unsized is not None:
            self.host_unsized_members[name] = unsized
        if node.name is not None:
            key = f"{kind} {node.name}"
            if key in self.tags[-1]:
                self.fail(loc, f"redefinition of '{key}'")
            self.tags[-1][key] = record
        self.pending.append(ir.RecordDef(record, loc=loc))
        if node.name is not None:
            for typedef_name, typedef_loc in self.waiting_typedefs.pop(f"{kind} {node.name}", []):
                self.declare(typedef_name, Symbol("typedef", typedef_name, record,
                                                  loc=typedef_loc), typedef_loc)
                self.pending.append(ir.TypeDef(typedef_name, record, loc=typedef_loc))
        return record

    @staticmethod
    def forward_record(node: c_ast.Node) -> c_ast.Struct | c_ast.Union | None:
        """The record a declaration only names, without members ('struct S;', the target of
        'typedef struct S S_t;'), or None."""
        if isinstance(node, c_ast.TypeDecl) and not node.quals:
            node = node.type
        if isinstance(node, c_ast.Struct | c_ast.Union) and node.decls is None \
                and node.name is not None:
            return node
        return None

    def waiting_typedef(self, name: str, node: c_ast.Node, loc: Loc) -> bool:
        """Whether ``typedef struct S name;`` names a record not defined yet; it is then kept
        to be declared with the definition of S, as C completes the type there."""
        record = self.forward_record(node)
        if record is None:
            return False
        kind = "union" if isinstance(record, c_ast.Union) else "struct"
        key = f"{kind} {record.name}"
        if self.lookup_tag(key) is not None:
            return False
        self.waiting_typedefs.setdefault(key, []).append((name, loc))
        return True

    def anonymous_member_name(self, t: T.Type, loc: Loc) -> str:
        """A C11 anonymous struct or union member (``union { float f; int i; };`` inside a
        struct) gets a generated name; its members are found through it (``v.f``)."""
        if not isinstance(t, T.StructType) or not T.is_tagless_record_name(t.name):
            self.fail(loc, "declaration does not declare anything (a member needs a name)")
        name = f"{T.ANON_MEMBER_PREFIX}{self.anon_count}"
        self.anon_count += 1
        return name

    def device_sized_spelling(self, node: c_ast.Node) -> str | None:
        """The device-sized type (size_t, ...) a plain declarator names, directly or through
        typedefs; None for any other type."""
        spelled = _type_spelling(node)
        if spelled in _DEVICE_SIZED_TYPES:
            return spelled
        return self.device_sized_typedefs.get(spelled or "")

    def typedef_named(self, node: c_ast.Node) -> Symbol | None:
        """The typedef a plain declarator names (``vec_t v``), or None."""
        spelled = _type_spelling(node)
        if spelled is None:
            return None
        sym = self.lookup(spelled)
        return sym if sym is not None and sym.kind == "typedef" else None

    def typedef_spelling(self, node: c_ast.Node) -> str:
        """How a parameter declarator spells its type where a typedef names it (``vec_t`` for
        ``vec_t v``, ``vec_t*`` for ``__global vec_t *p`` or ``vec_t p[]``), as OpenCL
        compilers report argument type names; empty for a type spelt by its own name, for
        a typedef of a pointer (whose target is reported by its own name) and for a const or
        volatile typedef (reported by the type's own name, as type names are unqualified)."""
        suffix = ""
        if isinstance(node, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            node, suffix = node.type, "*"
        sym = self.typedef_named(node)
        if sym is None or isinstance(sym.type, T.PointerType) or sym.const or sym.volatile:
            return ""  # the name of a qualified typedef would carry its qualifiers
        return sym.name + suffix

    def host_unsized_member(self, decls: list[c_ast.Node], fields: list[T.Field]) -> str | None:
        """The first member (of a record's ``decls``, typed as ``fields``) whose size the host
        cannot know: a bool or device-sized type, also as array elements or inside a member
        record. OpenCL C 1.2 (6.9.k) forbids such records as kernel parameters."""
        members = [d for d in decls if isinstance(d, c_ast.Decl)]
        for decl, member in zip(members, fields, strict=True):
            declarator = decl.type
            while isinstance(declarator, c_ast.ArrayDecl):
                declarator = declarator.type
            elem = member.type
            while isinstance(elem, T.ArrayType):
                elem = elem.elem
            sized = self.device_sized_spelling(declarator)
            if sized is not None:
                return f"member '{member.name}' of type '{sized}'"
            if elem == T.BOOL:
                return f"member '{member.name}' of type 'bool'"
            if isinstance(elem, T.StructType) and elem.name in self.host_unsized_members:
                return self.host_unsized_members[elem.name]
        return None

    def enum_type(self, node: c_ast.Enum) -> T.Type:
        loc = self.loc(node)
        if node.values is None:
            found = self.lookup_tag(f"enum {node.name}")
            if found is None:
                self.fail(loc, f"incomplete type 'enum {node.name}'")
            return found
        enumerators: list[tuple[str, int]] = []
        next_value = 0
        for enumerator in node.values.enumerators:
            if enumerator.value is not None:
                next_value = self.constant_int(enumerator.value, "enumerator value")
            eloc = self.loc(enumerator)
            self.declare(enumerator.name, Symbol("enum", enumerator.name, T.INT,
                                                 value=next_value, const=True, loc=eloc), eloc)
            if self.func is None:
                self.global_names.add(enumerator.name)
            enumerators.append((enumerator.name, next_value))
            next_value += 1
        name = node.name
        if name is None:
            name = T.tagless_name("enum", self.anon_count)
            self.anon_count += 1
        enum = T.EnumType(name, tuple(enumerators))
        if node.name is not None:
            self.tags[-1][f"enum {node.name}"] = enum
        self.pending.append(ir.EnumDef(enum, loc=loc))
        return enum

    # ------------------------------------------------------------ object checks

    def check_object_type(self, t: T.Type, loc: Loc, *, what: str) -> None:
        """Types an object (variable, parameter, member) may not have in OpenCL C 1.2."""
        if isinstance(t, T.VoidType):
            self.fail(loc, f"{what} has type 'void'")
        if isinstance(t, T.ArrayType):
            if t.elem == T.SAMPLER_T:
                self.fail(loc, f"{what} is an array of samplers, which OpenCL C does not allow "
                               "(section 6.9)")
            self.check_object_type(t.elem, loc, what=what)
            return
        if isinstance(t, T.ImageType) and not what.startswith("parameter"):
            self.fail(loc, f"{what} has type '{t.name}': images can only be function "
                           "parameters")
        if t == T.SAMPLER_T and what.startswith("member"):
            self.fail(loc, f"{what} has type 'sampler_t': samplers can only be function "
                           "parameters or variables (section 6.9)")
        elem = T.scalar_of(t)
        if elem == T.HALF and not self.half_values:
            self.fail(loc, f"{what} has type '{t}': 'half' may only be used through pointers "
                           "(use vload_half/vstore_half)")


# Scalar types whose size the device picks; OpenCL C 1.2 (6.9.k) forbids them as kernel
# parameters, as it does bool and half.
_DEVICE_SIZED_TYPES = ("size_t", "ptrdiff_t", "intptr_t", "uintptr_t")


def _type_spelling(node: c_ast.Node) -> str | None:
    """The one type name a plain declarator is spelt with (``size_t n``), or None."""
    if not isinstance(node, c_ast.TypeDecl) or not isinstance(node.type, c_ast.IdentifierType):
        return None
    names = node.type.names
    return names[0] if len(names) == 1 else None


def is_function_declarator(node: c_ast.Node) -> bool:
    """Whether a declarator declares a function (pycparserext has its own node for some)."""
    return isinstance(node, c_ast.FuncDecl) or type(node).__name__ == "FuncDeclExt"


def _first_coord_node(node: c_ast.Node) -> c_ast.Node:
    """The sub-node whose coordinate is the expression's first token."""
    while isinstance(node, (c_ast.BinaryOp, c_ast.Assignment, c_ast.TernaryOp, c_ast.ArrayRef,
                            c_ast.StructRef, c_ast.FuncCall)) or (
            isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "p--")):
        if isinstance(node, c_ast.BinaryOp):
            node = node.left
        elif isinstance(node, c_ast.Assignment):
            node = node.lvalue
        elif isinstance(node, c_ast.TernaryOp):
            node = node.cond
        elif isinstance(node, (c_ast.ArrayRef, c_ast.StructRef, c_ast.FuncCall)):
            node = node.name
        else:
            node = node.expr
    return node


class _ConstantValues(Rewriter):
    """Puts the values of const integer variables of constant value in place of their uses."""

    def __init__(self, symbols: dict[str, Symbol]):
        self.symbols = symbols

    def rewrite_VarRef(self, e: ir.VarRef) -> ir.Expr:
        sym = self.symbols.get(e.name)
        if sym is None or sym.const_value is None:
            return e
        return ir.IntLit(e.type, sym.const_value, loc=e.loc)
