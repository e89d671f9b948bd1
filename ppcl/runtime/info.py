"""``ppcl info``: platforms and devices with their info values, laid out like clinfo."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ppcl.runtime.constants import (
    command_queue_properties,
    constant_names,
    device_fp_config,
    device_info,
    device_local_mem_type,
    device_mem_cache_type,
    device_type,
    platform_info,
)
from ppcl.runtime.platform import Device, get_platforms

_LABEL_WIDTH = 44

# (label, device_info name, how to show the value)
_DEVICE_ROWS: tuple[tuple[str, str, str], ...] = (
    ("Device Name", "NAME", "text"),
    ("Device Vendor", "VENDOR", "text"),
    ("Device Version", "VERSION", "text"),
    ("Driver Version", "DRIVER_VERSION", "text"),
    ("Device OpenCL C Version", "OPENCL_C_VERSION", "text"),
    ("Device Type", "TYPE", "device_type"),
    ("Device Profile", "PROFILE", "text"),
    ("Device Available", "AVAILABLE", "yes_no"),
    ("Compiler Available", "COMPILER_AVAILABLE", "yes_no"),
    ("Linker Available", "LINKER_AVAILABLE", "yes_no"),
    ("Max compute units", "MAX_COMPUTE_UNITS", "int"),
    ("Max clock frequency", "MAX_CLOCK_FREQUENCY", "mhz"),
    ("Max work item dimensions", "MAX_WORK_ITEM_DIMENSIONS", "int"),
    ("Max work item sizes", "MAX_WORK_ITEM_SIZES", "list"),
    ("Max work group size", "MAX_WORK_GROUP_SIZE", "int"),
    ("Preferred / native vector sizes", "", "vectors"),
    ("Single-precision Floating-point support", "SINGLE_FP_CONFIG", "fp"),
    ("Double-precision Floating-point support", "DOUBLE_FP_CONFIG", "fp"),
    ("Address bits", "ADDRESS_BITS", "int"),
    ("Little-Endian", "ENDIAN_LITTLE", "yes_no"),
    ("Global memory size", "GLOBAL_MEM_SIZE", "bytes"),
    ("Error Correction support", "ERROR_CORRECTION_SUPPORT", "yes_no"),
    ("Max memory allocation", "MAX_MEM_ALLOC_SIZE", "bytes"),
    ("Unified memory for Host and Device", "HOST_UNIFIED_MEMORY", "yes_no"),
    ("Minimum alignment for any data type", "MIN_DATA_TYPE_ALIGN_SIZE", "bytes"),
    ("Alignment of base address", "MEM_BASE_ADDR_ALIGN", "bits"),
    ("Global Memory cache type", "GLOBAL_MEM_CACHE_TYPE", "cache"),
    ("Global Memory cache size", "GLOBAL_MEM_CACHE_SIZE", "bytes"),
    ("Global Memory cache line size", "GLOBAL_MEM_CACHELINE_SIZE", "bytes"),
    ("Image support", "IMAGE_SUPPORT", "yes_no"),
    ("Local memory type", "LOCAL_MEM_TYPE", "local"),
    ("Local memory size", "LOCAL_MEM_SIZE", "bytes"),
    ("Max number of constant args", "MAX_CONSTANT_ARGS", "int"),
    ("Max constant buffer size", "MAX_CONSTANT_BUFFER_SIZE", "bytes"),
    ("Max size of kernel argument", "MAX_PARAMETER_SIZE", "bytes"),
    ("Queue properties", "QUEUE_PROPERTIES", "queue"),
    ("Profiling timer resolution", "PROFILING_TIMER_RESOLUTION", "ns"),
    ("Device Extensions", "EXTENSIONS", "text"),
)


def _human_bytes(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{value} ({size:.4g}{unit})" if unit != "B" else f"{value}"
        size /= 1024
    return str(value)


def _show(device: Device, name: str, how: str) -> str:
    value: Any = device.get_info(getattr(device_info, name)) if name else None
    if how == "text":
        return str(value)
    if how == "int":
        return str(int(value))
    if how == "yes_no":
        return "Yes" if value else "No"
    if how == "mhz":
        return f"{value}MHz"
    if how == "list":
        return "x".join(str(v) for v in value)
    if how == "bytes":
        return _human_bytes(int(value))
    if how == "bits":
        return f"{value} bits ({int(value) // 8} bytes)"
    if how == "ns":
        return f"{value}ns"
    if how == "device_type":
        return device_type.to_string(int(value))
    if how == "fp":
        return ", ".join(n for n, bit in constant_names(device_fp_config).items() if value & bit) or "(n/a)"
    if how == "cache":
        return device_mem_cache_type.to_string(int(value))
    if how == "local":
        return device_local_mem_type.to_string(int(value))
    if how == "queue":
        return command_queue_properties.to_string(int(value))
    if how == "vectors":
        parts = []
        for kind in ("CHAR", "SHORT", "INT", "LONG", "HALF", "FLOAT", "DOUBLE"):
            preferred = device.get_info(getattr(device_info, f"PREFERRED_VECTOR_WIDTH_{kind}"))
            native = device.get_info(getattr(device_info, f"NATIVE_VECTOR_WIDTH_{kind}"))
            parts.append(f"{kind.lower()} {preferred} / {native}")
        return ", ".join(parts)
    raise ValueError(how)


def _row(out: TextIO, indent: str, label: str, value: str) -> None:
    out.write(f"{indent}{label:<{_LABEL_WIDTH - len(indent)}}{value}\n")


def print_info(out: TextIO | None = None) -> None:
    """Print every platform and device with their info values."""
    out = out or sys.stdout
    platforms = get_platforms()
    _row(out, "", "Number of platforms", str(len(platforms)))
    for platform in platforms:
        for label, code in (("Platform Name", platform_info.NAME),
                            ("Platform Vendor", platform_info.VENDOR),
                            ("Platform Version", platform_info.VERSION),
                            ("Platform Profile", platform_info.PROFILE),
                            ("Platform Extensions", platform_info.EXTENSIONS)):
            _row(out, "  ", label, str(platform.get_info(code)))
        out.write("\n")
        devices = platform.get_devices()
        _row(out, "  ", "Number of devices", str(len(devices)))
        for device in devices:
            for label, name, how in _DEVICE_ROWS:
                _row(out, "  ", label, _show(device, name, how))
            if device.backend.info.kind == "cpu":  # a GPU's parallelism is its compute units
                _row(out, "  ", "Threads (PPCL_THREADS)", str(device.backend.info.threads))
            out.write("\n")
