"""Platforms, devices, contexts, enumerations and errors of the PyOpenCL-compatible runtime."""

from __future__ import annotations

import pytest

import ppcl as cl
from ppcl.devices import gpu_devices
from ppcl.runtime.errors import make_error


@pytest.mark.cpu_device
def test_the_first_platform_lists_the_cpu_device():
    """ppcl's own platform comes first and lists the CPU device; the CUDA platform follows
    only where the driver finds GPUs."""
    platforms = cl.get_platforms()
    assert [p.name for p in platforms] == ["ppcl"] + (["ppcl CUDA"] if gpu_devices() else [])
    platform = platforms[0]
    assert platform.version.startswith("OpenCL 1.2 ppcl")
    devices = platform.get_devices()
    assert len(devices) == 1
    assert platform.get_devices(device_type=cl.device_type.CPU) == devices
    assert platform.get_devices(cl.device_type.ALL) == devices
    # as PyOpenCL: no device of a type is an empty list, which "GPU, else CPU" code relies on
    assert platform.get_devices(device_type=cl.device_type.GPU) == []
    gpus = [d for p in platforms for d in p.get_devices(cl.device_type.GPU)]
    assert len(gpus) == len(gpu_devices())
    with pytest.raises(cl.RuntimeError, match="CL_DEVICE_NOT_FOUND"):
        cl.Context(dev_type=cl.device_type.GPU)  # of the first platform


@pytest.mark.cpu_device
def test_device_info_attributes_and_get_info():
    dev = cl.get_platforms()[0].get_devices()[0]
    assert dev.type == cl.device_type.CPU
    assert dev.version.startswith("OpenCL 1.2 ppcl")
    assert dev.max_work_group_size == 4096
    assert dev.max_work_item_sizes == [4096, 4096, 4096]
    assert dev.max_compute_units >= 1
    assert dev.local_mem_size > 0
    assert dev.global_mem_size >= dev.max_mem_alloc_size > 0
    assert "cl_khr_fp64" in dev.extensions
    assert dev.address_bits == 64
    assert dev.double_fp_config & cl.device_fp_config.INF_NAN
    assert dev.preferred_vector_width_float >= 4
    assert dev.native_vector_width_double >= 2
    assert dev.platform is cl.get_platforms()[0]
    assert isinstance(dev.driver_version, str) and dev.name and dev.vendor
    assert dev.get_info(cl.device_info.MAX_WORK_GROUP_SIZE) == 4096
    assert dev.get_info(cl.device_info.NAME) == dev.name
    with pytest.raises(AttributeError):
        dev.no_such_info  # noqa: B018


@pytest.mark.parametrize("info_class, name, version", [
    ("device_info", "ATOMIC_MEMORY_CAPABILITIES", "3.0"),
    ("device_info", "NUMERIC_VERSION", "3.0"),
    ("device_info", "OPENCL_C_ALL_VERSIONS", "3.0"),
    ("device_info", "OPENCL_C_FEATURES", "3.0"),
    ("device_info", "EXTENSIONS_WITH_VERSION", "3.0"),
    ("device_info", "SVM_CAPABILITIES", "2.0"),
    ("device_info", "IL_VERSION", "2.1"),
    ("platform_info", "NUMERIC_VERSION", "3.0"),
    ("platform_info", "EXTENSIONS_WITH_VERSION", "3.0"),
])
def test_queries_of_later_opencl_versions_are_invalid_values_naming_the_version(
        info_class, name, version):
    # ppcl reports OpenCL 1.2, so it answers a 3.0 query as a 1.2 driver does (PyOpenCL then
    # raises LogicError); the names were missing, an AttributeError on cl.device_info
    dev = cl.get_platforms()[0].get_devices()[0]
    assert dev.version.startswith("OpenCL 1.2 ") and dev.platform.version == dev.version
    obj = dev if info_class == "device_info" else dev.platform
    routine = "clGetDeviceInfo" if info_class == "device_info" else "clGetPlatformInfo"
    message = (f"{routine} failed: CL_INVALID_VALUE - {info_class}.{name} is a query of "
               f"OpenCL {version}; ppcl implements and reports OpenCL 1.2")
    with pytest.raises(cl.LogicError, match=message):
        obj.get_info(getattr(getattr(cl, info_class), name))
    if info_class == "device_info":
        with pytest.raises(cl.LogicError, match=message):
            getattr(dev, name.lower())
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE - unknown"):
        obj.get_info(0x7777)


def test_enums_have_to_string():
    assert cl.mem_flags.to_string(cl.mem_flags.READ_ONLY) == "READ_ONLY"
    assert cl.device_type.to_string(cl.device_type.CPU) == "CPU"
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    assert cl.mem_flags.to_string(flags) == "READ_ONLY | COPY_HOST_PTR"
    assert cl.command_execution_status.to_string(0) == "COMPLETE"
    assert cl.status_code.INVALID_VALUE == -30
    with pytest.raises(ValueError):
        cl.command_type.to_string(12345)
    assert cl.command_type.to_string(12345, "<unknown {}>") == "<unknown 12345>"


def test_every_public_info_name_is_a_constant_the_object_answers():
    # dump-properties style: every public name of an info class but to_string is a constant
    # (a 'names' helper there printed as a failed query)
    device = cl.get_platforms()[0].get_devices()[0]
    for info_class, obj in [(cl.platform_info, device.platform), (cl.device_info, device)]:
        public = [n for n in dir(info_class) if not n.startswith("_") and n != "to_string"]
        assert public and all(isinstance(getattr(info_class, n), int) for n in public)
        assert obj.get_info(info_class.NAME) == obj.name


