"""The ``ppcl build`` command: printed stages and located errors with a non-zero status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ppcl.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_build_emits_ir(capsys):
    assert main(["build", str(ROOT / "examples" / "vector_add.cl"), "--emit", "ir"]) == 0
    out = capsys.readouterr().out
    assert "__kernel void vector_add" in out
    assert "/*builtin get_global_id__uint*/" in out


def test_build_emits_opencl_that_builds_again(capsys, tmp_path):
    assert main(["build", str(ROOT / "examples" / "vector_add.cl"), "--emit", "opencl"]) == 0
    printed = capsys.readouterr().out
    again = tmp_path / "again.cl"
    again.write_text(printed)
    assert main(["build", str(again), "--emit", "opencl"]) == 0
    assert capsys.readouterr().out == printed


def test_defines_and_includes_reach_the_preprocessor(capsys, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#define SCALE(x) ((x) * FACTOR)\n")
    src = tmp_path / "k.cl"
    src.write_text('#include "scale.h"\n__kernel void k(__global int *a) { a[0] = SCALE(a[0]); }\n')
    assert main(["build", str(src), "-D", "FACTOR=3", "-I", str(tmp_path / "inc"), "--emit", "opencl"]) == 0
    assert "a[0] * 3" in capsys.readouterr().out


def test_errors_are_located_and_exit_nonzero(tmp_path):
    src = tmp_path / "bad.cl"
    src.write_text("__kernel void k(__global int *a) {\n    a[0] = b;\n    a[1] = c;\n}\n")
    proc = subprocess.run([sys.executable, "-m", "ppcl.cli", "build", str(src)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert f"{src}:2:12: error: use of undeclared identifier 'b'" in proc.stderr
    assert f"{src}:3:12: error: use of undeclared identifier 'c'" in proc.stderr
    assert "    a[0] = b;\n           ^" in proc.stderr


def test_kernel_compiler_errors_of_emit_c_are_located_and_exit_nonzero(tmp_path):
    src = tmp_path / "comma.cl"
    src.write_text("__kernel void k(__global int *a) {\n"
                   "    (barrier(CLK_LOCAL_MEM_FENCE), a[0] = 1);\n}\n")
    proc = subprocess.run([sys.executable, "-m", "ppcl.cli", "build", str(src), "--emit", "c"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert (f"{src}:2:6: error: barrier must be called as a statement of its own\n"
            "    (barrier(CLK_LOCAL_MEM_FENCE), a[0] = 1);\n     ^") in proc.stderr


def test_unknown_build_option_is_reported(capsys):
    status = main(["build", str(ROOT / "examples" / "vector_add.cl"), "--options=-cl-bogus"])
    assert status == 1
    assert "CL_INVALID_BUILD_OPTIONS" in capsys.readouterr().err
