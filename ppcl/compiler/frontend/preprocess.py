"""The OpenCL C preprocessor: build options, predefined macros, includes, pragmas, line mapping.

pcpp (a pure-Python C preprocessor) does the macro work. This module supplies what OpenCL needs
around it and writes the output itself instead of using ``pcpp.Preprocessor.write``:

* every output line keeps the columns of the original line. Whitespace tokens are written as they
  were, comments become blanks of the same width (newlines kept), a backslash-newline becomes a
  newline. On a line with a macro expansion the tokens after a longer expansion move right; the
  per-line column map of :class:`PreprocessedSource` still maps every output column back (tokens
  of an expansion map to the column of the macro name).
* ``#line N "file"`` markers are written wherever the next output line is not the line after
  the previous one in the same file (short gaps in one file are filled with blank lines instead),
  so pycparser's ``Coord`` of every node names the original file, line and, on lines without
  macro expansion, column. :attr:`PreprocessedSource.line_map` gives the same mapping per output
  line, and :meth:`PreprocessedSource.locate` maps an output position back.
* ``#pragma`` lines never reach the output (pycparser accepts pragmas only in some positions):
  ``OPENCL EXTENSION`` and ``OPENCL FP_CONTRACT`` are recorded as settings, every other pragma
  (``unroll`` ...) is kept in :attr:`PreprocessedSource.pragmas` with its location.

Include search for ``#include "x"``: the ``extra_headers`` given by the caller (Program.compile
headers) first, then the directory of the including file (the current directory for a source
that is not a real file), then the ``-I`` directories; ``#include <x>`` skips the including
file's directory, and then takes a header ppcl provides (``headers.py``:
``pyopencl-complex.h``).

Cost: a ``pcpp.Preprocessor`` is built per call (under a millisecond: pcpp caches its lexer and
parser tables); the predefined macros are parsed once per configuration and shared.
pcpp itself is the cost: a 100-line kernel takes about 12-14 ms here (20-25 ms
on a loaded machine), the same as bare
``pcpp.Preprocessor().parse(); write()`` on that text (its ply lexer and its token-list macro
expansion run at about 0.2 ms a line); the writer below adds about 15%. Repeated builds of the
same source are meant to hit the program cache, keyed with ``BuildOptions.canonical()``.

Limitations: a macro invocation whose arguments span several lines is written on the line of the
macro name, so tokens following it on the last of those lines map to the first line. Trigraphs are
replaced before lexing (as pcpp does), which shifts columns on a line that has one. Errors pcpp
detects itself (unterminated ``#if``, wrong macro argument count) come with a line only; they are
placed at the first non-blank column of that line. A ``#line`` in the source renames the lines of
the output and of ``#error``, ``#warning`` and unknown directives; the preprocessor's other
diagnostics keep physical lines.
"""

from __future__ import annotations

import bisect
import copy
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pcpp
from pcpp.parser import Action, OutputDirective

from ppcl.compiler.diagnostics import NO_LOC, Diagnostics, Loc
from ppcl.compiler.frontend.headers import BUILTIN_HEADERS
from ppcl.compiler.frontend.limits import MAX_EXPANSION_TOKENS, MAX_INCLUDE_DEPTH
from ppcl.compiler.frontend.options import BuildOptions
from ppcl.compiler.ir.builtins import BUILTIN_CONSTANTS

# Extensions ppcl implements; each is predefined as a macro and may be named in #pragma OPENCL
# EXTENSION. cl_khr_fp64 only when the device has doubles.
SUPPORTED_EXTENSIONS: tuple[str, ...] = (
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_byte_addressable_store",
    "cl_khr_3d_image_writes",
)
FP64_EXTENSION = "cl_khr_fp64"

OPENCL_VERSION = 120

# C's limit on a #line number (C99 6.10.4).
_MAX_LINE_NUMBER = 2147483647

# Blank lines written instead of a #line marker when the next line is a little further on.
_MAX_GAP_FILLED = 8


@dataclass(frozen=True)
class _Segment:
    """Output columns from ``out_col`` on come from ``orig_col`` of the original line."""

    out_col: int
    orig_col: int
    exact: bool  # False: tokens of a macro expansion, all mapped to orig_col


