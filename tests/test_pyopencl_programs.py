"""PyOpenCL host programs as people publish them, run with ``import ppcl as cl``: the API
names they reach for exist and behave as in PyOpenCL, and the ones ppcl leaves out on purpose
say so."""

from __future__ import annotations

import numpy as np
import pytest

import ppcl as cl
import ppcl.tools


def test_header_version_is_the_opencl_version_implemented():
    assert cl.get_cl_header_version() == (1, 2)
    assert ppcl.tools.get_cl_header_version() == (1, 2)


def test_enqueue_fill_fills_a_buffer_range(ctx, queue):
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
    cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, 16)
    cl.enqueue_fill(queue, buf, np.int32(7), 8, offset=4)
    out = np.empty(4, np.int32)
    cl.enqueue_copy(queue, out, buf)
    assert out.tolist() == [0, 7, 7, 0]
    with pytest.raises(cl.LogicError, match="fills a Buffer"):
        cl.enqueue_fill(queue, np.zeros(4, np.int32), np.int32(1), 16)


@pytest.mark.parametrize(("owner", "name"), [
    (cl, "SVM"), (cl, "svm_empty"), (cl, "Pipe"), (cl, "GLBuffer"),
    (ppcl.tools, "SVMAllocator"), (ppcl.tools, "SVMPool"),
])
def test_opencl_2_and_gl_names_say_they_are_unsupported(owner, name):
    assert not hasattr(owner, name)  # feature tests with hasattr still work
    with pytest.raises(AttributeError, match=f"{name} \\(PyOpenCL\\) is not supported by ppcl"):
        getattr(owner, name)


def test_create_sub_devices_says_it_is_unsupported(ctx):
    with pytest.raises(AttributeError, match="create_sub_devices .*not supported"):
        ctx.devices[0].create_sub_devices([0x1086, 1])


def test_unknown_names_keep_pythons_message():
    with pytest.raises(AttributeError, match="^module 'ppcl' has no attribute 'no_such_name'$"):
        cl.no_such_name  # noqa: B018


def test_kernel_info_attributes_and_clone(ctx, queue):
    prg = cl.Program(ctx, """
        __kernel __attribute__((reqd_work_group_size(2, 1, 1)))
        void put(__global int *a, int v) { a[get_global_id(0)] = v; }""").build()
    knl = prg.put
    assert knl.attributes == "reqd_work_group_size(2,1,1)"
    assert knl.reference_count >= 1 and knl.num_args == 2
    with pytest.raises(AttributeError, match="'Kernel' object has no attribute 'nope'"):
        knl.nope  # noqa: B018
    first, second = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8), cl.Buffer(ctx, 0, 8)
    knl.set_args(first, np.int32(5))
    twin = knl.clone()
    assert twin.function_name == "put" and twin is not knl
    twin.set_arg(0, second)  # leaves the original's argument as it was
    cl.enqueue_nd_range_kernel(queue, knl, (2,), (2,))
    cl.enqueue_nd_range_kernel(queue, twin, (2,), (2,))
    for buf in (first, second):
        out = np.empty(2, np.int32)
        cl.enqueue_copy(queue, out, buf)
        assert out.tolist() == [5, 5]


def test_every_info_value_is_an_attribute(ctx, queue):
    """Contexts, queues, events, buffers, images and samplers answer their info values as
    attributes, as PyOpenCL's do: ``queue.reference_count`` and ``sub.associated_memobject``
    raised AttributeError."""
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    sub = buf.get_sub_region(128, 64)
    event = cl.enqueue_marker(queue)
    image = cl.Image(ctx, cl.mem_flags.READ_ONLY,
                     cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT), shape=(2, 2))
    sampler = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP, cl.filter_mode.NEAREST)
    for obj in (ctx, queue, event, cl.UserEvent(ctx), buf, image, sampler):
        assert obj.reference_count >= 1
    assert sub.associated_memobject is buf and buf.associated_memobject is None
    assert sub.map_count == 0 and image.associated_memobject is None
    assert event.command_queue is queue and event.context is ctx
    assert sampler.addressing_mode == cl.addressing_mode.CLAMP
    for obj in (ctx, queue, event, buf, sampler):
        with pytest.raises(AttributeError, match=f"'{type(obj).__name__}' object has no "
                           "attribute 'nope'"):
            obj.nope  # noqa: B018


