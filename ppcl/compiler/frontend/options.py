"""OpenCL build options (the ``options`` string of ``clBuildProgram``/``clCompileProgram``).

The string is parsed once into a frozen :class:`BuildOptions`; every later stage reads fields
instead of searching the text. Implications written in the OpenCL specification are applied while
parsing (``-cl-fast-relaxed-math`` sets the finite-math, unsafe-math, no-signed-zeros and mad
flags; ``-cl-unsafe-math-optimizations`` sets no-signed-zeros and mad), so a field says what is in
effect, not what was spelled. :meth:`BuildOptions.canonical` renders the options in one fixed
order, so two spellings of the same build share a cache key.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace

ERROR_PREFIX = "CL_INVALID_BUILD_OPTIONS"

# -cl-std values ppcl accepts, with the __OPENCL_C_VERSION__ each selects.
CL_STD_VERSIONS: dict[str, int] = {
    "CL1.0": 100,
    "CL1.1": 110,
    "CL1.2": 120,
    "CL2.0": 200,
    "CL3.0": 300,
}

DEFAULT_OPENCL_C_VERSION = 120

# Flag options without an argument: spelling -> BuildOptions field.
_FLAGS: dict[str, str] = {
    "-cl-fast-relaxed-math": "fast_relaxed_math",
    "-cl-mad-enable": "mad_enable",
    "-cl-no-signed-zeros": "no_signed_zeros",
    "-cl-unsafe-math-optimizations": "unsafe_math_optimizations",
    "-cl-finite-math-only": "finite_math_only",
    "-cl-denorms-are-zero": "denorms_are_zero",
    "-cl-single-precision-constant": "single_precision_constant",
    "-cl-fp32-correctly-rounded-divide-sqrt": "fp32_correctly_rounded_divide_sqrt",
    "-cl-opt-disable": "opt_disable",
    "-cl-strict-aliasing": "strict_aliasing",
    "-cl-uniform-work-group-size": "uniform_work_group_size",
    "-cl-no-subgroup-ifp": "no_subgroup_ifp",
    "-cl-kernel-arg-info": "kernel_arg_info",
    "-w": "warnings_disabled",
    "-Werror": "werror",
    "-g": "debug",
    "-ppcl-no-split": "no_split",  # ppcl's own: no input space splitting (transforms/split.py)
    "-ppcl-no-unroll": "no_unroll",  # ppcl's own: no unrolling of loops (transforms/unroll.py)
    "-ppcl-no-selects": "no_selects",  # ppcl's own: branches kept (transforms/selects.py)
    # ppcl's own: loops whose trip count varies per work-item stay in the work-item loop
    "-ppcl-no-masked-loops": "no_masked_loops",
    # ppcl's own: vector code of work-item loops kept as vectors (transforms/scalarize.py)
    "-ppcl-no-scalarize": "no_scalarize",
}


class BuildOptionsError(ValueError):
    """An option string the OpenCL runtime must reject with CL_INVALID_BUILD_OPTIONS."""

    def __init__(self, detail: str):
        super().__init__(f"{ERROR_PREFIX}: {detail}")


@dataclass(frozen=True)
class BuildOptions:
    """The effective build options of one program build."""

    # The string as given; not part of equality, which is about the effective options.
    raw: str = field(default="", compare=False)
    # -D in order; a value of None means "defined as 1" (plain -DNAME).
    defines: tuple[tuple[str, str | None], ...] = ()
    undefines: tuple[str, ...] = ()
    # -D and -U interleaved in the order given: ("D", name, value) or ("U", name, None).
    macro_actions: tuple[tuple[str, str, str | None], ...] = ()
    include_dirs: tuple[str, ...] = ()
    cl_std: str | None = None
    fast_relaxed_math: bool = False
    mad_enable: bool = False
    no_signed_zeros: bool = False
    unsafe_math_optimizations: bool = False
    finite_math_only: bool = False
    denorms_are_zero: bool = False
    single_precision_constant: bool = False
    fp32_correctly_rounded_divide_sqrt: bool = False
    opt_disable: bool = False
    strict_aliasing: bool = False
    uniform_work_group_size: bool = False
    no_subgroup_ifp: bool = False
    kernel_arg_info: bool = False
    warnings_disabled: bool = False
    werror: bool = False
    debug: bool = False
    no_split: bool = False
    no_unroll: bool = False
    no_selects: bool = False
    no_masked_loops: bool = False
    no_scalarize: bool = False

    @property
    def opencl_c_version(self) -> int:
        """The value of __OPENCL_C_VERSION__ these options select."""
        if self.cl_std is None:
            return DEFAULT_OPENCL_C_VERSION
        return CL_STD_VERSIONS[self.cl_std]

    def canonical(self) -> str:
        """The options in one fixed order; equal effective options give equal strings."""
        parts: list[str] = []
        for kind, name, value in self.macro_actions:
            if kind == "U":
                parts.append(shlex.quote(f"-U{name}"))
            elif value is None:
                parts.append(shlex.quote(f"-D{name}"))
            else:
                parts.append(shlex.quote(f"-D{name}={value}"))
        parts.extend(shlex.quote(f"-I{d}") for d in self.include_dirs)
        if self.cl_std is not None:
            parts.append(f"-cl-std={self.cl_std}")
        for spelling, attr in _FLAGS.items():
            if getattr(self, attr):
                parts.append(spelling)
        return " ".join(parts)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise BuildOptionsError(f"cannot split option string ({exc})") from exc


def _split_define(arg: str) -> tuple[str, str | None]:
    name, eq, value = arg.partition("=")
    if not name:
        raise BuildOptionsError(f"'-D{arg}': macro name missing")
    return name, (value if eq else None)


def parse_build_options(text: str | None) -> BuildOptions:
    """Parse an OpenCL build-option string; raise :class:`BuildOptionsError` when invalid."""
    raw = text or ""
    words = _split(raw)
    actions: list[tuple[str, str, str | None]] = []
    include_dirs: list[str] = []
    cl_std: str | None = None
    flags: dict[str, bool] = {}

    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in ("-D", "-U", "-I"):
            if i >= len(words):
                raise BuildOptionsError(f"missing argument after '{word}'")
            arg = words[i]
            i += 1
            kind = word[1]
        elif word[:2] in ("-D", "-U", "-I") and len(word) > 2:
            kind, arg = word[1], word[2:]
        elif word.startswith("-cl-std="):
            std = word[len("-cl-std=") :]
            if std not in CL_STD_VERSIONS:
                raise BuildOptionsError(
                    f"unsupported '{word}' (accepted: {', '.join(CL_STD_VERSIONS)})"
                )
            cl_std = std
            continue
        elif word in _FLAGS:
            flags[_FLAGS[word]] = True
            continue
        else:
            raise BuildOptionsError(_unknown(word))

        if kind == "D":
            actions.append(("D", *_split_define(arg)))
        elif kind == "U":
            actions.append(("U", arg, None))
        else:
            include_dirs.append(arg)

    options = BuildOptions(
        raw=raw,
        defines=tuple((name, value) for kind, name, value in actions if kind == "D"),
        undefines=tuple(name for kind, name, _ in actions if kind == "U"),
        macro_actions=tuple(actions),
        include_dirs=tuple(include_dirs),
        cl_std=cl_std,
        **flags,
    )
    return _apply_implications(options)


def _unknown(word: str) -> str:
    """The message for an option ppcl does not know, with the ones of its family."""
    if word == "-cl-std":
        return f"'-cl-std' needs a version, e.g. -cl-std=CL1.2 (accepted: {', '.join(CL_STD_VERSIONS)})"
    family = next((prefix for prefix in ("-ppcl-", "-cl-") if word.startswith(prefix)), None)
    if family is None:
        return f"unknown option '{word}'"
    known = [spelling for spelling in _FLAGS if spelling.startswith(family)]
    if family == "-cl-":
        known.insert(0, "-cl-std=")
    return f"unknown option '{word}' (the {family}* options: {', '.join(known)})"


def _apply_implications(options: BuildOptions) -> BuildOptions:
    """Flags that the OpenCL specification says other flags imply."""
    if options.fast_relaxed_math:
        options = replace(options, finite_math_only=True, unsafe_math_optimizations=True)
    if options.unsafe_math_optimizations:
        options = replace(options, no_signed_zeros=True, mad_enable=True)
    return options