@dataclass
class PreprocessedSource:
    """The preprocessor's result; ``text`` is what the parser reads."""

    text: str
    filename: str
    # line_map[i - 1] is the original (file, line) of output line i.
    line_map: list[tuple[str, int]] = field(default_factory=list)
    # col_map[i - 1]: column segments of output line i (empty for markers and blank lines).
    col_map: list[list[_Segment]] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    extensions: dict[str, bool] = field(default_factory=dict)
    fp_contract: bool | None = None
    pragmas: list[tuple[Loc, str]] = field(default_factory=list)

    def locate(self, out_line: int, out_col: int) -> Loc:
        """The original location of a 1-based position in ``text``."""
        if not 1 <= out_line <= len(self.line_map):
            return NO_LOC
        file, line = self.line_map[out_line - 1]
        segments = self.col_map[out_line - 1]
        starts = [s.out_col for s in segments]
        index = bisect.bisect_right(starts, out_col) - 1
        if index < 0:
            return Loc(file, line, out_col)
        segment = segments[index]
        if not segment.exact:
            return Loc(file, line, segment.orig_col)
        return Loc(file, line, segment.orig_col + out_col - segment.out_col)


def predefined_macros(
    options: BuildOptions, *, image_support: bool, fp64: bool
) -> list[tuple[str, str]]:
    """(name-with-parameters, replacement) of every macro defined before the source."""
    c_version = options.opencl_c_version
    macros: list[tuple[str, str]] = [
        ("__OPENCL_VERSION__", str(OPENCL_VERSION)),
        ("__OPENCL_C_VERSION__", str(c_version)),
        # every version is named whatever -cl-std selects, as clang does, so that
        # '#if __OPENCL_C_VERSION__ >= CL_VERSION_2_0' compares with 200 and not with 0
        ("CL_VERSION_1_0", "100"),
        ("CL_VERSION_1_1", "110"),
        ("CL_VERSION_1_2", "120"),
        ("CL_VERSION_2_0", "200"),
        ("CL_VERSION_3_0", "300"),
        ("__ENDIAN_LITTLE__", "1"),
        # __EMBEDDED_PROFILE__ stays undefined: the device has the full profile
        ("FP_FAST_FMA", "1"),
        ("FP_FAST_FMAF", "1"),
        (
            "__kernel_exec(X, typen)",
            "__kernel __attribute__((work_group_size_hint(X, 1, 1))) "
            "__attribute__((vec_type_hint(typen)))",
        ),
        ("kernel_exec(X, typen)", "__kernel_exec(X, typen)"),
        ("NULL", "((void*)0)"),
        ("vec_step(x)", "__ppcl_vec_step(sizeof(x))"),
        # clang's alignment queries, of a type or an expression, as vec_step is taken
        ("__alignof__(x)", "__ppcl_alignof(sizeof(x))"),
        ("__alignof(x)", "__ppcl_alignof(sizeof(x))"),
        ("_Alignof(x)", "__ppcl_alignof(sizeof(x))"),
        ("__builtin_offsetof(t, m)", "__ppcl_offsetof(sizeof(t), m)"),
    ]
    if image_support:
        macros.append(("__IMAGE_SUPPORT__", "1"))
    if options.fast_relaxed_math:
        macros.append(("__FAST_RELAXED_MATH__", "1"))
    if fp64:
        macros.append((FP64_EXTENSION, "1"))
    macros += [(name, "1") for name in SUPPORTED_EXTENSIONS]
    return macros


_PREDEFINED_CACHE: dict[tuple[int, bool, bool, bool], dict[str, Any]] = {}


def _predefined(options: BuildOptions, image_support: bool, fp64: bool) -> dict[str, Any]:
    """The predefined macros as pcpp Macro objects, parsed once per configuration.

    pcpp copies a macro's tokens before expanding them, so the objects can be shared by builds.
    """
    key = (options.opencl_c_version, options.fast_relaxed_math, image_support, fp64)
    cached = _PREDEFINED_CACHE.get(key)
    if cached is None:
        pp = pcpp.Preprocessor()
        pp.macros = {}
        for name, value in predefined_macros(options, image_support=image_support, fp64=fp64):
            pp.define(f"{name} {value}")
        cached = pp.macros
        _PREDEFINED_CACHE[key] = cached
    return cached


class _LineStarts:
    """Offsets of line starts in the text pcpp lexed, to turn a token's lexpos into a column."""

    def __init__(self, text: str):
        lexed = "\n".join(line.rstrip() for line in pcpp.preprocessor.trigraph(text).splitlines())
        self.starts = [0] + [m.end() for m in re.finditer("\n", lexed)]

    def column(self, line: int, lexpos: int) -> int:
        if not 1 <= line <= len(self.starts):
            return 1
        return lexpos - self.starts[line - 1] + 1


