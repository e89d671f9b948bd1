"""Parsing preprocessed OpenCL C into a pycparser AST.

pycparserext's ``OpenCLCParser`` does the work. Two adjustments are made here:

* OpenCL's built-in type names (``float4``, ``uint``, ``size_t``, ``event_t`` ...) must be known
  to the parser as type names. They are handed to the parser as initial typedef symbols instead of
  a typedef prelude in the text, so line and column numbers of the user's source stay exact.
  The semantic analysis maps these names to IR types (see ``sema_types``).
* Syntax errors become located diagnostics that read like a C compiler's: a missing ``;`` or
  ``)`` is reported right after the previous token ("expected ';'"), other errors at the
  offending token ("syntax error before 'X'"). ``vec_type_hint(float4)`` takes a type name as an
  attribute argument, which pycparserext cannot parse; the subclass accepts it as an identifier.

The parser is built once per process (``parser()``); it is not thread-safe, so a lock guards it.
"""

from __future__ import annotations

import threading
from typing import Any

from pycparser import c_ast
from pycparser.c_parser import _TYPE_QUALIFIER, ParseError
from pycparserext.ext_c_lexer import OpenCLCLexer
from pycparserext.ext_c_parser import (
    _GNU_TYPE_QUALIFIERS,
    _OCL_TYPE_QUALIFIERS,
    AttributeSpecifier,
    OpenCLCParser,
    StructExt,
)

from ppcl.compiler.deepstack import on_deep_stack
from ppcl.compiler.diagnostics import Diagnostics, Loc

VECTOR_ELEMENT_NAMES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                        "float", "double", "half")

VECTOR_TYPE_NAMES: frozenset[str] = frozenset(
    f"{base}{width}" for base in VECTOR_ELEMENT_NAMES for width in (2, 3, 4, 8, 16))

# OpenCL C's built-in type names that are keywords, not typedefs (as ``uint`` or ``float4``
# are, which an inner scope may shadow as C allows): ``int half = 1;`` is an error
KEYWORD_TYPE_NAMES: frozenset[str] = frozenset(
    {"half", "bool", "event_t", "sampler_t", "image1d_t", "image1d_array_t", "image1d_buffer_t",
     "image2d_t", "image2d_array_t", "image3d_t"})

# Type names that are not C keywords but name OpenCL built-in types.
BUILTIN_TYPE_NAMES: frozenset[str] = frozenset(
    VECTOR_TYPE_NAMES | KEYWORD_TYPE_NAMES
    | {"uchar", "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t",
       "cl_mem_fence_flags"}
)

_TOKEN_SPELLING = {
    "SEMI": ";", "RPAREN": ")", "LPAREN": "(", "RBRACE": "}", "LBRACE": "{", "RBRACKET": "]",
    "LBRACKET": "[", "COLON": ":", "COMMA": ",", "ID": "identifier", "WHILE": "while",
}

_TYPE_TOKENS = {"TYPEID", "INT", "FLOAT", "DOUBLE", "CHAR", "SHORT", "LONG", "UNSIGNED", "SIGNED",
                "VOID", "_BOOL"}

_MESSAGES = {
    "Invalid expression": "expected expression",
    "Invalid declaration": "expected a declaration",
    "Missing type in declaration": "expected a type name",
}

# Qualifiers that may follow a '*' in a declarator: C's, GNU's and OpenCL's address spaces.
_POINTER_QUALIFIERS = _TYPE_QUALIFIER | _GNU_TYPE_QUALIFIERS | _OCL_TYPE_QUALIFIERS

# Tokens that clang expects right after the previous token; their absence is reported there.
_CLOSING = {"SEMI", "RPAREN", "RBRACE", "RBRACKET", "COLON"}


class SyntaxErrorAt(Exception):
    """A syntax error at (line, col) of the parsed text's coordinates (after #line markers)."""

    def __init__(self, file: str, line: int, col: int, message: str):
        super().__init__(f"{file}:{line}:{col}: {message}")
        self.file = file
        self.line = line
        self.col = col
        self.message = message


