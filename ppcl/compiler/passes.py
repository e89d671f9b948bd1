"""The pass framework: passes with named options, a registry by name, pipelines written as text.

A pass is a small object with a name and named options (a frozen dataclass); ``run`` is a pure
function from one IR value to the next: an ``ir.Module``, or a value that knows how to verify
and print itself (``IRValue``, such as the ``KernelIR`` of ``compiler/pipeline.py``, which
declares the passes of a kernel build). A pipeline prints as text and parses back from it, so
it can be logged with a compiled kernel and replayed from a bug report::

    fold-constants,workgroup{local_size=8x8x1},split{dims=0}

Option values are integers (``8``, ``-1``, ``0x10``), booleans (``true``/``false``), strings
(bare words such as ``simd``) and integer tuples (``8x8x1``); the option's declared type decides
how its text is read. A pass prints only the options it was given, so ``parse`` then ``str``
gives the text back.

``Pipeline.run(value, debug)`` takes what to show from a ``ppcl.settings.Debug``: with
``debug.verify`` the IR verifier runs before the first pass and after every pass (tests do),
``debug.shows("passes")`` prints the IR after each pass and ``debug.shows("time")`` the time
each pass took, to stderr. The framework never reads the environment.
"""

from __future__ import annotations

import abc
import dataclasses
import re
import sys
import time
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TextIO, TypeVar

from ppcl.compiler.analysis.verify import check
from ppcl.compiler.codegen.irprint import print_ir
from ppcl.compiler.frontend.consteval import fold
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import types as T
from ppcl.compiler.ir.visit import Rewriter, children
from ppcl.settings import NO_DEBUG, Debug

__all__ = [
    "FoldConstants", "IRValue", "NoOptions", "Pass", "Pipeline", "PipelineError", "VerifyPass",
    "get_pass", "register", "registered_passes",
]


class PipelineError(ValueError):
    """A pipeline text or a pass option that cannot be understood."""


@dataclass(frozen=True)
class NoOptions:
    """Options of a pass that takes none."""


class IRValue(Protocol):
    """What passes may run over besides an ``ir.Module``: a frozen value that verifies and
    prints itself and can apply a rewriter to the code it holds."""

    def check(self, context: str) -> None:
        """Raise ``VerificationError`` (naming ``context``) when the IR breaks an invariant."""
        ...

    def dump(self) -> str:
        """The readable IR, as ``PPCL_DEBUG=passes`` shows it."""
        ...

    def rewritten(self, rewriter: Rewriter) -> IRValue:
        """The value with ``rewriter`` applied to all of its code."""
        ...


def check_value(value: ir.Module | IRValue, context: str) -> None:
    if isinstance(value, ir.Module):
        check(value, context)
    else:
        value.check(context)


def dump_value(value: ir.Module | IRValue) -> str:
    return print_ir(value) if isinstance(value, ir.Module) else value.dump()


V = TypeVar("V", bound="ir.Module | IRValue")


class Pass(abc.ABC):
    """One step of a pipeline: ``run`` takes an IR value and returns a (new) one.

    Subclasses set ``name`` (the pipeline spelling) and ``Options`` (a frozen dataclass whose
    fields are the named options, all with defaults), and implement ``run``.
    """

    name: ClassVar[str] = ""
    Options: ClassVar[type[Any]] = NoOptions

    def __init__(self, options: Any = None, /, **named: Any):
        if options is not None and named:
            raise TypeError("pass options either as an Options value or by name, not both")
        if options is not None:
            if not isinstance(options, self.Options):
                raise TypeError(f"pass '{self.name}' takes {self.Options.__name__} options")
            self.options = options
            defaults = self.Options()
            self.given: tuple[str, ...] = tuple(
                f.name for f in dataclasses.fields(options)
                if getattr(options, f.name) != getattr(defaults, f.name))
            return
        known = {f.name for f in dataclasses.fields(self.Options)}
        for key in named:
            if key not in known:
                raise PipelineError(_unknown_option(self.name, key, known))
        self.options = self.Options(**named)
        self.given = tuple(named)

    @abc.abstractmethod
    def run(self, value: Any) -> Any:
        """The IR value after this pass."""

    def __str__(self) -> str:
        if not self.given:
            return self.name
        shown = ",".join(f"{key}={format_value(getattr(self.options, key))}"
                         for key in self.given)
        return f"{self.name}{{{shown}}}"

    def __repr__(self) -> str:
        return f"<pass {self}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pass) and type(self) is type(other) \
            and self.options == other.options

    def __hash__(self) -> int:
        return hash((type(self), self.options))