class _OpenCLPreprocessor(pcpp.Preprocessor):  # type: ignore[misc]
    """pcpp with OpenCL include rules, pragmas, and errors reported as located diagnostics."""

    def __init__(
        self,
        diagnostics: Diagnostics,
        include_dirs: tuple[str, ...],
        extra_headers: dict[str, str],
        result: PreprocessedSource,
    ):
        super().__init__()
        self.path = list(include_dirs)
        # Token sources stay the names we give (no rewriting against the current directory).
        self.rewrite_paths: list[tuple[str, str]] = []
        self.diagnostics = diagnostics
        self.extra_headers = extra_headers
        self.result = result
        self.line_starts: dict[str, _LineStarts] = {}
        self.real_files: set[str] = set()
        # Per source: (physical line of a #line directive, line it sets, file it sets or None).
        self.line_renames: dict[str, list[tuple[int, int, str | None]]] = {}
        # The first token of the #include being handled, to locate "file not found".
        self.include_token: Any = None
        # The headers being read, outermost first, to stop an #include loop.
        self.include_chain: list[str] = []
        # Macro expansion under way: nesting of expand_macros, tokens it was given below the
        # outermost call (the cost of the current macro use), and the name being expanded there.
        self.expansion_depth = 0
        self.expansion_tokens = 0
        self.expanding: str | None = None
        # The source of the line being expanded, whose #line directives rename __LINE__.
        self.expanding_source: str | None = None
        # Names of the OpenCL C headers' macros (see _is_builtin_macro) that an #undef or -U
        # removed.
        self.undefined_builtins: set[str] = set()

    def register_source(self, name: str, text: str, real_file: bool) -> None:
        self.diagnostics.sources.add(name, text)
        self.line_starts[name] = _LineStarts(text)
        if real_file:
            self.real_files.add(name)

    def token_loc(self, tok: Any) -> Loc:
        source = tok.source or self.result.filename
        starts = self.line_starts.get(source)
        col = starts.column(tok.lineno, tok.lexpos) if starts is not None else 1
        return Loc(source, tok.lineno, col)

    def line_loc(self, source: str | None, line: int) -> Loc:
        """A line's location, at its first non-blank column (pcpp reports no column)."""
        name = source or self.result.filename
        text = self.diagnostics.sources.line(name, line) or ""
        return Loc(name, line, len(text) - len(text.lstrip()) + 1)

    # --- pcpp hooks ---

    def on_error(self, file: str | None, line: int, msg: str) -> None:
        self.return_code += 1
        self.diagnostics.error(self.line_loc(file, line), _reworded(msg))

    def on_include_not_found(
        self, is_malformed: bool, is_system_include: bool, curdir: str, includepath: str
    ) -> str:
        tok = self.include_token
        loc = self.token_loc(tok) if tok is not None else self.line_loc(self.source, 0)
        if is_malformed:
            self.diagnostics.error(loc, f"malformed #include: {includepath}")
        else:
            self.diagnostics.error(loc, f"'{includepath}' file not found")
        raise OutputDirective(Action.IgnoreAndRemove)

    def on_directive_handle(
        self, directive: Any, toks: list[Any], ifpassthru: bool, precedingtoks: list[Any]
    ) -> bool:
        self.lastdirective = directive
        if directive.value == "pragma" and not toks:
            raise OutputDirective(Action.IgnoreAndRemove)
        if _lacks_operand(directive.value, toks):
            # pcpp indexes the first tokens of these directives without looking (an IndexError
            # on '#define' alone); a placeholder operand is reported where pcpp uses it, which is
            # only in a part of the source that is not skipped.
            toks.append(_missing_operand(directive))
        return True

    def on_unknown_macro_in_defined_expr(self, tok: Any) -> bool:
        if getattr(tok, "ppcl_missing", False):
            self.diagnostics.error(self.token_loc(tok), "macro name missing")
        elif tok.type != self.t_ID:
            self.diagnostics.error(self.token_loc(tok), "macro name must be an identifier")
        return self._is_builtin_macro(tok.value)

    def on_unknown_macro_in_expr(self, ident: str) -> int:
        """An identifier left in an #if expression: 0, as C says, except an integer macro of
        the OpenCL C headers (``#if CHAR_BIT == 8``), which has its value; a floating one
        (``FLT_MAX``) is an error, as its literal would be in an #if."""
        if not self._is_builtin_macro(ident):
            return 0
        value = BUILTIN_CONSTANTS[ident][1] if ident in BUILTIN_CONSTANTS else 0
        if isinstance(value, float):  # the headers spell it as a floating literal
            loc = self.token_loc(self.lastdirective) if self.lastdirective else NO_LOC
            self.diagnostics.error(loc, f"'{ident}' is a floating constant, which a "
                                        "preprocessor expression cannot use")
            return 0
        return value

    def _is_builtin_macro(self, name: str) -> bool:
        """True for a name C or OpenCL C defines as a macro that is not in ``self.macros``:
        ``__LINE__``, which pcpp expands without defining it, and the limits, math constants
        and flags of the OpenCL C headers, which the front end resolves as builtin names. Each
        is defined for #ifdef and defined() until an #undef removes it."""
        if name in self.undefined_builtins:
            return False
        return name == "__LINE__" or name in BUILTIN_CONSTANTS

    def define(self, tokens: Any) -> None:
        if not isinstance(tokens, str) and not self._is_macro_name(tokens):
            return
        super().define(tokens)

    def undef(self, tokens: Any) -> None:
        if not isinstance(tokens, str) and not self._is_macro_name(tokens):
            return
        name = tokens.split()[0] if isinstance(tokens, str) else tokens[0].value
        self.undefined_builtins.add(name)
        super().undef(tokens)

    def _is_macro_name(self, tokens: list[Any]) -> bool:
        """True when a #define or #undef names a macro; else the error is reported."""
        if not tokens:  # '#undef' alone: pcpp calls undef without the directive's hook
            loc = self.token_loc(self.lastdirective) if self.lastdirective else NO_LOC
            self.diagnostics.error(loc, "macro name missing")
            return False
        name = tokens[0]
        if getattr(name, "ppcl_missing", False):
            self.diagnostics.error(self.token_loc(name), "macro name missing")
            return False
        if name.type != self.t_ID:
            self.diagnostics.error(self.token_loc(name), "macro name must be an identifier")
            return False
        return True

    def evalexpr(self, tokens: list[Any]) -> Any:
        """pcpp's #if evaluation; an empty expression is reported at its directive (pcpp
        gives it no location)."""
        operands = [tok for tok in tokens if tok.type not in self.t_WS]
        given = [tok for tok in operands if not getattr(tok, "ppcl_missing", False)]
        if len(given) < len(operands) or not given:
            directive = self.lastdirective
            loc = self.token_loc(directive) if directive is not None else NO_LOC
            name = directive.value if directive is not None else "if"
            self.diagnostics.error(loc, f"#{name} with no expression" if not given
                                   else f"expected value in #{name} expression")
            return (0, None)
        return super().evalexpr(tokens)

    def on_directive_unknown(
        self, directive: Any, toks: list[Any], ifpassthru: bool, precedingtoks: list[Any]
    ) -> bool:
        name = directive.value
        text = "".join(tok.value for tok in toks).strip()
        loc = self.token_loc(directive)
        if name == "error":
            self.return_code += 1
            self.diagnostics.error(self.presumed(loc), text or "#error")
        elif name == "warning":
            self.diagnostics.warning(self.presumed(loc), text or "#warning")
        elif name == "line":
            self._line_directive(loc, [tok for tok in toks if tok.type not in self.t_WS])
        elif name == "pragma":
            self._pragma(loc, [tok.value for tok in toks if tok.type not in self.t_WS], text)
        else:
            self.diagnostics.error(self.presumed(loc),
                                   f"invalid preprocessing directive '#{name}'")
        return True

    def presumed(self, loc: Loc) -> Loc:
        """A physical location as the source's #line directives name it, where the front
        end's later diagnostics are reported too (``#error`` after ``#line 124 "gen.cl"`` is
        at gen.cl:124, as clang says)."""
        file, line = self.origin(loc.file, loc.line)
        return Loc(file, line, loc.col)

    def on_comment(self, tok: Any) -> bool:
        # Blank out a comment to the same width so later columns stay put; keep its newlines.
        tok.value = re.sub(r"[^\n]", " ", tok.value)
        tok.type = self.t_SPACE
        return True

    def expand_macros(self, tokens: list[Any], expanding_from: list[str] | None = None) -> Any:
        """pcpp's expansion, stopped with a located error when one macro use produces more
        than ``MAX_EXPANSION_TOKENS`` tokens (a macro doubling itself 20 times would otherwise
        expand for minutes).

        What counts is the tokens each nested expansion adds to the list it was given (pcpp
        expands a list in place; a rescan of tokens already expanded adds none), from the
        expansion of a use's arguments to the end of the use: pcpp hands a run of lines to one
        outermost call, and counting every list it was given over the run charged each rescan
        and each use of the run again, so thirty lines of SHA-256 rounds written as macros over
        macros, a thousand tokens a line, counted past the limit."""
        from_names = expanding_from if expanding_from is not None else []
        if self.expansion_depth == 0:
            return self._expand_outermost(tokens, from_names)
        if self.expansion_depth == 1 and from_names:
            self.expanding = from_names[-1]
        given = len(tokens)
        self.expansion_depth += 1
        try:
            result = super().expand_macros(tokens, from_names)
        finally:
            self.expansion_depth -= 1
        self.expansion_tokens += max(0, len(result) - given)
        if self.expansion_tokens > MAX_EXPANSION_TOKENS:
            raise _ExpansionTooLarge
        if self.expansion_depth == 1 and from_names:
            self.expansion_tokens = 0  # one use of the outermost list is done
        return result

    # pcpp expands __LINE__ to the physical line of the tokens it is expanding (its attribute
    # ``linemacro``); C numbers lines after a #line directive from the number it gives, so the
    # physical line is renamed through this file's directives as it is set.

    @property
    def linemacro(self) -> int:
        return self._line_for_macro

    @linemacro.setter
    def linemacro(self, line: int) -> None:
        source = getattr(self, "expanding_source", None)
        if line and source is not None and source in getattr(self, "line_renames", {}):
            line = self.origin(source, line)[1]
        self._line_for_macro = line

    def _expand_outermost(self, tokens: list[Any], expanding_from: list[str]) -> Any:
        original = list(tokens)
        self.expanding_source = next((tok.source for tok in tokens if tok.source), None)
        self.expansion_depth, self.expansion_tokens, self.expanding = 1, 0, None
        try:
            return super().expand_macros(tokens, expanding_from)
        except _ExpansionTooLarge:
            name = self.expanding
            use = next((tok for tok in original if tok.value == name), None)
            use = use if use is not None else next(iter(original), None)
            loc = self.token_loc(use) if use is not None else self.line_loc(self.source, 0)
            self.diagnostics.error(loc, f"expansion of macro '{name}' is too large (more than "
                                        f"{MAX_EXPANSION_TOKENS} tokens)")
            # Expanding it again would take as long and fail the same way.
            self.macros.pop(name, None)
            return [tok for tok in original if tok.value != name]
        finally:
            self.expansion_depth = 0

    # --- OpenCL behaviour ---

    def _line_directive(self, loc: Loc, toks: list[Any]) -> None:
        """``#line N ["file"]``: later lines of this file are numbered from N."""
        if (
            not toks
            or len(toks) > 2
            or not toks[0].value.isdigit()
            or (len(toks) > 1 and (toks[1].type != self.t_STRING or toks[1].value[0] != '"'))
        ):
            self.diagnostics.error(
                loc, "#line directive requires a line number and an optional file name"
            )
            return
        number = int(toks[0].value)
        if not 1 <= number <= _MAX_LINE_NUMBER:
            # line 0 or past int: diagnostics would print no usable position
            self.diagnostics.error(
                self.token_loc(toks[0]),
                f"#line number must be between 1 and {_MAX_LINE_NUMBER}")
            return
        renames = self.line_renames.setdefault(loc.file, [])
        # Without a file name the presumed file stays what an earlier #line made it.
        new_file = toks[1].value[1:-1] if len(toks) > 1 else (renames[-1][2] if renames else None)
        renames.append((loc.line, number, new_file))
        if len(toks) > 1:
            self.define(f"__FILE__ {toks[1].value}")  # __FILE__ names the file #line gives

    def origin(self, source: str, line: int) -> tuple[str, int]:
        """The (file, line) a physical line of ``source`` reports, after its #line directives."""
        renames = self.line_renames.get(source)
        if not renames:
            return source, line
        for directive_line, new_line, new_file in reversed(renames):
            if directive_line < line:
                return new_file or source, new_line + line - directive_line - 1
        return source, line

    def _pragma(self, loc: Loc, words: list[str], text: str) -> None:
        if len(words) >= 2 and words[0] == "OPENCL" and words[1] == "EXTENSION":
            self._extension_pragma(loc, words[2:])
        elif len(words) >= 2 and words[0] == "OPENCL" and words[1] == "FP_CONTRACT":
            state = words[2] if len(words) > 2 else ""
            if state not in ("ON", "OFF", "DEFAULT"):
                self.diagnostics.warning(loc, "expected 'ON', 'OFF' or 'DEFAULT' after FP_CONTRACT")
                return
            self.result.fp_contract = None if state == "DEFAULT" else state == "ON"
        else:
            self.result.pragmas.append((loc, text))

    def _extension_pragma(self, loc: Loc, words: list[str]) -> None:
        if len(words) != 3 or words[1] != ":" or words[2] not in ("enable", "disable"):
            self.diagnostics.warning(
                loc, "expected '#pragma OPENCL EXTENSION name : enable|disable'"
            )
            return
        name, state = words[0], words[2] == "enable"
        known = (
            name == "all"
            or name in SUPPORTED_EXTENSIONS
            or (name == FP64_EXTENSION and FP64_EXTENSION in self.macros)
        )
        if not known:
            self.diagnostics.warning(loc, f"unsupported OpenCL extension '{name}' - ignoring")
            return
        self.result.extensions[name] = state

    def include(self, tokens: list[Any], original_line: list[Any]) -> Iterator[Any]:
        """``#include``: extra headers, then the includer's directory, then -I directories."""
        if not tokens:
            loc = self.token_loc(self.lastdirective) if self.lastdirective else NO_LOC
            self.diagnostics.error(loc, 'expected "FILENAME" or <FILENAME> after #include')
            return
        self.include_token = tokens[0]
        if tokens[0].value != "<" and tokens[0].type != self.t_STRING:
            tokens = self.tokenstrip(self.expand_macros(tokens))
            if not tokens:
                return
            self.include_token = tokens[0]
        if tokens[0].value == "<":
            closing = [i for i, tok in enumerate(tokens) if tok.value == ">"]
            if not closing:
                self.on_include_not_found(True, True, "", "".join(t.value for t in tokens))
                return
            name = "".join(tok.value for tok in tokens[1 : closing[0]])
            is_system = True
        elif tokens[0].type == self.t_STRING:
            name = tokens[0].value[1:-1]
            is_system = False
        else:
            self.on_include_not_found(True, False, "", tokens[0].value)
            return

        found = self._find_header(name, is_system)
        if found is None:
            self.on_include_not_found(False, is_system, "", name)
            return
        display, text, real_file = found
        text = _splice_split_tokens(text)
        if display in self.include_once:
            return
        if len(self.include_chain) >= MAX_INCLUDE_DEPTH:
            chain = " -> ".join([self.result.filename, *self.include_chain, display])
            self.diagnostics.error(self.token_loc(self.include_token),
                                   f"#include nested deeper than {MAX_INCLUDE_DEPTH}: {chain}")
            # No deeper: the rest of this header's includes would fail the same way.
            raise OutputDirective(Action.IgnoreAndRemove)
        if display not in self.result.includes:
            self.result.includes.append(display)
        self.register_source(display, text, real_file)
        self.include_chain.append(display)
        try:
            yield from self.parsegen(text, display, display)
        finally:
            self.include_chain.pop()

    def _find_header(self, name: str, is_system: bool) -> tuple[str, str, bool] | None:
        if name in self.extra_headers:
            return name, self.extra_headers[name], False
        directories: list[str] = []
        if not is_system:
            includer = self.source or ""
            if includer in self.real_files or includer in self.extra_headers:
                directories.append(os.path.dirname(includer))
            else:
                directories.append("")
        directories += self.path
        for directory in directories:
            path = os.path.normpath(os.path.join(directory, name)) if directory else name
            if not os.path.isfile(path):
                continue
            try:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            return path, text.removeprefix("\ufeff"), True
        if is_system and name in BUILTIN_HEADERS:  # after -I: a program's own header wins
            return name, BUILTIN_HEADERS[name], False
        return None


