"""Uniformity analysis: which values and which branches are the same across a work-group."""

from __future__ import annotations

from ppcl.compiler.analysis.uniformity import Kind, analyze_kernel
from ppcl.compiler.frontend import compile_source
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir.visit import find_all


def analyze(src: str):
    module = compile_source(src, "u.cl").module
    kernel = module.kernels[0]
    return kernel, analyze_kernel(module, kernel)


def test_ids_are_affine_and_arguments_uniform():
    kernel, u = analyze("""
    __kernel void k(__global float *a, int n) {
        int i = get_global_id(0);
        int j = i * 4 + n;
        int r = get_global_id(1) * n;
        int g = get_group_id(0) * get_local_size(0);
        float v = a[i];
        a[j] = v + n;
    }""")
    assert u.var("i").consecutive_in(0)
    assert u.var("j").kind is Kind.AFFINE and u.var("j").strides == (4, 0, 0)
    assert u.var("r").kind is Kind.AFFINE and u.var("r").strides == (0, None, 0)
    assert u.var("g").is_uniform
    assert u.var("n").is_uniform
    assert u.var("v").kind is Kind.VARYING


def test_reduction_loop_is_uniform_control_and_guarded_add_is_not():
    kernel, u = analyze("""
    __kernel void k(__global float *a, __local float *l) {
        uint lid = get_local_id(0);
        l[lid] = a[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
            if (lid < s)
                l[lid] += l[lid + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) a[get_group_id(0)] = l[0];
    }""")
    loop = find_all(kernel, ir.For)[0]
    guarded = find_all(kernel, ir.If)
    assert u.var("s").is_uniform
    assert u.control_uniform(loop)
    assert not any(u.control_uniform(s) for s in guarded)


def test_varying_break_makes_the_loop_and_its_variables_varying():
    kernel, u = analyze("""
    __kernel void k(__global int *a, int n) {
        int count = 0;
        for (int t = 0; t < n; t++) {
            if (a[get_global_id(0)] < t) break;
            count += 1;
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
        a[get_global_id(0)] = count;
    }""")
    loop = find_all(kernel, ir.For)[0]
    assert not u.control_uniform(loop)
    assert u.var("t").kind is Kind.VARYING
    assert u.var("count").kind is Kind.VARYING


def test_assignment_under_varying_condition_is_varying():
    kernel, u = analyze("""
    __kernel void k(__global int *a, int n) {
        int x = n;
        int y = n;
        if (get_local_id(0) < 3) x = 1;
        if (n > 3) y = 2;
        a[get_global_id(0)] = x + y;
    }""")
    ifs = find_all(kernel, ir.If)
    assert u.var("x").kind is Kind.VARYING
    assert u.var("y").is_uniform
    assert not u.control_uniform(ifs[0]) and u.control_uniform(ifs[1])


def test_varying_return_puts_later_code_under_varying_control():
    kernel, u = analyze("""
    __kernel void k(__global int *a, int n) {
        if (get_global_id(0) >= n) return;
        int m = n * 2;
        if (n > 1) { barrier(CLK_LOCAL_MEM_FENCE); }
        a[get_global_id(0)] = m;
    }""")
    ifs = find_all(kernel, ir.If)
    later = ifs[1]
    assert u.under_varying_control(later)
    assert not u.control_uniform(later)


def test_uniform_return_keeps_control_uniform():
    kernel, u = analyze("""
    __kernel void k(__global int *a, int n) {
        if (n == 0) return;
        for (int i = 0; i < n; i++) { barrier(CLK_LOCAL_MEM_FENCE); }
        a[get_global_id(0)] = 1;
    }""")
    loop = find_all(kernel, ir.For)[0]
    assert u.control_uniform(loop)


def test_atomics_and_id_reading_helpers_are_varying():
    kernel, u = analyze("""
    int lane(void) { return get_local_id(0); }
    int twice(int x) { return 2 * x; }
    __kernel void k(__global int *a, int n) {
        int old = atomic_add(a, 1);
        int l = lane();
        int t = twice(n);
        a[1] = old + l + t;
    }""")
    assert u.var("old").kind is Kind.VARYING
    assert u.var("l").kind is Kind.VARYING
    assert u.var("t").is_uniform


def test_values_declared_after_a_varying_return_are_uniform_among_those_still_running():
    kernel, u = analyze("""
    __kernel void kern(__global float *a, int n) {
        int i = get_global_id(0);
        int outer = 0;
        if (i >= n) return;
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) {
            acc += a[k];
            outer = k;
        }
        int late = 0;
        if (get_local_id(0) == 1) late = 1;
        a[i] = acc + outer + late;
    }""")
    loop = find_all(kernel, ir.For)[0]
    assert u.var("k").is_uniform  # declared and stepped at the same divergence level
    assert u.var("acc").is_uniform  # every work-item still running adds the same values
    assert u.var("outer").kind is Kind.VARYING  # declared before the return, set after it
    assert u.var("late").kind is Kind.VARYING  # set under a varying branch
    assert u.convergent(loop) and not u.control_uniform(loop)
    assert u.declared_level("k") == 1 and u.declared_level("i") == 0


def test_loop_with_varying_trip_count_is_not_convergent():
    kernel, u = analyze("""
    __kernel void kern(__global float *a, int n) {
        float acc = 0.0f;
        for (int k = 0; k < get_global_id(0); ++k) acc += a[k];
        a[get_global_id(0)] = acc;
    }""")
    loop = find_all(kernel, ir.For)[0]
    assert not u.convergent(loop)
    assert u.var("k").kind is Kind.VARYING


def test_ids_along_a_dimension_of_one_work_item_are_uniform():
    src = """
    __kernel void k(__global float *a, int n) {
        int x = get_global_id(0);
        int y = get_global_id(1);
        if (x >= n) return;
        for (int i = 0; i < y; i++)
            a[i * n + x] += 1.0f;
    }"""
    module = compile_source(src, "u.cl").module
    kernel = module.kernels[0]
    loop = find_all(kernel, ir.For)[0]
    rows = analyze_kernel(module, kernel, (16, 1, 1))
    assert rows.var("y").is_uniform and rows.convergent(loop)
    assert rows.var("x").consecutive_in(0)
    square = analyze_kernel(module, kernel, (16, 2, 1))
    assert square.var("y").kind is Kind.AFFINE and not square.convergent(loop)
    assert not analyze_kernel(module, kernel).var("y").is_uniform


def test_a_variable_declared_in_a_varying_loops_body_lives_one_iteration():
    """In a loop whose trip count varies, what the loop carries (its counter, ``acc``,
    ``last``) is varying, but a variable its body declares starts afresh every iteration:
    an inner loop's counter stays uniform, and that inner loop convergent."""
    kernel, u = analyze("""
    __kernel void kern(__global const float *c, __global float *a, int n) {
        float acc = 0.0f, last = 0.0f;
        for (int k = 0; k < get_global_id(0); ++k) {
            float p = 0.0f;
            for (int j = 0; j < n; j++)
                p = p * acc + c[j];
            int mid = n / 2;
            last = c[mid];
            acc += p;
        }
        a[get_global_id(0)] = acc + last;
    }""")
    outer, inner = find_all(kernel, ir.For)
    assert not u.convergent(outer) and u.convergent(inner)
    assert u.var("k").kind is Kind.VARYING
    assert u.var("acc").kind is Kind.VARYING and u.var("last").kind is Kind.VARYING
    assert u.var("p").kind is Kind.VARYING  # computed from acc
    assert u.var("j").is_uniform and u.var("mid").is_uniform