def test_info_attributes_leave_the_objects_own_attributes_to_them(ctx, queue):
    """The info attributes are class descriptors (``runtime/constants.py``
    ``info_attributes``), not ``__getattr__``, which kept CPython from specializing any
    attribute read of these classes on the launch path: none of them may share a name with an
    attribute the objects set themselves, which would slow every read of that attribute."""
    from ppcl.runtime.constants import info_descriptors

    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    program = cl.Program(ctx, "__kernel void k(__global int *x) { x[0] = 1; }").build()
    objects = (ctx, queue, cl.enqueue_marker(queue), cl.UserEvent(ctx), buf,
               buf.get_sub_region(128, 64), program.k,
               cl.Image(ctx, cl.mem_flags.READ_ONLY,
                        cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT),
                        shape=(2, 2)),
               cl.Sampler(ctx, False, cl.addressing_mode.CLAMP, cl.filter_mode.NEAREST))
    for obj in objects:
        descriptors = info_descriptors(type(obj))
        assert descriptors, type(obj)
        assert not descriptors & set(vars(obj)), type(obj)
        assert not hasattr(type(obj), "__getattr__"), type(obj)
    assert program.k.reference_count >= 1 and program.k.num_args == 1


def test_array_has_offset_error_as_pyopencl(queue):
    """``ary[2:].data`` raises pyopencl.array's ArrayHasOffsetError, a ValueError, which
    programs catch by name (the name did not exist); it stays a CL_INVALID_VALUE LogicError."""
    import ppcl.array as cla
    x = cla.zeros(queue, 8, np.float32)
    with pytest.raises(cla.ArrayHasOffsetError, match="CL_INVALID_VALUE.*base_data"):
        x[2:].data  # noqa: B018
    assert issubclass(cla.ArrayHasOffsetError, ValueError)
    assert issubclass(cla.ArrayHasOffsetError, cl.LogicError)
    assert x[:4].data is x.data


def test_array_index_arrays_take_and_put(queue):
    import ppcl.array as cla
    host = np.arange(10, dtype=np.float32)
    x = cla.to_device(queue, host)
    idx = cla.to_device(queue, np.array([0, 3, 9], np.int32))
    assert x[idx].get().tolist() == [0, 3, 9]
    x[idx] = cla.to_device(queue, np.array([-1, -2, -3], np.float32))
    x.setitem(idx, x[idx] * 10)
    host[[0, 3, 9]] = [-10, -20, -30]
    assert x.get().tolist() == host.tolist()
    x[idx] = 7
    x[idx[:2]] = np.array([5, 6], np.float32)
    host[[0, 3, 9]] = [5, 6, 7]
    assert x.get().tolist() == host.tolist()
    with pytest.raises(cl.LogicError, match="2 values for 3 indices"):
        x[idx] = cla.zeros(queue, 2, np.float32)


def test_array_module_functions_of_pyopencl(queue):
    import ppcl.array as cla
    host = np.array([3, -1, 0, 4, 2, 0], np.float32)
    x = cla.to_device(queue, host)
    assert cla.all(x > -2).get() == 1 and cla.any(x > 5).get() == 0
    assert cla.logical_and(x > 0, x < 4).get().tolist() == [1, 0, 0, 0, 1, 0]
    assert cla.logical_or(x, 0).get().tolist() == (host != 0).astype(np.int8).tolist()
    assert cla.logical_not(x).get().tolist() == (host == 0).astype(np.int8).tolist()
    idx = cla.to_device(queue, np.array([0, 3, 4], np.int32))
    y = cla.to_device(queue, np.arange(6, dtype=np.float32))
    assert cla.subset_dot(idx, x, y).get() == 3 * 0 + 4 * 3 + 2 * 4
    assert cla.reshape(x, (2, 3)).shape == (2, 3)
    assert cla.transpose(x.reshape(2, 3)).get().tolist() == host.reshape(2, 3).T.tolist()
    assert cla.hstack([x[:2], y[4:]]).get().tolist() == [3, -1, 4, 5]
    two = x.reshape(2, 3)
    assert cla.hstack([two, two]).get().tolist() == np.hstack([host.reshape(2, 3)] * 2).tolist()