# pcpp's message for an #if expression its evaluator could not compute: the Python exception's
# repr, then the expression.
_EVALUATION_FAILED = re.compile(r"Could not evaluate expression due to (\w+)\((.*)\) "
                                r"\(passed to evaluator: '(.*)'\)$", re.S)


def _reworded(message: str) -> str:
    """pcpp's message without the Python exception it quotes."""
    match = _EVALUATION_FAILED.match(message)
    if match is None:
        return message
    kind, expression = match.group(1), match.group(3).strip()
    if kind == "ZeroDivisionError":
        return f"division by zero in preprocessor expression '{expression}'"
    return f"invalid preprocessor expression '{expression}'"


# Directives whose first tokens pcpp reads without checking they are there: the macro name of
# #define, #ifdef and #ifndef, and for #if at the top of a file the '!defined(NAME' of an
# include guard.
_NAMED_DIRECTIVES = frozenset({"define", "ifdef", "ifndef"})
_GUARD_PREFIX = ("!", "defined", "(")


def _lacks_operand(directive: str, toks: list[Any]) -> bool:
    if directive in _NAMED_DIRECTIVES:
        return not toks
    if directive in ("if", "elif"):
        values = tuple(tok.value for tok in toks)
        return _GUARD_PREFIX[: len(values)] == values
    return False


