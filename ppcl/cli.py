"""The ``ppcl`` command line.

``ppcl build FILE.cl [-D NAME[=VALUE]] [-I DIR] [--options "..."] --emit ir|opencl|c|cuda``
compiles an OpenCL C file and prints the typed IR, the re-printed OpenCL C, or the C the CPU
backend generates; it exits with status 1 and the located diagnostics on errors.
``ppcl explain FILE.cl [-D ...] --local 32,8 [--global 1024,1024 --arg n=1000]`` prints per
kernel the affine model's access classification, the split domains and which subkernel the
groups of a launch take, then host fusion's view: coarsening per dimension, the layout and
reuse distances of each buffer, vectorization, and the guard's stored choices. ``ppcl info``
describes the platforms and devices; ``ppcl bench`` runs the benchmark suite, ``ppcl fuzz``
the kernel fuzzer. ``python3 -m ppcl`` is the same command.

The ``PPCL_*`` variables are read once, before any command: a value ppcl cannot use is an
error naming the variable (status 1), and ``build`` honours ``PPCL_SPLIT`` and ``PPCL_DEBUG``
as a program's build does.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ppcl.compiler.diagnostics import CompileError, format_all
from ppcl.settings import Settings, SettingsError, read_settings

if TYPE_CHECKING:
    from ppcl.compiler.frontend import FrontendResult


def _build_option_string(args: argparse.Namespace) -> str:
    parts: list[str] = []
    for define in args.define or []:
        parts.append(f"-D{define}")
    for include in args.include or []:
        parts.append(f"-I{include}")
    if args.options:
        parts.append(args.options)
    return " ".join(parts)


def _compile_file(args: argparse.Namespace) -> FrontendResult | None:
    """The front end's result for ``args.file`` with the command's options, or None after
    printing why there is none (an unreadable file, bad options, compile errors)."""
    from ppcl.compiler.frontend import compile_source
    from ppcl.compiler.frontend.options import BuildOptionsError

    try:
        with open(args.file, encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        print(f"ppcl: error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return None
    try:
        return compile_source(source, args.file, _build_option_string(args))
    except BuildOptionsError as exc:
        print(f"ppcl: error: {exc}", file=sys.stderr)
    except CompileError as exc:
        print(exc.log, file=sys.stderr)
    return None


def _cmd_build(args: argparse.Namespace) -> int:
    result = _compile_file(args)
    if result is None:
        return 1
    if result.log:
        print(result.log, file=sys.stderr)
    from ppcl.compiler.deepstack import run_deep_if_needed

    # the printers recurse over the program's nesting as the front end does
    try:
        text = run_deep_if_needed(_emitted, result, args.emit, args.settings)
    except CompileError as exc:  # the kernel compiler's (work-group formation's) errors
        print(format_all(exc.diagnostics, result.sources), file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _emitted(result: FrontendResult, emit: str, settings: Settings) -> str:
    """The text ``--emit`` asks for: the typed IR, OpenCL C, or the C of every kernel."""
    if emit == "ir":
        from ppcl.compiler.codegen.irprint import print_ir

        return print_ir(result.module)
    if emit == "opencl":
        from ppcl.compiler.codegen.opencl import print_opencl

        return print_opencl(result.module)
    if emit == "cuda":
        from ppcl.compiler.codegen.cuda import cuda_unit

        return cuda_unit(result.module)
    from ppcl.compiler.pipeline import KernelSpec, lower_kernel

    options = result.options
    if not settings.split:  # PPCL_SPLIT=0, as a program's build takes it
        options = dataclasses.replace(options, no_split=True)
    return "".join(lower_kernel(result.module, kernel.name, KernelSpec((1, 1, 1)), options,
                                settings.debug).source for kernel in result.module.kernels)


def _sizes(option: str, text: str | None) -> tuple[int, int, int] | None:
    """A ``--local``/``--global`` size: one to three positive numbers, comma-separated."""
    if not text:
        return None
    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{option} {text}: give one to three positive numbers, e.g. "
                         "1024,1024") from None
    if not 1 <= len(parts) <= 3 or min(parts) < 1:
        raise ValueError(f"{option} {text}: give one to three positive numbers, e.g. "
                         "1024,1024")
    parts += [1] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


def _arg_values(pairs: Sequence[str]) -> dict[str, int]:
    """The ``--arg NAME=NUMBER`` values."""
    values: dict[str, int] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        try:
            if not eq or not name:
                raise ValueError
            values[name.strip()] = int(value)
        except ValueError:
            raise ValueError(f"--arg {pair}: write NAME=NUMBER, e.g. --arg n=1000") from None
    return values


def _cmd_explain(args: argparse.Namespace) -> int:
    from ppcl.compiler.pipeline import KernelSpec, kernel_ir
    from ppcl.compiler.transforms.split import explain
    from ppcl.hostfusion.explain import explain_kernel
    from ppcl.hostfusion.model import execution_order
    from ppcl.runtime.platform import get_platforms

    try:
        local = _sizes("--local", args.local) or (1, 1, 1)
        global_size = _sizes("--global", args.global_size)
        values = _arg_values(args.arg or [])
    except ValueError as exc:
        print(f"ppcl: error: {exc}", file=sys.stderr)
        return 1
    if global_size is not None and any(g % n for g, n in zip(global_size, local)):
        print(f"ppcl: error: --global {args.global_size} is not a multiple of --local "
              f"{args.local} in every dimension (CL_INVALID_WORK_GROUP_SIZE in OpenCL 1.2)",
              file=sys.stderr)
        return 1
    result = _compile_file(args)
    if result is None:
        return 1
    from ppcl.compiler.ir.types import ScalarType

    scalars = {p.name for kernel in result.module.kernels for p in kernel.params
               if isinstance(p.type, ScalarType)}
    unknown = sorted(set(values) - scalars)
    if unknown:
        print(f"ppcl: error: --arg {', '.join(unknown)}: no kernel of {args.file} has such a "
              f"scalar argument (its scalar arguments: {', '.join(sorted(scalars)) or 'none'})",
              file=sys.stderr)
        return 1
    launch = None
    if global_size is not None:
        launch = dict(values, **{f"gsize{d}": global_size[d] for d in range(3)})
    order = execution_order(get_platforms()[0].get_devices()[0])
    # explain splits the loops as formed itself, so the kernel is formed without the split
    unsplit = dataclasses.replace(result.options, no_split=True)
    for kernel in result.module.kernels:
        value = kernel_ir(result.module, kernel.name, KernelSpec(local), unsplit)
        formed = value.needs_formed("explain")
        print(f"kernel {kernel.name} (local size {'x'.join(map(str, local))}):")
        for line in explain(formed, value.spec.narrow_ids, launch):
            print(f"  {line}")
        for line in explain_kernel(kernel, order, global_size, local, values):
            print(f"  {line}")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from ppcl.runtime.info import print_info

    print_info()
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from ppcl.bench import main as bench_main

    status: int = bench_main(args.bench_args)
    return status


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from ppcl.fuzz.campaign import main as fuzz_main

    status: int = fuzz_main(args.fuzz_args)
    return status


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ppcl", description="A performance-portable OpenCL stack.")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="compile an OpenCL C file and print a stage of it")
    build.add_argument("file", help="OpenCL C source file")
    build.add_argument("-D", dest="define", action="append", metavar="NAME[=VALUE]",
                       help="define a preprocessor macro")
    build.add_argument("-I", dest="include", action="append", metavar="DIR",
                       help="add an include directory")
    build.add_argument("--options", default="", help="an OpenCL build-option string")
    build.add_argument("--emit", choices=("ir", "opencl", "c", "cuda"), default="ir",
                       help="what to print (default: ir)")
    build.set_defaults(func=_cmd_build)
    explain = sub.add_parser("explain", help="print the affine model, the input space "
                             "splitting and host fusion's analyses of each kernel")
    explain.add_argument("file", help="OpenCL C source file")
    explain.add_argument("-D", dest="define", action="append", metavar="NAME[=VALUE]",
                         help="define a preprocessor macro")
    explain.add_argument("-I", dest="include", action="append", metavar="DIR",
                         help="add an include directory")
    explain.add_argument("--options", default="", help="an OpenCL build-option string")
    explain.add_argument("--local", default="1", help="the local size, e.g. 32,8")
    explain.add_argument("--global", dest="global_size", default=None,
                         help="a launch's global size, e.g. 1024,1024: say which subkernel "
                         "its groups take")
    explain.add_argument("--arg", action="append", metavar="NAME=VALUE",
                         help="the value of an integer scalar argument for --global")
    explain.set_defaults(func=_cmd_explain)
    info = sub.add_parser("info", help="print platform and device information, like clinfo")
    info.set_defaults(func=_cmd_info)
    bench = sub.add_parser("bench", help="run the benchmark suite against pocl and numpy",
                           add_help=False)
    bench.add_argument("bench_args", nargs=argparse.REMAINDER,
                       help="--only NAMES, --size small|default, --json FILE, --repeats N")
    bench.set_defaults(func=_cmd_bench)
    fuzz = sub.add_parser("fuzz", help="run generated kernels on every device and reduce "
                          "what differs", add_help=False)
    fuzz.add_argument("fuzz_args", nargs=argparse.REMAINDER,
                      help="--seed N, --count N, --mode M, --jobs N, --out DIR, --no-pocl")
    fuzz.set_defaults(func=_cmd_fuzz)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = read_settings()  # every PPCL_* variable, checked before any command runs
    except SettingsError as error:
        print(f"ppcl: error: {error}", file=sys.stderr)
        return 1
    if argv[:1] == ["bench"]:
        # the suite parses its own options (--only, --size, --json, --repeats, --help)
        return _cmd_bench(argparse.Namespace(bench_args=argv[1:]))
    if argv[:1] == ["fuzz"]:  # likewise
        return _cmd_fuzz(argparse.Namespace(fuzz_args=argv[1:]))
    args = make_parser().parse_args(argv)
    args.settings = settings
    from ppcl.runtime.errors import Error

    try:
        status: int = args.func(args)
    except Error as error:  # a device the environment names that cannot be had, ...
        print(f"ppcl: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the output piped into a reader that stopped (| head)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