def test_array_methods_of_pyopencl(queue):
    import ppcl.array as cla
    host = np.arange(6, dtype=np.float32)
    x = cla.to_device(queue, host)
    assert x.reshape(2, 3).reverse().get().tolist() == host[::-1].reshape(2, 3).tolist()
    assert x.mul_add(2, x[::-1], 3).get().tolist() == (2 * host + 3 * host[::-1]).tolist()
    ary, event = x[1:].get_async()
    event.wait()
    assert ary.tolist() == host[1:].tolist()
    mapped = x.map_to_host()
    assert mapped.tolist() == host.tolist()
    mapped[0] = 100
    mapped.base.release()
    assert x.get()[0] == 100
    assert x[1::2].map_to_host(flags=cl.map_flags.READ).tolist() == [1, 3, 5]
    with pytest.raises(cl.LogicError, match="non-negative strides"):
        x[::-1].map_to_host()


def test_a_strided_buffer_slice_says_what_step_it_must_have(ctx):
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    with pytest.raises(cl.LogicError, match="must have step 1, not 2"):
        buf[0:128:2]  # noqa: B018


def test_algorithm_compaction_as_pyopencl(queue):
    import ppcl.algorithm as alg
    import ppcl.array as cla
    host = np.array([5, 1, 8, 8, 3, 9, 9, 9, 2], np.int32)
    x = cla.to_device(queue, host)
    out, count, _ = alg.copy_if(x, "ary[i] > limit", extra_args=[("limit", np.int32(4))])
    assert out.get()[:int(count.get())].tolist() == [5, 8, 8, 9, 9, 9]
    out, count, _ = alg.remove_if(x, "ary[i] > 4")
    assert out.get()[:int(count.get())].tolist() == [1, 3, 2]
    yes, no, count, _ = alg.partition(x, "ary[i] % 2 == 0")
    kept = int(count.get())
    assert yes.get()[:kept].tolist() == [8, 8, 2]
    assert no.get()[:host.size - kept].tolist() == [5, 1, 3, 9, 9, 9]
    out, count, _ = alg.unique(x)
    assert out.get()[:int(count.get())].tolist() == [5, 1, 8, 3, 9, 2]
    out, count, _ = alg.copy_if(cla.empty(queue, 0, np.int32), "1")
    assert count.get() == 0
    # the counts have PyOpenCL's type: unsigned, so that 2**31 kept items or more fit
    assert count.dtype == np.uint32
    assert all(result[-2].dtype == np.uint32 for result in (
        alg.copy_if(x, "1"), alg.remove_if(x, "1"), alg.partition(x, "1")[1:],
        alg.unique(x)))


_MODULO_LISTS = """//CL//
void generate(LIST_ARG_DECL USER_ARG_DECL index_type i)
{
    int count = i % 4;
    for (int j = 0; j < count; ++j) {
        APPEND_mylist(count + off);
        APPEND_vals(data[i] * j);
    }
}
"""


def test_list_of_lists_builder_as_pyopencl(ctx, queue):
    """Object i appends i % 4 entries to two lists; each list comes back with its total
    count, n+1 exclusive starts and its entries object after object. The class raised
    AttributeError."""
    import ppcl.algorithm as alg
    import ppcl.array as cla
    builder = alg.ListOfListsBuilder(ctx, [("mylist", np.int32), ("vals", np.float32)],
                                     _MODULO_LISTS,
                                     arg_decls="__global const float *data, int off")
    for n in (0, 1, 7, 5001):
        data = np.arange(n, dtype=np.float32) * 0.5
        counts = np.arange(n) % 4
        result, event = builder(queue, n, cla.to_device(queue, data), 5)
        event.wait()
        assert list(result) == ["mylist", "vals"]
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        for built in result.values():
            assert built.count == counts.sum()
            assert built.starts.dtype == np.int32
            np.testing.assert_array_equal(built.starts.get(), starts)
        expected = [c + 5 for c in counts for _ in range(c)]
        np.testing.assert_array_equal(result["mylist"].lists.get(), expected)
        expected_vals = [d * j for d, c in zip(data, counts) for j in range(c)]
        np.testing.assert_array_equal(result["vals"].lists.get(),
                                      np.array(expected_vals, np.float32))
    # an omitted list is neither built nor written (its APPEND stores nothing)
    result, _ = builder(queue, 10, cla.to_device(queue, np.zeros(10, np.float32)), 1,
                        omit_lists=["vals"])
    assert list(result) == ["mylist"]
    assert result["mylist"].lists.get().tolist() == [2, 3, 3, 4, 4, 4] * 2 + [2]