def _missing_operand(directive: Any) -> Any:
    """A stand-in for a directive's missing operand, at the directive's position."""
    tok = copy.copy(directive)
    tok.value = "__ppcl_missing_operand"
    tok.ppcl_missing = True
    return tok


class _ExpansionTooLarge(Exception):
    """One macro use expanded past ``MAX_EXPANSION_TOKENS``."""


_BYTE_ORDER_MARK = "\ufeff"
# A backslash-newline with a token character on both sides: it splits one token in two.
_SPLIT_TOKEN = re.compile(r"(?<=[A-Za-z0-9_])\\\r?\n(?=[A-Za-z0-9_])")
_LOGICAL_LINE_END = re.compile(r"(?<!\\)\r?\n")


def _splice_split_tokens(source: str) -> str:
    """Joins the tokens a backslash-newline splits (``va\\<newline>lue`` is ``value``: C
    splices lines before it forms tokens). pcpp splices only between tokens, so the halves
    were two identifiers. The removed newline is put back where the logical line ends, so the
    lines after it keep their numbers."""
    position = 0
    while True:
        split = _SPLIT_TOKEN.search(source, position)
        if split is None:
            return source
        position = split.start()
        joined = source[:position] + source[split.end():]
        end = _LOGICAL_LINE_END.search(joined, position)
        at = end.end() if end is not None else len(joined)
        source = joined[:at] + "\n" + joined[at:]