# GNU spellings of C keywords, which clang takes in OpenCL C as in C (generated and ported
# code writes 'float *__restrict__ p' and '__inline__'); pycparserext's OpenCL lexer knows
# none of them. Each is lexed as the keyword it spells, so nothing after the lexer sees them.
_GNU_KEYWORD_SPELLINGS = {
    "__restrict__": ("RESTRICT", "restrict"), "__restrict": ("RESTRICT", "restrict"),
    "__inline__": ("INLINE", "inline"), "__inline": ("INLINE", "inline"),
    "__const": ("CONST", "const"), "__const__": ("CONST", "const"),
    "__volatile__": ("VOLATILE", "volatile"), "__volatile": ("VOLATILE", "volatile"),
    "__signed__": ("SIGNED", "signed"), "__signed": ("SIGNED", "signed"),
}


class _Lexer(OpenCLCLexer):  # type: ignore[misc]
    """pycparserext's OpenCL lexer, with the GNU spellings of C keywords."""

    def token(self) -> Any:
        tok = super().token()
        if tok is not None and tok.type == "ID":
            keyword = _GNU_KEYWORD_SPELLINGS.get(tok.value)
            if keyword is not None:
                tok.type, tok.value = keyword
        return tok


class _Parser(OpenCLCParser):  # type: ignore[misc]
    """OpenCLCParser with C-compiler-like syntax errors and type names in attributes."""

    lexer_class = _Lexer

    def __init__(self) -> None:
        super().__init__()
        self._vector_typedefs: set[str] = set()

    def _lex_error_func(self, msg: str, line: int, column: int) -> None:
        # Raised here, not through _parse_error: that peeks at the next token, which lexes the
        # same bad character again and recurses until the interpreter's limit.
        if msg.startswith("Illegal character "):
            message = f"unexpected character {msg[len('Illegal character '):]} in source"
        elif msg.startswith("Comments are not supported"):
            # the preprocessor blanks every closed comment: this one runs to the end of the file
            message = "unterminated /* comment"
        else:
            message = msg[:1].lower() + msg[1:]
        raise SyntaxErrorAt(self.clex.filename, line, column, message)

    def _lex_on_rbrace_func(self) -> None:
        # pycparser asserts that a '}' closes a scope: one closing nothing ended the compile
        # with a bare AssertionError
        if len(self._scope_stack) <= 1:
            lexer = self.clex
            line = getattr(lexer, "_lineno", 1)
            column = getattr(lexer, "_pos", 1) - getattr(lexer, "_line_start", 0)
            raise SyntaxErrorAt(lexer.filename, line, max(1, column),
                                "'}' closes nothing (one '}' too many before it?)")
        super()._lex_on_rbrace_func()

    # Attributes written after a struct's closing brace belong to the struct type, as in GCC
    # and clang (``typedef struct {...} __attribute__((packed)) S;``); the parser leaves them
    # among the declaration's function specifiers, where a typedef drops them and a struct
    # declaration ignores them. Both ways a declaration is built move them first.

    def _parse_struct_or_union_specifier(self) -> Any:
        # pycparserext keeps the attributes of a struct and drops those of a union: a packed or
        # aligned union got its natural layout, and a kernel read a host record of the other
        # layout at the wrong offsets. ppcl lays out no union by attributes, so it says so.
        if self._peek_type() == "UNION":
            k = 3 if self._peek_type(2) in ("ID", "TYPEID") else 2
            if self._peek_type(k) in _ATTRIBUTE_TOKENS:
                _refuse_union_attributes(self._tok_coord(self._peek(k)))
        return super()._parse_struct_or_union_specifier()

    def _parse_decl_body_with_spec(self, spec: Any, saw_type: bool) -> Any:
        _attach_trailing_attributes(spec)
        return super()._parse_decl_body_with_spec(spec, saw_type)

    def _build_declarations(self, spec: Any, decls: list[Any],
                            typedef_namespace: bool = False) -> Any:
        _attach_trailing_attributes(spec)
        # pycparser takes a first declarator without a name from the last type specifier
        # ('T x' where T names a typedef) and reads that specifier's names; when it is a struct,
        # union or enum ('int struct s;') that ended the build in an AttributeError
        first = decls[0]
        if first.get("bitsize") is None and _lacks_declarator_name(first["decl"]):
            self._reject_type_after_type(spec["type"])
            if not spec["type"] or not isinstance(spec["type"][-1], c_ast.IdentifierType):
                self._parse_error("Invalid declaration", None)
        declarations = super()._build_declarations(spec, decls, typedef_namespace)
        for declaration in declarations:
            if isinstance(declaration, c_ast.Typedef):
                self._note_typedef(declaration)
        return declarations

    # A typedef of a vector type names a vector type too: '(V)(1, 2, 3, 4).x' is a vector
    # literal where 'typedef float4 V;' is seen. The parser has only the typedef's syntax,
    # so it keeps the names declared as (typedefs of) vector type names.

    def parse(self, text: str, filename: str = "", **kwargs: Any) -> Any:
        self._vector_typedefs = set()
        return super().parse(text, filename, **kwargs)

    def _note_typedef(self, typedef: c_ast.Typedef) -> None:
        if self._names_vector_type(typedef.type):
            self._vector_typedefs.add(typedef.name)
        else:
            self._vector_typedefs.discard(typedef.name)

    def _names_vector_type(self, decl: Any) -> bool:
        """Whether a declarator is a plain vector type name or a typedef of one."""
        if not isinstance(decl, c_ast.TypeDecl) or not isinstance(decl.type, c_ast.IdentifierType):
            return False
        names = decl.type.names
        return len(names) == 1 and self._is_vector_type_name(names[0])

    def _is_vector_type_name(self, name: str) -> bool:
        return name in VECTOR_TYPE_NAMES or name in self._vector_typedefs

    def _build_parameter_declaration(self, spec: Any, decl: Any, spec_coord: Any) -> Any:
        # the same look at the last specifier's names, for an unnamed parameter ('int enum e')
        self._reject_type_after_type(spec["type"])
        return super()._build_parameter_declaration(spec, decl, spec_coord)

    def _reject_type_after_type(self, types: list[Any]) -> None:
        """A struct, union or enum specifier after another type specifier: an error."""
        if len(types) < 2 or isinstance(types[-1], c_ast.IdentifierType):
            return
        last = types[-1]
        coord = last.coord
        if coord is None:
            self._parse_error("Invalid multiple types specified", None)
        raise SyntaxErrorAt(coord.file, coord.line, coord.column or 1,
                            f"cannot combine '{_type_spelling(last)}' with the type "
                            f"'{_type_spelling(types[-2])}' before it")

    def _expect(self, token_type: str) -> Any:
        tok = self._peek()
        if tok is not None and tok.type == token_type:
            return self._advance()
        expected = _TOKEN_SPELLING.get(token_type, token_type.lower())
        self._unknown_type_name()
        if token_type in _CLOSING:
            prev = self._previous_token()
            if prev is not None:
                raise SyntaxErrorAt(self.clex.filename, prev.lineno,
                                    prev.column + len(prev.value), f"expected '{expected}'")
        self._syntax_error(tok, f"expected '{expected}'")

    def _previous_token(self) -> Any:
        stream = self._tokens
        index = stream.mark() - 1
        if index < 0:
            return None
        return stream._buffer[index]

    def _unknown_type_name(self) -> None:
        """``name name`` where the first is no type: clang's "unknown type name"."""
        tok = self._peek()
        prev = self._previous_token()
        if tok is not None and prev is not None and tok.type == "ID" and prev.type == "ID":
            raise SyntaxErrorAt(self.clex.filename, prev.lineno, prev.column,
                                f"unknown type name '{prev.value}'")

    def _syntax_error(self, tok: Any, message: str | None = None) -> Any:
        if tok is None:
            prev = self._previous_token()
            line, col = (prev.lineno, prev.column + len(prev.value)) if prev else (1, 1)
            raise SyntaxErrorAt(self.clex.filename, line, col,
                                message or "unexpected end of input")
        text = message or f"syntax error before '{tok.value}'"
        raise SyntaxErrorAt(self.clex.filename, tok.lineno, tok.column, text)

    def _parse_error(self, msg: str, coord: Any) -> Any:
        self._unknown_type_name()
        tok = self._peek()
        if msg.startswith("before: "):
            detail = msg[len("before: "):]
            if tok is not None and tok.value == detail:
                self._syntax_error(tok)
            if coord is not None and not isinstance(coord, str):
                raise SyntaxErrorAt(coord.file, coord.line, coord.column or 1,
                                    f"syntax error before '{detail}'")
        if tok is None:
            self._syntax_error(None)
        message = _MESSAGES.get(msg, msg[:1].lower() + msg[1:] if msg else "syntax error")
        raise SyntaxErrorAt(self.clex.filename, tok.lineno, tok.column,
                            f"{message} before '{tok.value}'")

    def _scan_declarator_name_info(self) -> Any:
        """pycparserext's look-ahead for a declarator's name skips C and GNU qualifiers after
        a ``*`` but not OpenCL's address spaces (``constant char * constant names[]``,
        ``int * __private p``): where one follows a ``*``, the stars and their qualifiers are
        skipped here and the rest of the scan is pycparserext's."""
        if not self._star_with_address_space():
            return super()._scan_declarator_name_info()
        while self._accept("TIMES"):
            while self._peek_type() in _POINTER_QUALIFIERS:
                self._advance()
        return super()._scan_declarator_name_info()

    def _star_with_address_space(self) -> bool:
        k = 1
        while self._peek_type(k) == "TIMES":
            k += 1
            while self._peek_type(k) in _POINTER_QUALIFIERS:
                if self._peek_type(k) in _OCL_TYPE_QUALIFIERS:
                    return True
                k += 1
        return False

    # A vector literal ('(float4)(a, b, c, d)') is one primary expression, as clang parses it:
    # a swizzle, subscript or other postfix operator after it applies to the vector. C's cast
    # grammar reads '(float4)(1, 2, 3, 4).xy' as a cast of '(1, 2, 3, 4).xy', a swizzle of an
    # int, and refused it.

    def _parse_cast_expression(self) -> Any:
        if not self._vector_type_in_parens():
            return super()._parse_cast_expression()
        mark = self._mark()
        literal = self._vector_literal_type() is not None
        self._reset(mark)
        if literal:
            return self._parse_unary_expression()
        return super()._parse_cast_expression()

    def _parse_primary_expression(self) -> Any:
        if not self._vector_type_in_parens():
            return super()._parse_primary_expression()
        mark = self._mark()
        found = self._vector_literal_type()
        if found is None:
            self._reset(mark)
            return super()._parse_primary_expression()
        typ, lparen = found
        components = super()._parse_primary_expression()  # the parenthesized components
        return c_ast.Cast(typ, components, self._tok_coord(lparen))

    def _vector_type_in_parens(self) -> bool:
        """Whether '(' and a vector type name (built in or a typedef of one) come next (a quick look first: the
        full one parses a type name)."""
        if self._peek_type() != "LPAREN" or self._peek_type(2) != "TYPEID":
            return False
        return self._is_vector_type_name(self._peek(2).value)

    def _vector_literal_type(self) -> tuple[Any, Any] | None:
        """(type name, its '(' token) when a parenthesized vector type name followed by a
        parenthesized expression comes next, past the type name; None otherwise (the position
        is then unknown). '(uchar8)(uchar)255' is a cast of a cast."""
        found = self._try_parse_paren_type_name()
        if found is None or self._peek_type() != "LPAREN":
            return None
        components = self._mark()
        cast_follows = self._try_parse_paren_type_name() is not None
        self._reset(components)
        if cast_follows:
            return None
        typ, _, lparen = found
        if not self._names_vector_type(typ.type):
            return None
        return typ, lparen

    # OpenCL 2.0 and vendor compilers take attributes before a statement, loop hints such as
    # ``__attribute__((opencl_unroll_hint(4))) for (...)`` or ``xcl_pipeline_loop``; clang
    # accepts them in OpenCL C 1.2 too. They do not change what the statement computes, and
    # ppcl leaves unrolling to its own passes and the C compiler, so they are skipped.

    def _parse_block_item(self) -> Any:
        after = self._after_attributes()
        if after is not None and self._peek_type(after) in _ATTRIBUTED_STATEMENTS:
            for _ in range(after - 1):
                self._advance()
        return super()._parse_block_item()

    def _after_attributes(self) -> int | None:
        """The look-ahead position just past the attribute specifiers that come next, or None
        when none comes next (or one is not closed)."""
        k = 1
        while self._peek_type(k) in _ATTRIBUTE_TOKENS:
            k += 1
            depth = 0
            while True:
                kind = self._peek_type(k)
                if kind is None:
                    return None
                k += 1
                depth += {"LPAREN": 1, "RPAREN": -1}.get(kind, 0)
                if depth == 0:
                    break
        return k if k > 1 else None

    def _parse_attribute(self) -> Any:
        tok = self._peek()
        if (tok is not None and tok.type == "ID" and self._peek_type(2) == "LPAREN"
                and self._peek_type(3) in _TYPE_TOKENS and self._peek_type(4) == "RPAREN"):
            self._advance()
            self._advance()
            type_tok = self._advance()
            self._advance()
            arg = c_ast.ID(name=type_tok.value, coord=self._tok_coord(type_tok))
            return c_ast.FuncCall(c_ast.ID(name=tok.value, coord=self._tok_coord(tok)),
                                  c_ast.ExprList([arg], self._tok_coord(type_tok)),
                                  coord=self._tok_coord(tok))
        return super()._parse_attribute()