# ---------------------------------------------------------------- the registry

_REGISTRY: dict[str, type[Pass]] = {}
P = TypeVar("P", bound=type[Pass])


def register(cls: P) -> P:
    """Class decorator: make ``cls`` known to pipelines by its ``name``."""
    if not re.fullmatch(_NAME_RE, cls.name):
        raise ValueError(f"invalid pass name {cls.name!r}")
    if not dataclasses.is_dataclass(cls.Options):
        raise TypeError(f"options of pass '{cls.name}' must be a dataclass")
    for f in dataclasses.fields(cls.Options):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise TypeError(f"option '{f.name}' of pass '{cls.name}' needs a default")
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"a pass named '{cls.name}' is already registered "
                         f"({existing.__module__}.{existing.__qualname__})")
    _REGISTRY[cls.name] = cls
    return cls


def _register_kernel_passes() -> None:
    """The passes of a kernel build register themselves in ``compiler/pipeline.py``, which
    builds on this module; imported here on first use so that any pipeline text parses."""
    import ppcl.compiler.pipeline  # noqa: F401


def registered_passes() -> Mapping[str, type[Pass]]:
    _register_kernel_passes()
    return dict(sorted(_REGISTRY.items()))


def get_pass(name: str) -> type[Pass]:
    if name not in _REGISTRY:
        _register_kernel_passes()
    cls = _REGISTRY.get(name)
    if cls is None:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise PipelineError(f"unknown pass '{name}' (known passes: {known})")
    return cls


# ---------------------------------------------------------------- option values

_NAME_RE = r"[A-Za-z_][A-Za-z0-9_-]*"
_WORD_RE = re.compile(r"[A-Za-z0-9_.+\-/:]+")
_INT_RE = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|[0-9]+)")


def format_value(value: object) -> str:
    """The pipeline spelling of an option value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):
        if not value or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise PipelineError(f"cannot spell option value {value!r} (tuples hold integers)")
        return "x".join(str(v) for v in value)
    if value is None:
        return "none"
    if isinstance(value, str):
        if not _WORD_RE.fullmatch(value):
            raise PipelineError(f"cannot spell option value {value!r} in a pipeline (letters, "
                                "digits and _ . + - / : only)")
        return value
    raise PipelineError(f"cannot spell option value {value!r} of type {type(value).__name__}")


def _parse_int(text: str) -> int | None:
    if not _INT_RE.fullmatch(text):
        return None
    return int(text, 0)


def parse_value(text: str, annotation: Any, where: str) -> Any:
    """The value of option text for an option declared with type ``annotation``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and text == "none":
            return None
        errors = []
        for alternative in args:
            if alternative is type(None):
                continue
            try:
                return parse_value(text, alternative, where)
            except PipelineError as exc:
                errors.append(str(exc))
        raise PipelineError(errors[0] if errors else f"{where}: cannot read '{text}'")
    if annotation is bool:
        if text not in ("true", "false"):
            raise PipelineError(f"{where} expects true or false, got '{text}'")
        return text == "true"
    if annotation is int:
        value = _parse_int(text)
        if value is None:
            raise PipelineError(f"{where} expects an integer, got '{text}'")
        return value
    if annotation is str:
        if not _WORD_RE.fullmatch(text):
            raise PipelineError(f"{where} expects a word, got '{text}'")
        return text
    if origin is tuple:
        parts = text.split("x")
        values = [_parse_int(p) for p in parts]
        if not text or any(v is None for v in values):
            raise PipelineError(f"{where} expects integers separated by 'x' (like 8x8x1), "
                                f"got '{text}'")
        fixed = [a for a in args if a is not Ellipsis]
        if Ellipsis not in args and len(fixed) != len(values):
            raise PipelineError(f"{where} expects {len(fixed)} integers (like "
                                f"{'x'.join(['8'] * len(fixed))}), got '{text}'")
        return tuple(values)
    raise PipelineError(f"{where} has a type pipelines cannot spell ({annotation!r})")