def preprocess(
    source: str,
    filename: str,
    options: BuildOptions,
    diagnostics: Diagnostics,
    *,
    extra_headers: dict[str, str] | None = None,
    image_support: bool = True,
    fp64: bool = True,
) -> PreprocessedSource:
    """Run the OpenCL C preprocessor over ``source``; problems go to ``diagnostics``."""
    if source.startswith(_BYTE_ORDER_MARK):
        # an editor's UTF-8 byte order mark, which clang skips; a space keeps the columns
        source = " " + source[len(_BYTE_ORDER_MARK):]
    source = _splice_split_tokens(source)
    macros = _predefined(options, image_support, fp64)
    if not extra_headers and _needs_no_preprocessing(source, macros, options):
        return _without_directives(source, filename, diagnostics)
    result = PreprocessedSource(text="", filename=filename)
    pp = _OpenCLPreprocessor(diagnostics, options.include_dirs, dict(extra_headers or {}), result)
    pp.macros = dict(macros)
    for kind, name, value in options.macro_actions:
        if kind == "U":
            pp.undef(name)
        else:
            pp.define(f"{name} {'1' if value is None else value}")

    real_file = os.path.isfile(filename)
    pp.register_source(filename, source, real_file)
    tokens = pp.parsegen(source, filename, filename)
    _Writer(pp, result).write(tokens)
    return result