def _attach_trailing_attributes(spec: Any) -> None:
    """Move the attribute specifiers of a declaration written after a struct body onto the
    struct (pycparser's declaration specifiers ``spec``, changed in place)."""
    records = spec["type"]
    spec["type"] = [_with_trailing_attributes(t, spec["function"]) for t in records]
    spec["function"] = [a for a in spec["function"]
                        if not any(_attributes_follow(a, t) for t in records)]


def _attributes_follow(attribute: Any, record: Any) -> bool:
    """Whether an attribute specifier is written after the body of a struct definition (after
    a union's: refused, see ``_refuse_union_attributes``)."""
    if not isinstance(attribute, AttributeSpecifier) \
            or not isinstance(record, c_ast.Struct | c_ast.Union):
        return False
    if record.decls is None or record.coord is None:
        return False
    at = getattr(attribute.exprlist, "coord", None)
    follows = at is not None and (at.line, at.column) > (record.coord.line, record.coord.column)
    if follows and isinstance(record, c_ast.Union):
        _refuse_union_attributes(at)
    return follows


_ATTRIBUTE_TOKENS = ("__ATTRIBUTE__", "__ATTRIBUTE")

# The statements an attribute specifier may precede (a declaration keeps its attributes).
_ATTRIBUTED_STATEMENTS = {"FOR", "WHILE", "DO", "IF", "SWITCH", "LBRACE", "SEMI", "RETURN",
                          "BREAK", "CONTINUE"}