def test_error_classes_follow_pyopencl():
    logic = make_error("clX", "INVALID_KERNEL_ARGS", "detail")
    assert isinstance(logic, cl.LogicError) and isinstance(logic, cl.Error)
    assert logic.code == -52 and "CL_INVALID_KERNEL_ARGS" in str(logic)
    # the record as PyOpenCL's: e.what is e.args[0], with methods (they were attributes,
    # and args[0] a string, so e.args[0].code() raised AttributeError)
    assert logic.what is logic.args[0] and logic.what.routine() == "clX"
    assert logic.args[0].code() == -52 and logic.args[0].what() == "detail"
    assert not logic.args[0].is_out_of_memory() and not logic.is_out_of_memory()
    assert str(logic) == "clX failed: CL_INVALID_KERNEL_ARGS - detail"
    assert repr(logic) == "LogicError('clX failed: CL_INVALID_KERNEL_ARGS - detail')"
    runtime = make_error("clBuildProgram", -11)
    assert isinstance(runtime, cl.RuntimeError) and isinstance(runtime, RuntimeError)
    memory = make_error("clCreateBuffer", "MEM_OBJECT_ALLOCATION_FAILURE")
    assert isinstance(memory, cl.MemoryError) and isinstance(memory, MemoryError)
    assert memory.is_out_of_memory() and memory.args[0].is_out_of_memory()


def test_context_and_queue_info():
    dev = cl.get_platforms()[0].get_devices()[0]
    ctx = cl.Context([dev])
    assert ctx.devices == [dev]
    assert ctx.get_info(cl.context_info.NUM_DEVICES) == 1
    assert cl.Context().devices == [dev]
    assert cl.Context(dev_type=cl.device_type.ALL).devices == [dev]
    queue = cl.CommandQueue(ctx)
    assert queue.device is dev and queue.context is ctx
    assert queue.get_info(cl.command_queue_info.PROPERTIES) == 0
    with cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE) as q:
        assert q.properties == cl.command_queue_properties.PROFILING_ENABLE
    with pytest.raises(cl.LogicError):
        cl.CommandQueue(ctx, properties=1 << 10)


def test_persistent_unique_id_is_the_deprecated_model_identifier():
    dev = cl.get_platforms()[0].get_devices()[0]
    with pytest.deprecated_call():
        old = dev.persistent_unique_id
    assert old == dev.hashable_model_and_version_identifier


def test_platform_context_and_queue_report_their_opencl_version():
    """PyOpenCL's ``_get_cl_version``, which code written for it compares with (1, 2) before
    using an OpenCL 1.2 command and with (2, 0) before using SVM."""
    platform = cl.get_platforms()[0]
    ctx = cl.Context(platform.get_devices())
    queue = cl.CommandQueue(ctx)
    assert platform._get_cl_version() == (1, 2)
    assert ctx._get_cl_version() == queue._get_cl_version() == (1, 2)
    assert cl.get_cl_header_version() >= queue._get_cl_version()


@pytest.mark.parametrize("variable", ["PPCL_CTX", "PYOPENCL_CTX"])
def test_create_some_context_honours_environment(monkeypatch, variable):
    monkeypatch.delenv("PPCL_CTX", raising=False)
    monkeypatch.delenv("PYOPENCL_CTX", raising=False)
    monkeypatch.setenv(variable, "0:0")
    ctx = cl.create_some_context()
    assert ctx.devices == cl.get_platforms()[0].get_devices()
    monkeypatch.setenv(variable, "ppcl")  # the first platform whose name has it
    assert cl.create_some_context().devices == cl.get_platforms()[0].get_devices()[:1]
    monkeypatch.setenv(variable, "7")
    with pytest.raises(cl.LogicError):
        cl.create_some_context()


def test_create_some_context_never_prompts_without_terminal(monkeypatch):
    monkeypatch.delenv("PPCL_CTX", raising=False)
    monkeypatch.delenv("PYOPENCL_CTX", raising=False)

    def no_input(prompt: str = "") -> str:
        raise AssertionError("prompted")

    monkeypatch.setattr("builtins.input", no_input)
    assert cl.create_some_context(interactive=False).devices
    assert cl.create_some_context().devices
    # interactive, it asks only where there is a choice: a single device, nothing to ask
    questions: list[str] = []

    def first_choice(prompt: str = "") -> str:
        questions.append(prompt)
        return ""

    monkeypatch.setattr("builtins.input", first_choice)
    platforms = cl.get_platforms()
    assert cl.create_some_context(interactive=True).devices == platforms[0].get_devices()[:1]
    choices = (len(platforms) > 1) + (len(platforms[0].get_devices()) > 1)
    assert len(questions) == choices


def test_platform_context_and_queue_arguments_of_the_wrong_type():
    platform = cl.get_platforms()[0]
    with pytest.raises(cl.LogicError, match="CL_INVALID_DEVICE_TYPE"):
        platform.get_devices(device_type="gpu")  # was TypeError from '&'
    device = platform.get_devices()[0]
    with pytest.raises(cl.LogicError, match=r"CL_INVALID_VALUE.*Context\(\[device\]\)"):
        cl.Context(device)
    ctx = cl.Context([device])
    with pytest.raises(cl.LogicError, match="CL_INVALID_VALUE"):
        cl.CommandQueue(ctx, properties=1.0)


def test_context_properties_are_key_value_pairs_of_known_keys():
    platform = cl.get_platforms()[0]
    for properties in ([(5, 6)], [5]):  # the first was ignored, the second a TypeError
        with pytest.raises(cl.LogicError, match="CL_INVALID_PROPERTY"):
            cl.Context(properties=properties)
    ctx = cl.Context(properties=[(cl.context_properties.PLATFORM, platform)])
    assert ctx.devices