_NEIGHBOUR_LISTS = """//CL//
void add_position(LIST_ARG_DECL float4 p) { APPEND_pos(p); }
void generate(LIST_ARG_DECL USER_ARG_DECL index_type i)
{
    for (int j = 0; j < nx; ++j) {
        if (j != i && fabs(x[j] - x[i]) < radius) {
            plb_pair_t pair; pair.idx = j; pair.w = x[j] - x[i];
            APPEND_nbr(pair);
            APPEND_dist(fabs(x[j] - x[i]));
        }
    }
    if (x[i] > 0.5f) add_position(LIST_ARGS (float4)(x[i], 1.0f, 2.0f, (float)i));
}
"""


@pytest.mark.parametrize("eliminate", [False, ["nbr"], True])
def test_list_of_lists_builder_structs_vectors_shared_counts(ctx, queue, eliminate):
    """A struct list and a list sharing its count (``count_sharing``), a float4 list filled
    through a helper taking ``LIST_ARGS``, and empty lists compressed away on request."""
    import ppcl.algorithm as alg
    import ppcl.array as cla
    import ppcl.cltypes
    pair, decl = ppcl.tools.match_dtype_to_c_struct(
        ctx.devices[0], "plb_pair_t", np.dtype([("idx", np.int32), ("w", np.float32)]))
    pair = ppcl.tools.get_or_register_dtype("plb_pair_t", pair)
    builder = alg.ListOfListsBuilder(
        ctx, [("nbr", pair), ("dist", np.float32), ("pos", ppcl.cltypes.float4)],
        _NEIGHBOUR_LISTS, "__global const float *x, int nx, float radius",
        count_sharing={"dist": "nbr"}, preamble=decl, eliminate_empty_output_lists=eliminate)
    x = np.array([0.1, 0.12, 0.5, 0.7, 0.71, 0.715, 0.9], np.float32)
    result, _ = builder(queue, x.size, cla.to_device(queue, x).data, x.size, np.float32(0.02))
    nbrs = [[j for j in range(x.size) if j != i and abs(x[j] - x[i]) < 0.02]
            for i in range(x.size)]
    flat = [(i, j) for i, row in enumerate(nbrs) for j in row]
    got = result["nbr"].lists.get()
    assert got["idx"].tolist() == [j for _, j in flat]
    np.testing.assert_array_equal(got["w"], [x[j] - x[i] for i, j in flat])
    np.testing.assert_array_equal(result["dist"].lists.get(), np.abs(got["w"]))
    assert result["dist"].starts is result["nbr"].starts
    sizes = [len(row) for row in nbrs]
    if eliminate:
        nonempty = [i for i, size in enumerate(sizes) if size]
        assert result["nbr"].num_nonempty_lists == len(nonempty)
        assert result["nbr"].nonempty_indices.get().tolist() == nonempty
        assert result["nbr"].compressed_indices.get().tolist() == \
            np.concatenate([[0], np.cumsum(np.array(sizes) > 0)]).tolist()
        sizes = [sizes[i] for i in nonempty]
    assert result["nbr"].starts.get().tolist() == np.concatenate([[0], np.cumsum(sizes)]).tolist()
    positions = result["pos"].lists.get()
    np.testing.assert_array_equal(positions["w"], [i for i in range(x.size) if x[i] > 0.5])
    np.testing.assert_array_equal(positions["x"], x[x > 0.5])


