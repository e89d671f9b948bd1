"""The ``ppcl`` command line.

``ppcl build FILE.cl [-D NAME[=VALUE]] [-I DIR] [--options "..."] --emit ir|opencl|c``
compiles an OpenCL C file and prints the typed IR, the re-printed OpenCL C, or the C the CPU
backend generates; it exits with status 1 and the located diagnostics on errors.
``ppcl info`` describes the platforms and devices; ``ppcl bench`` runs the benchmark suite.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ppcl.compiler.diagnostics import CompileError

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


def _cmd_build(args: argparse.Namespace) -> int:
    from ppcl.compiler.frontend import compile_source
    from ppcl.compiler.frontend.options import BuildOptionsError

    try:
        with open(args.file, encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        print(f"ppcl: error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        result = compile_source(source, args.file, _build_option_string(args))
    except BuildOptionsError as exc:
        print(f"ppcl: error: {exc}", file=sys.stderr)
        return 1
    except CompileError as exc:
        print(exc.log, file=sys.stderr)
        return 1
    if result.log:
        print(result.log, file=sys.stderr)
    from ppcl.compiler.deepstack import run_deep_if_needed

    # the printers recurse over the program's nesting as the front end does
    sys.stdout.write(run_deep_if_needed(_emitted, result, args.emit))
    return 0


def _emitted(result: FrontendResult, emit: str) -> str:
    """The text ``--emit`` asks for: the typed IR, OpenCL C, or the C of every kernel."""
    if emit == "ir":
        from ppcl.compiler.codegen.irprint import print_ir

        return print_ir(result.module)
    if emit == "opencl":
        from ppcl.compiler.codegen.opencl import print_opencl

        return print_opencl(result.module)
    from ppcl.compiler.pipeline import KernelSpec, lower_kernel

    return "".join(lower_kernel(result.module, kernel.name, KernelSpec((1, 1, 1)),
                                result.options).source for kernel in result.module.kernels)


def _cmd_info(args: argparse.Namespace) -> int:
    from ppcl.runtime.info import print_info

    print_info()
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from ppcl.bench import main as bench_main

    status: int = bench_main(args.bench_args)
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
    build.add_argument("--emit", choices=("ir", "opencl", "c"), default="ir",
                       help="what to print (default: ir)")
    build.set_defaults(func=_cmd_build)
    info = sub.add_parser("info", help="print platform and device information, like clinfo")
    info.set_defaults(func=_cmd_info)
    bench = sub.add_parser("bench", help="run the benchmark suite against pocl and numpy",
                           add_help=False)
    bench.add_argument("bench_args", nargs=argparse.REMAINDER,
                       help="--only NAMES, --size small|default, --json FILE, --repeats N")
    bench.set_defaults(func=_cmd_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        # the suite parses its own options (--only, --size, --json, --repeats, --help)
        return _cmd_bench(argparse.Namespace(bench_args=argv[1:]))
    args = make_parser().parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
