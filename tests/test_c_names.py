"""Program names that are also names of the C library, of the compiler or of the generated C:
the C backend spells every name the program declares apart (``c.py``: ``c_identifier``), so
such a kernel builds and computes what it says; the OpenCL printer keeps the names."""

from __future__ import annotations

import numpy as np

from ppcl.compiler.codegen.c import c_identifier, print_c
from ppcl.compiler.codegen.opencl import print_opencl
from ppcl.compiler.frontend import compile_source
from tests.launch import build_kernel, run

# Every name here is valid OpenCL C and, unspelled, breaks the generated C: a libc function, a
# stdio or errno macro, a gcc builtin, a type of <stdio.h> or <stdint.h>, or a name the
# generated C gives its own things.
COLLIDING = r"""
typedef struct FILE { int errno; int stdout; } FILE;
typedef int uint8_t;
enum whence { SEEK_SET = 2, EOF = 5, BUFSIZ = 7 };
union fpos_t { int i; float f; };

int puts(int x) { return x + 1; }
int memcpy(int dst, int src) { return dst * 10 + src; }
float sinf(float x) { return x * 2.0f; }
int exit(int code) { return code - 1; }
int main(void) { return 4; }
int malloc(int n) { return n * n; }
int ppcl_printf(int v) { return v + 100; }
int ppcl_any(int v) { return v; }
int __builtin_expect(int v) { return v + 2; }
int fflush(int v) { return v; }

__kernel void k(__global int *out, int launch, int g)
{
    int memset = 3;
    int abs = -2;
    int errno = 6;
    int stdin = 1;
    int assert = 11;
    int fputs = 13;
    int vsnprintf = 17, fwrite = 19, line = 23, ap = 29;
    int __lx = 31, __lid = 37, __ctx_memset = 41, __G = 43, a0 = 47, n0 = 53;
    int ppcl_group_k = 59;
    FILE file;
    file.errno = 8;
    file.stdout = 9;
    uint8_t small = 5;
    union fpos_t pos;
    pos.i = 12;
    enum whence w = EOF;
    size_t i = get_global_id(0);
    int total = puts(memset) + memcpy(abs, errno) + (int)sinf(1.5f) + exit(stdin) + main()
              + malloc(small) + ppcl_printf(assert) + ppcl_any(fputs) + __builtin_expect(0)
              + vsnprintf + fwrite + line + ap + __lx + __lid + __ctx_memset + __G + a0 + n0
              + ppcl_group_k + file.errno + file.stdout + pos.i + w + SEEK_SET + BUFSIZ
              + launch + g;
    if (i > 100) printf("%d\n", fflush(memset));  /* brings in the printf support */
    out[i] = total + (int)i;
}
"""


def _expected(launch: int, g: int) -> int:
    memset, abs_, errno, stdin, assert_, fputs = 3, -2, 6, 1, 11, 13
    calls = ((memset + 1) + (abs_ * 10 + errno) + 3 + (stdin - 1) + 4 + 5 * 5
             + (assert_ + 100) + fputs + 2)
    locals_ = 17 + 19 + 23 + 29 + 31 + 37 + 41 + 43 + 47 + 53 + 59
    records = 8 + 9 + 12 + 5 + 2 + 7
    return calls + locals_ + records + launch + g


def test_names_of_the_c_library_and_of_the_generated_c_build_and_compute():
    out = np.zeros(8, np.int32)
    run(COLLIDING, "k", (8,), (4,), out, np.int32(1000), np.int32(20000))
    np.testing.assert_array_equal(out, _expected(1000, 20000) + np.arange(8))


def test_the_generated_c_spells_program_names_apart_and_keeps_the_entry_point():
    k = build_kernel(COLLIDING, "k", local_size=(4,))
    source = k.c_source
    assert "void ppcl_run_k(" in source  # the device finds the kernel by its own name
    assert "static inline int ppcl_u_puts(int ppcl_u_x)" in source
    assert "int ppcl_u_memset = 3" in source
    assert "struct ppcl_u_FILE {" in source
    assert "ppcl_u_file.ppcl_u_errno = 8" in source
    assert " puts(" not in source


# Built without the uniformity analysis, every statement is masked: the masks, labels and
# temporaries of the generated C are named ``__ppcl_*``.
DIVERGENT = r"""
__kernel void k(__global int *out, int n)
{
    size_t i = get_global_id(0);
    int __ppcl_m_then0 = 5, __ppcl_m_else1 = 6, __ppcl_next1 = 7, __ppcl_part0 = 8;
    int __ppcl_base = 9, __ctx_x = 10, __lid = 11;
    int x = 0;
    if (i % 2 == 0) {
        x = __ppcl_m_then0 + __ppcl_m_else1 + __ppcl_next1;
    } else {
        x = __ppcl_part0;
    }
    if (n > 0) {  /* uniform, but not known so without the analysis: masked */
        barrier(CLK_LOCAL_MEM_FENCE);
        x += n;
    }
    out[i] = x + __ppcl_base + __ctx_x + __lid;
}
"""


def test_program_names_spelled_like_the_names_the_compiler_makes_do_not_meet_them():
    k = build_kernel(DIVERGENT, "k", local_size=(8,), use_uniformity=False)
    assert "int __ppcl_m_then0[8]" in k.c_source  # the compiler's mask, beside the variable
    assert "int ppcl_u___ppcl_m_then0 = 5" in k.c_source
    out = np.full(8, -1, np.int32)
    run(DIVERGENT, "k", (8,), (8,), out, np.int32(100), uniformity=False)
    np.testing.assert_array_equal(out, np.where(np.arange(8) % 2 == 0, 18, 8) + 130)


def test_names_of_the_ir_get_the_prefix():
    assert c_identifier("memset") == "ppcl_u_memset"
    assert c_identifier("__ppcl_mask0") == "ppcl_u___ppcl_mask0"


def test_builtin_constants_print_as_values_in_c_and_by_name_in_opencl():
    """C has no OpenCL headers to define ``INT_MAX`` or ``CLK_LOCAL_MEM_FENCE``: the C dialect
    prints their values (never a prefixed name, which C would not know), the OpenCL printer
    their names; an enumerator the program declares keeps its (prefixed) name."""
    src = """
    enum E { A = 3 };
    __kernel void k(__global int *x, __global float *f)
    {
        x[0] = INT_MAX + CHAR_BIT + A + CLK_LOCAL_MEM_FENCE;
        f[0] = M_PI_F;
    }
    """
    module = compile_source(src).module
    text = print_c(module)
    assert f"{c_identifier('x')}[0] = 2147483647 + 8 + {c_identifier('A')} + 1u;" in text
    assert f"{c_identifier('f')}[0] = 3.1415927f;" in text
    opencl = print_opencl(module)
    assert "x[0] = INT_MAX + CHAR_BIT + A + CLK_LOCAL_MEM_FENCE;" in opencl
    assert "f[0] = M_PI_F;" in opencl