# Comments and string/char literals, so comments can be blanked without touching literals.
_COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_PREPROCESSOR_BUILTINS = frozenset({"__FILE__", "__LINE__", "__DATE__", "__TIME__", "__COUNTER__",
                                    "_Pragma", "__VA_ARGS__"})


def _needs_no_preprocessing(source: str, macros: dict[str, Any], options: BuildOptions) -> bool:
    """True when running the preprocessor could not change ``source``: no directive, no line
    continuation or trigraph, and no identifier naming a macro. Most kernels are like this, and
    pcpp costs about 0.2 ms a line, so they skip it."""
    if "#" in source or "\\\n" in source or "??" in source or options.macro_actions:
        return False
    names = set(_IDENTIFIER.findall(source))
    return not any(name in macros or name in _PREPROCESSOR_BUILTINS for name in names)


def _blank(match: re.Match[str]) -> str:
    text = match.group(0)
    if text[0] in "\"'":
        return text
    return "".join(ch if ch == "\n" else " " for ch in text)


def _without_directives(source: str, filename: str, diagnostics: Diagnostics) -> PreprocessedSource:
    """What the preprocessor makes of a source it would not change: comments blanked to spaces
    of the same width, so every line and column stays where it was."""
    diagnostics.sources.add(filename, source)
    body = _COMMENT_OR_LITERAL.sub(_blank, source)
    lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    text = f'#line 1 "{_escape(filename)}"\n' + body
    line_map = [(filename, 0)] + [(filename, i) for i in range(1, lines + 1)]
    col_map: list[list[_Segment]] = [[]] + [[_Segment(1, 1, True)] for _ in range(lines)]
    return PreprocessedSource(text=text, filename=filename, line_map=line_map, col_map=col_map)