def _unknown_option(pass_name: str, key: str, known: Iterable[str]) -> str:
    listed = ", ".join(sorted(known)) or "none"
    return f"pass '{pass_name}' has no option '{key}' (options: {listed})"


def make_pass(name: str, options: Iterable[tuple[str, str]] = ()) -> Pass:
    """A registered pass built from option texts, in the order given."""
    cls = get_pass(name)
    hints = typing.get_type_hints(cls.Options)
    known = [f.name for f in dataclasses.fields(cls.Options)]
    values: dict[str, Any] = {}
    for key, text in options:
        if key not in known:
            raise PipelineError(_unknown_option(name, key, known))
        if key in values:
            raise PipelineError(f"option '{key}' of pass '{name}' is given twice")
        values[key] = parse_value(text, hints[key], f"option '{key}' of pass '{name}'")
    return cls(**values)


# ---------------------------------------------------------------- pipelines


class _Reader:
    """Reads ``name{key=value,...},name...``, with positions for error messages."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str) -> PipelineError:
        return PipelineError(f"pipeline '{self.text}', column {self.pos + 1}: {message}")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def at(self, char: str) -> bool:
        self.skip_space()
        return self.text.startswith(char, self.pos)

    def expect(self, char: str) -> None:
        if not self.at(char):
            found = self.text[self.pos] if self.pos < len(self.text) else "end of text"
            raise self.error(f"expected '{char}', found '{found}'")
        self.pos += 1

    def match(self, pattern: str, what: str) -> str:
        self.skip_space()
        m = re.compile(pattern).match(self.text, self.pos)
        if m is None or not m.group(0):
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return m.group(0)

    def stage(self) -> Pass:
        start = self.pos
        name = self.match(_NAME_RE, "a pass name")
        options: list[tuple[str, str]] = []
        if self.at("{"):
            self.expect("{")
            while True:
                key = self.match(_NAME_RE, "an option name")
                self.expect("=")
                value = self.match(r"[^,{}=\s]+", f"a value for option '{key}'")
                options.append((key, value))
                if self.at("}"):
                    self.pos += 1
                    break
                if not self.at(","):
                    raise self.error(f"expected ',' or '}}' after option '{key}'")
                self.pos += 1
        try:
            return make_pass(name, options)
        except PipelineError as exc:
            self.pos = start
            raise self.error(str(exc)) from None

    def pipeline(self) -> list[Pass]:
        stages: list[Pass] = []
        self.skip_space()
        if self.pos == len(self.text):
            return stages
        while True:
            stages.append(self.stage())
            self.skip_space()
            if self.pos == len(self.text):
                return stages
            self.expect(",")


@dataclass(frozen=True)
class Pipeline:
    """Passes run in order; ``str`` gives the text ``parse`` reads."""

    passes: tuple[Pass, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Pipeline:
        return cls(tuple(_Reader(text).pipeline()))

    def __str__(self) -> str:
        return ",".join(str(p) for p in self.passes)

    def run(self, value: V, debug: Debug = NO_DEBUG, stream: TextIO | None = None) -> V:
        """``value`` through every pass. With ``debug.verify``: check the IR before the first
        pass and after each one, raising ``VerificationError`` that names the pass.
        ``debug.shows("passes")``: print the IR after each pass; ``debug.shows("time")``: each
        pass's time; both to ``stream`` (stderr)."""
        out = stream if stream is not None else sys.stderr
        show_ir, show_time = debug.shows("passes"), debug.shows("time")
        if debug.verify:
            check_value(value, "given to pipeline " + repr(str(self)))
        if show_ir or show_time:
            out.write(f"// ppcl pipeline: {self}\n")
        for stage in self.passes:
            start = time.perf_counter()
            value = stage.run(value)
            elapsed = time.perf_counter() - start
            if show_time:
                out.write(f"// ppcl pass {stage}: {elapsed * 1e3:.3f} ms\n")
            if show_ir:
                out.write(f"// ppcl IR after pass {stage}\n")
                out.write(dump_value(value).rstrip("\n") + "\n")
            if debug.verify:
                check_value(value, f"after pass '{stage}'")
        return value