def test_list_of_lists_builder_misuse_is_named(ctx, queue):
    import ppcl.algorithm as alg
    import ppcl.array as cla
    lists = [("mylist", np.int32), ("vals", np.float32)]
    args = "__global const float *data, int off"
    with pytest.raises(cl.LogicError, match="count_sharing"):
        alg.ListOfListsBuilder(ctx, lists, _MODULO_LISTS, args, count_sharing={"x": "vals"})
    with pytest.raises(cl.LogicError, match="eliminate_empty_output_lists .*'other'"):
        alg.ListOfListsBuilder(ctx, lists, _MODULO_LISTS, args,
                               eliminate_empty_output_lists=["other"])
    builder = alg.ListOfListsBuilder(ctx, lists, _MODULO_LISTS, args,
                                     count_sharing={"vals": "mylist"})
    data = cla.zeros(queue, 4, np.float32)
    with pytest.raises(cl.LogicError, match="omit_lists names no list: \\['other'\\]"):
        builder(queue, 4, data, 1, omit_lists=["other"])
    with pytest.raises(cl.LogicError, match="omits 'mylist', whose count 'vals' shares"):
        builder(queue, 4, data, 1, omit_lists=["mylist"])
    with pytest.raises(TypeError, match="takes 2 arguments"):
        builder(queue, 4, data)
    with pytest.raises(cl.LogicError, match="INVALID_ARG_VALUE"):
        builder(queue, 4, np.zeros(4, np.float32), 1)


def test_algorithm_counts_are_uint32_as_pyopencl(queue):
    """The counts of copy_if, remove_if, partition and unique have PyOpenCL's scan_dtype,
    uint32: they were int32."""
    import ppcl.algorithm as alg
    import ppcl.array as cla
    x = cla.to_device(queue, np.array([3, 3, 7, 1], np.float32))
    counts = [alg.copy_if(x, "ary[i] > 2")[1], alg.remove_if(x, "ary[i] > 2")[1],
              alg.partition(x, "ary[i] > 2")[2], alg.unique(x)[1],
              alg.copy_if(x[:0], "1")[1]]
    assert [c.dtype for c in counts] == [np.dtype(np.uint32)] * 5
    assert [int(c.get()) for c in counts] == [3, 1, 3, 3, 0]


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_radix_sort_as_pyopencl(ctx, queue, bits):
    """RadixSort sorts every named array stably by the key (returned in the order of
    sort_arg_names); programs using it stopped at AttributeError."""
    import ppcl.algorithm as alg
    import ppcl.array as cla
    rng = np.random.default_rng(bits)
    sort = alg.RadixSort(ctx, "uint *keys, float *vals, int unused", key_expr="keys[i]",
                         sort_arg_names=["vals", "keys"], bits_at_a_time=bits)
    for n, key_bits in [(0, 8), (1, 8), (5000, 7), (70_001, 32)]:
        keys = rng.integers(0, 2**key_bits, n, dtype=np.uint64).astype(np.uint32)
        vals = rng.random(n).astype(np.float32)
        (got_vals, got_keys), event = sort(cla.to_device(queue, keys),
                                           cla.to_device(queue, vals), np.int32(0),
                                           key_bits=key_bits)
        event.wait()
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(got_keys.get(), keys[order])
        np.testing.assert_array_equal(got_vals.get(), vals[order])
    by_value = alg.RadixSort(ctx, "float *x", "(ulong)(x[i] * 1000)", ["x"],
                             index_dtype=np.int64, key_dtype=np.uint64)
    x = rng.random(3000).astype(np.float32)
    (got,), _ = by_value(cla.to_device(queue, x), key_bits=10)
    np.testing.assert_array_equal(got.get(), x[np.argsort((x * 1000).astype(np.uint64),
                                                          kind="stable")])
    with pytest.raises(cl.LogicError, match="INVALID_VALUE"):
        alg.RadixSort(ctx, "uint *keys, int n", "keys[i]", ["n"])
    with pytest.raises(cl.LogicError, match="INVALID_VALUE"):
        by_value(cla.to_device(queue, x), key_bits=65)