class _Writer:
    """Turns pcpp's token stream into text with #line markers and column-true lines."""

    def __init__(self, pp: _OpenCLPreprocessor, result: PreprocessedSource):
        self.pp = pp
        self.result = result
        # Output lines before markers are added: (origin, text, segments).
        self.lines: list[tuple[tuple[str, int], str, list[_Segment]]] = []
        self.text = ""
        self.segments: list[_Segment] = []
        self.origin: tuple[str, int] | None = None
        self.orig_cursor = 1

    def write(self, tokens: Iterator[Any]) -> None:
        pp = self.pp
        for tok in tokens:
            source = tok.source or self.result.filename
            if tok.type in pp.t_LINECONT:
                # The spliced line stays a line of its own; the next token knows its line.
                self.newline()
                continue
            value = tok.value
            if "\n" not in value:
                self.put(tok, source, value, blank=tok.type in pp.t_WS)
                continue
            # A newline, or a blanked multi-line comment: later pieces start new lines.
            for k, piece in enumerate(value.split("\n")):
                if k > 0:
                    self.newline()
                    if piece:
                        self.origin = self.pp.origin(source, tok.lineno + k)
                self.put(tok, source, piece, blank=True)
        self.newline()
        self.finish()

    def put(self, tok: Any, source: str, value: str, *, blank: bool) -> None:
        if not value:
            return
        if self.origin is None:
            self.origin = self.pp.origin(source, tok.lineno)
        if blank:
            self.text += value
            self.orig_cursor += len(value)
            return
        expanded = bool(getattr(tok, "expanded_from", None))
        if expanded:
            if not self.segments or self.segments[-1].exact:
                self.segments.append(_Segment(len(self.text) + 1, self.orig_cursor, False))
            self.text += value
            return
        starts = self.pp.line_starts.get(source)
        col = starts.column(tok.lineno, tok.lexpos) if starts is not None else len(self.text) + 1
        if len(self.text) + 1 < col:
            self.text += " " * (col - 1 - len(self.text))
        self.segments.append(_Segment(len(self.text) + 1, col, True))
        self.text += value
        self.orig_cursor = col + len(value)

    def newline(self) -> None:
        if self.text.strip() and self.origin is not None:
            self.lines.append((self.origin, self.text.rstrip(), self.segments))
        self.text = ""
        self.segments = []
        self.origin = None
        self.orig_cursor = 1

    def finish(self) -> None:
        out: list[str] = []
        line_map: list[tuple[str, int]] = []
        col_map: list[list[_Segment]] = []
        previous: tuple[str, int] | None = None
        for origin, text, segments in self.lines:
            file, line = origin
            if (
                previous is None
                or previous[0] != file
                or not 0 < line - previous[1] <= _MAX_GAP_FILLED
            ):
                out.append(f'#line {line} "{_escape(file)}"')
                line_map.append((file, max(line - 1, 0)))
                col_map.append([])
            else:
                for gap_line in range(previous[1] + 1, line):
                    out.append("")
                    line_map.append((file, gap_line))
                    col_map.append([])
            out.append(text)
            line_map.append(origin)
            col_map.append(segments)
            previous = origin
        self.result.text = "\n".join(out) + "\n" if out else ""
        self.result.line_map = line_map
        self.result.col_map = col_map


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')