# ---------------------------------------------------------------- passes available now


@register
class VerifyPass(Pass):
    """Check the IR invariants here (``analysis.verify``); the value passes through unchanged."""

    name = "verify"

    def run(self, value: Any) -> Any:
        check_value(value, f"at pass '{self.name}'")
        return value


_CONSTANT_LEAVES = (ir.IntLit, ir.SizeOf, ir.VecStep)


def _is_integer_scalar(t: T.Type) -> bool:
    return isinstance(t, T.EnumType) or (isinstance(t, T.ScalarType) and t.is_integer)


def _folds_like_opencl(e: ir.Expr) -> bool:
    """Whether ``consteval.fold`` computes what OpenCL C computes at run time for ``e``, whose
    operands are integer literals. Conversions from floating point stay ((bool)0.5f is 1, fold
    truncates first), and so do shifts by counts outside the width of the shifted type
    (OpenCL masks the count, 6.3.j; fold does not)."""
    if isinstance(e, ir.Cast):
        return _is_integer_scalar(e.operand.type)
    if isinstance(e, ir.Binary) and e.op in ("<<", ">>"):
        count = fold(e.rhs)
        shifted = T.scalar_of(e.type)
        return count is not None and shifted is not None and 0 <= count < shifted.bits
    return True


class _ConstantFolder(Rewriter):
    """Bottom-up, so an operator is folded once its operands are literals. Operators with an
    operand that is not a literal stay whole, even where C would not evaluate that operand
    (``0 && f()``): simple and never wrong."""

    def fold_expr(self, e: ir.Expr) -> ir.Expr:
        if not isinstance(e.type, T.ScalarType) or not e.type.is_integer:
            return e
        operands = [c for c in children(e) if isinstance(c, ir.Expr)]
        if not all(isinstance(c, _CONSTANT_LEAVES) for c in operands):
            return e
        if not _folds_like_opencl(e):
            return e
        value = fold(e)
        if value is None:
            return e
        return ir.IntLit(e.type, value, loc=e.loc)

    def rewrite_Unary(self, e: ir.Unary) -> ir.Expr:
        return self.fold_expr(e)

    def rewrite_Binary(self, e: ir.Binary) -> ir.Expr:
        return self.fold_expr(e)

    def rewrite_Cast(self, e: ir.Cast) -> ir.Expr:
        return self.fold_expr(e)

    def rewrite_Conditional(self, e: ir.Conditional) -> ir.Expr:
        return self.fold_expr(e)


@register
class FoldConstants(Pass):
    """Replace integer constant sub-expressions (``4 * 16 - 1``, ``(long)3``) by literals of the
    expression's type. Folding follows ``frontend.consteval``; shifts by counts outside the
    type's width and conversions from floating point stay as written."""

    name = "fold-constants"

    def run(self, value: Any) -> Any:
        if isinstance(value, ir.Module):
            return _ConstantFolder().rewrite(value)
        return value.rewritten(_ConstantFolder())