def test_key_value_sorter_as_pyopencl(ctx, queue):
    import ppcl.algorithm as alg
    import ppcl.array as cla
    rng = np.random.default_rng(7)
    sorter = alg.KeyValueSorter(ctx)
    for nkeys in (1, 10, 1000):
        keys = rng.integers(0, nkeys, 2000).astype(np.int32)
        starts, lists, event = sorter(queue, cla.to_device(queue, keys),
                                      cla.arange(queue, 2000, dtype=np.int32), nkeys=nkeys,
                                      starts_dtype=np.int32)
        event.wait()
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(lists.get(), order)
        np.testing.assert_array_equal(starts.get(),
                                      np.searchsorted(keys[order], np.arange(nkeys + 1)))


def test_key_value_sorter_refuses_keys_outside_the_range(ctx, queue):
    """The sort looks at the bits of nkeys - 1 only, so key 12 of 10 keys was grouped with
    key 4 (its low bits) without a word; a negative key likewise."""
    import ppcl.algorithm as alg
    import ppcl.array as cla
    sorter = alg.KeyValueSorter(ctx)
    values = cla.arange(queue, 4, dtype=np.int32)
    for keys in ([1, 12, 4, 0], [1, -1, 4, 0]):
        with pytest.raises(cl.LogicError, match=r"INVALID_VALUE.*\[0, nkeys\) = \[0, 10\)"):
            sorter(queue, cla.to_device(queue, np.array(keys, np.int32)), values, nkeys=10,
                   starts_dtype=np.int32)


def test_bitonic_sort_as_pyopencl(ctx, queue):
    """BitonicSort sorts in place along any axis of power-of-two length and permutes an
    index array along; ``import ppcl.bitonic_sort`` failed."""
    import ppcl.array as cla
    from ppcl.bitonic_sort import BitonicSort
    sorter = BitonicSort(ctx)
    rng = np.random.default_rng(5)
    for dtype, shape, axis in [(np.int32, (1,), 0), (np.float32, (4096,), 0),
                               (np.uint64, (8, 64), 1), (np.float64, (32, 3), -2),
                               (np.int8, (4, 16, 3), 1)]:
        host = rng.permutation(np.prod(shape)).reshape(shape).astype(dtype)
        ary = cla.to_device(queue, host)
        out, event = sorter(ary, axis=axis)
        event.wait()
        assert out is ary
        np.testing.assert_array_equal(ary.get(), np.sort(host, axis=axis))
    keys = rng.random(1024).astype(np.float32)
    ary, idx = cla.to_device(queue, keys), cla.arange(queue, 1024, dtype=np.int32) * 10
    sorter(ary, idx)
    np.testing.assert_array_equal(idx.get(), np.argsort(keys) * 10)
    with pytest.raises(cl.LogicError, match="power-of-two length, not 6"):
        sorter(cla.zeros(queue, 6, np.float32))
    with pytest.raises(cl.LogicError, match="C-contiguous"):
        sorter(cla.zeros(queue, (8, 4), np.float32).T)
    assert sorter(cla.zeros(queue, 0, np.float32))[0].size == 0


def test_like_constructors_take_pyopencls_positional_allocator(ctx, queue):
    import ppcl.array as cla
    pool = ppcl.tools.MemoryPool(ppcl.tools.ImmediateAllocator(queue))
    x = cla.to_device(queue, np.arange(4, dtype=np.float32))
    made = cla.empty_like(x, queue, pool)
    assert made.dtype == x.dtype and made.allocator is pool
    assert cla.zeros_like(x, allocator=pool).allocator is pool
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=np.arange(8, dtype=np.float32))
    # empty is PyOpenCL's Array constructor: data= and offset= wrap a buffer
    assert cla.empty(queue, (4,), np.float32, data=buf, offset=8).get().tolist() == [2, 3, 4, 5]