def _refuse_union_attributes(coord: Any) -> None:
    raise SyntaxErrorAt(coord.file, coord.line, coord.column or 1,
                        "attributes of a union (packed, aligned) are not supported: ppcl would "
                        "lay it out without them; use a struct, or a union without attributes")


def _with_trailing_attributes(record: Any, specifiers: list[Any]) -> Any:
    """``record`` with the attribute specifiers written after its body joined to its own."""
    trailing = [a for a in specifiers if _attributes_follow(a, record)]
    if not trailing:
        return record
    merged = StructExt.from_pycparser(record)
    own = getattr(record, "attrib", None)
    exprs = list(own.exprlist.exprs) if own is not None else []
    for attribute in trailing:
        exprs.extend(attribute.exprlist.exprs)
    merged.attrib = AttributeSpecifier(c_ast.ExprList(exprs, trailing[0].exprlist.coord))
    return merged


def _lacks_declarator_name(decl: Any) -> bool:
    """True for a missing declarator or one without a name (an abstract declarator)."""
    if decl is None:
        return True
    if isinstance(decl, (c_ast.Enum, c_ast.Struct, c_ast.Union, c_ast.IdentifierType)):
        return False
    while not isinstance(decl, c_ast.TypeDecl):
        decl = decl.type
    return decl.declname is None