def test_positional_and_keyword_spellings_of_pyopencl(ctx, queue):
    import ppcl.array as cla
    from ppcl import clmath, clrandom
    x = cla.empty(queue, 500, np.float32)
    clrandom.fill_rand(x, queue, 5, 7)  # (result, queue, a, b)
    assert 5 <= x.get().min() and x.get().max() < 7
    a = cla.to_device(queue, np.array([1, 2], np.float32))
    b = cla.to_device(queue, np.array([2, 0.5], np.float32))
    assert np.allclose(clmath.atan2(y=a, x=b).get(), np.arctan2([1, 2], [2, 0.5]))
    assert clmath.fmod(arg=b, mod=a).get().tolist() == [0, 0.5]
    kernel = cl.Program(ctx, "__kernel void f(__global int *o, int v) { o[0] = v; }").build().f
    kernel.set_scalar_arg_dtypes(arg_types=[None, np.int32])
    out = cla.zeros(queue, 1, np.int32)
    kernel(queue, (1,), None, out.data, 7)
    assert out.get()[0] == 7


def test_arrays_of_registered_structs_copy_slice_and_take(ctx, queue):
    import ppcl.array as cla
    point, _ = ppcl.tools.match_dtype_to_c_struct(
        ctx.devices[0], "copyable_point_t", np.dtype([("x", np.float32), ("n", np.int32)]))
    point = ppcl.tools.get_or_register_dtype("copyable_point_t", point)
    assert "copyable_point_t;" in ppcl.tools.dtype_to_c_struct(ctx.devices[0], point)
    host = np.zeros(5, point)
    host["x"], host["n"] = np.arange(5), [3, 1, 4, 1, 5]
    x = cla.to_device(queue, host)
    # each of these runs a kernel ppcl writes, whose source names the struct
    assert x.copy().get()["n"].tolist() == [3, 1, 4, 1, 5]
    assert x[1:3].copy().get()["n"].tolist() == [1, 4]
    target = cla.empty_like(x)
    target[:] = x
    assert target.get()["x"].tolist() == [0, 1, 2, 3, 4]
    picked = cla.take(x, cla.to_device(queue, np.array([4, 0], np.int32)))
    assert picked.get()["n"].tolist() == [5, 3]
    assert cla.concatenate((x, x)).get()["n"].tolist() == [3, 1, 4, 1, 5] * 2


def test_elementwise_kernel_takes_auto_preamble(ctx, queue):
    import ppcl.array as cla
    from ppcl.elementwise import ElementwiseKernel
    double_it = ElementwiseKernel(ctx, "cfloat_t *z", "z[i] = cfloat_mul(z[i], cfloat_new(2, 0))",
                                  preamble="#include <pyopencl-complex.h>\n",
                                  auto_preamble=False)
    z = cla.to_device(queue, np.array([1 + 1j, 2], np.complex64))
    double_it(z)
    assert z.get().tolist() == [2 + 2j, 4]


def test_results_and_views_of_an_array_subclass_are_of_that_subclass(queue):
    import ppcl.array as cla

    class Tagged(cla.Array):
        @property
        def first_index(self):
            return self.offset // self.dtype.itemsize

    x = Tagged(queue, (4, 3), np.float32)
    x.set(np.arange(12, dtype=np.float32).reshape(4, 3))
    for made in (x[1:], x + 1, x.copy(), x.reshape(3, 4), x.astype(np.int32),
                 cla.empty_like(x)):
        assert type(made) is Tagged
    assert x[2:].first_index == 6
    assert (x * 2).get()[1].tolist() == [6, 8, 10]


def test_reductions_take_initial_and_commands_take_wait_for(queue):
    import ppcl.array as cla
    x = cla.to_device(queue, np.array([3, -1, 4, 1], np.float32))
    assert cla.sum(x, initial=10).get() == 17
    assert cla.max(x, initial=100).get() == 100 and cla.min(x, initial=0).get() == -1
    assert cla.max(cla.empty(queue, 0, np.float32), initial=7) == 7
    ready = cl.UserEvent(queue.context)
    ready.set_status(cl.command_execution_status.COMPLETE)
    assert cla.all(x, wait_for=[ready]).get() == 1 and x.any(wait_for=[ready]).get() == 1
    picked = cla.take(x, cla.to_device(queue, np.array([2, 0], np.int32)), wait_for=[ready])
    assert picked.get().tolist() == [4, 3]
    assert x.fill(2, queue, wait_for=[ready]).get().tolist() == [2] * 4
    y = cla.to_device(queue, np.arange(6, dtype=np.float32))
    subset = cla.to_device(queue, np.array([5, 1, 2], np.int32))
    assert cla.subset_max(subset, y, slice=slice(1, 3)).get() == 2
    assert cla.diff(y, allocator=ppcl.tools.ImmediateAllocator(queue)).get().tolist() == [1] * 5
    assert y.reshape(2, 3).ravel(order="F").get().tolist() == [0, 3, 1, 4, 2, 5]


def test_tools_argument_helpers_and_memoizers_of_pyopencl(ctx, queue):
    import ppcl.array as cla
    from ppcl.elementwise import ElementwiseKernel
    from ppcl.tools import (
        bitlog2,
        context_dependent_memoize,
        get_arg_list_scalar_arg_dtypes,
        parse_arg_list,
        parse_c_arg,
    )
    # argument lists may be lists of declarators, as PyOpenCL parses them
    add = ElementwiseKernel(ctx, ["float *x", "float a"], "x[i] += a")
    x = cla.zeros(queue, 3, np.float32)
    add(x, 2)
    assert x.get().tolist() == [2, 2, 2]
    assert parse_c_arg("__global const float *a").name == "a"
    assert get_arg_list_scalar_arg_dtypes(parse_arg_list("float *x, int n", with_offset=True)) \
        == [None, np.dtype(np.int64), np.dtype(np.int32)]
    assert [bitlog2(n) for n in (1, 2, 3, 1024)] == [0, 1, 1, 10]
    built = []

    @context_dependent_memoize
    def kernel_for(context, dtype, name="k"):
        built.append(name)
        return name

    kernel_for(ctx, np.float32, name="a")
    kernel_for(ctx, np.float32, name="a")
    assert built == ["a"]


def test_multi_take_put_and_as_strided_as_pyopencl(queue):
    import ppcl.array as cla
    arrays = [cla.to_device(queue, np.arange(6, dtype=np.float32) * (k + 1)) for k in range(2)]
    src = cla.to_device(queue, np.array([5, 0, 2], np.int32))
    dest = cla.to_device(queue, np.array([1, 3, 0], np.int32))
    taken = cla.multi_take(arrays, src, out=[cla.empty(queue, 3, np.float32) for _ in arrays])
    assert [t.get().tolist() for t in taken] == [[5, 0, 2], [10, 0, 4]]
    put = cla.multi_put(taken, dest, out=[cla.zeros(queue, 4, np.float32) for _ in arrays])
    assert [p.get().tolist() for p in put] == [[2, 5, 0, 0], [4, 10, 0, 0]]
    moved = cla.multi_take_put(arrays, dest, cla.to_device(queue, np.arange(3, dtype=np.int32)),
                               out=[cla.zeros(queue, 4, np.float32) for _ in arrays],
                               src_offsets=[1, 2])
    assert [m.get().tolist() for m in moved] == [[3, 1, 0, 2], [8, 4, 0, 6]]
    assert cla.as_strided(arrays[0], (2, 2), (8, 4)).get().tolist() == [[0, 1], [2, 3]]


def test_sampler_int_ptr_and_queue_on_host_properties(ctx):
    sampler = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP, cl.filter_mode.NEAREST)
    assert isinstance(sampler.int_ptr, int)
    device = ctx.devices[0]
    assert device.queue_on_host_properties == device.queue_properties


def test_to_device_keeps_a_fortran_layout_and_takes_array_queue(ctx, queue):
    import ppcl.array as cla
    host = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    x = cla.to_device(queue, host)
    assert x.strides == host.strides and x.get().tolist() == host.tolist()
    assert x.get().flags.f_contiguous
    # a kernel given the buffer reads the elements in the host's (column-major) order
    copy = cl.Program(ctx, "__kernel void k(__global const float *a, __global float *o) "
                           "{ o[get_global_id(0)] = a[get_global_id(0)]; }").build().k
    out = cla.empty(queue, 6, np.float32)
    copy(queue, (6,), None, x.data, out.data)
    assert out.get().tolist() == [0, 3, 1, 4, 2, 5]
    assert (x + 1).get().tolist() == (host + 1).tolist()
    assert cla.to_device(queue, np.arange(3, dtype=np.float32), array_queue=None).queue is None