def _type_spelling(node: Any) -> str:
    if isinstance(node, c_ast.IdentifierType):
        return " ".join(node.names)
    kind = {c_ast.Struct: "struct", c_ast.Union: "union", c_ast.Enum: "enum"}.get(type(node), "")
    return f"{kind} {node.name}" if node.name else kind


_PARSER: _Parser | None = None
_LOCK = threading.Lock()


def parser() -> _Parser:
    """The process-wide parser (built on first use)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = _Parser()
    return _PARSER


class Tokens:
    """The tokens of one parse, to find operator and parenthesis positions that pycparser's
    AST does not keep (it gives a binary operator the coordinate of its left operand)."""

    def __init__(self, tokens: list[Any]):
        self.tokens = [t for t in tokens if t is not None]
        self.index: dict[tuple[int, int], int] = {}
        for i, tok in enumerate(self.tokens):
            self.index.setdefault((tok.lineno, tok.column), i)

    def _at(self, coord: Any) -> int | None:
        """Index of the token at ``coord`` (a pycparser Coord, or a node carrying one)."""
        if isinstance(coord, c_ast.Node):
            coord = coord.coord
        if coord is None:
            return None
        return self.index.get((coord.line, coord.column))

    def before(self, coord: Any, value: str, limit: int = 64) -> tuple[int, int] | None:
        """Position of the nearest token spelled ``value`` before the token at ``coord``."""
        i = self._at(coord)
        if i is None:
            return None
        for j in range(i - 1, max(i - limit, 0) - 1, -1):
            if self.tokens[j].value == value:
                return self.tokens[j].lineno, self.tokens[j].column
        return None

    def previous(self, coord: Any) -> tuple[int, int] | None:
        i = self._at(coord)
        if i is None or i == 0:
            return None
        return self.tokens[i - 1].lineno, self.tokens[i - 1].column

    def closing_paren(self, coord: Any) -> tuple[int, int] | None:
        """Position of the ``)`` closing the parenthesis the token at ``coord`` is inside."""
        i = self._at(coord)
        if i is None:
            return None
        depth = 0
        for tok in self.tokens[i:]:
            if tok.value in ("(", "[", "{"):
                depth += 1
            elif tok.value in (")", "]", "}"):
                if depth == 0:
                    return (tok.lineno, tok.column) if tok.value == ")" else None
                depth -= 1
        return None


def parse(text: str, filename: str, diagnostics: Diagnostics,
          locate: Any = None) -> c_ast.FileAST | None:
    ast, _ = parse_with_tokens(text, filename, diagnostics, locate)
    return ast


def parse_with_tokens(text: str, filename: str, diagnostics: Diagnostics,
                      locate: Any = None) -> tuple[c_ast.FileAST | None, Tokens]:
    """Parse ``text``; on a syntax error report it and return None.

    ``locate(file, line, col) -> Loc`` maps a coordinate of the text back to the original
    source where macro expansion moved columns; by default coordinates are taken as they are.
    """
    with _LOCK:
        p = parser()
        try:
            ast = p.parse(text, filename, initial_type_symbols=BUILTIN_TYPE_NAMES)
            return ast, Tokens(p._tokens._buffer)
        except SyntaxErrorAt as exc:
            loc = locate(exc.file, exc.line, exc.col) if locate else Loc(exc.file, exc.line, exc.col)
            diagnostics.error(loc, exc.message)
        except ParseError as exc:
            diagnostics.error(_loc_of_parse_error(str(exc), filename), _message_of(str(exc)))
        except RecursionError:
            if not on_deep_stack():
                raise  # compiled again on a deep stack
            tok = _current_token(p)
            line, col = (tok.lineno, tok.column) if tok is not None else (1, 1)
            file = p.clex.filename or filename
            loc = locate(file, line, col) if locate else Loc(file, line, col)
            diagnostics.error(loc, "program nests too deeply to parse")
    return None, Tokens([])


def _current_token(p: _Parser) -> Any:
    """The token the parser had reached (the next one it would read), or the last one."""
    stream = p._tokens
    buffer = stream._buffer
    if not buffer:
        return None
    return buffer[min(stream.mark(), len(buffer) - 1)]


def _loc_of_parse_error(text: str, filename: str) -> Loc:
    parts = text.split(":")
    if len(parts) >= 4 and parts[1].strip().isdigit() and parts[2].strip().isdigit():
        return Loc(parts[0], int(parts[1]), int(parts[2]))
    return Loc(filename, 1, 1)


def _message_of(text: str) -> str:
    detail = text.rsplit(":", 1)[-1].strip()
    return f"syntax error ({detail})" if detail else "syntax error"
