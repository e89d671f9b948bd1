"""The PyOpenCL names ppcl deliberately leaves out, and the error that names them.

ppcl implements OpenCL 1.2, so the OpenCL 2.x objects PyOpenCL wraps (shared virtual memory,
pipes, device partitioning) and OpenGL sharing do not exist. A program that reaches for one
gets an ``AttributeError`` saying what is missing and why, instead of a bare "has no
attribute"; it stays an ``AttributeError`` so that ``hasattr(cl, "SVM")`` still answers False
for programs that test for a feature before using it.
"""

from __future__ import annotations

_SVM = ("shared virtual memory is OpenCL 2.0 and ppcl implements OpenCL 1.2: use Buffer "
        "with enqueue_copy or enqueue_map_buffer")
_PIPE = "pipes are OpenCL 2.0 and ppcl implements OpenCL 1.2"
_GL = "OpenGL sharing (cl_khr_gl_sharing) is not supported by ppcl's devices"
_PARTITION = ("device partitioning (clCreateSubDevices) is not supported: ppcl's devices "
              "report partition_max_sub_devices = 0; set the thread count with PPCL_THREADS")

_MODULE: dict[str, str] = {
    **dict.fromkeys(("SVM", "SVMAllocation", "SVMMap", "SVMPointer", "svm_empty",
                     "svm_empty_like", "csvm_empty", "csvm_empty_like", "fsvm_empty",
                     "fsvm_empty_like", "enqueue_svm_memfill", "enqueue_svm_migrate_mem",
                     "svm_mem_flags", "device_svm_capabilities"), _SVM),
    **dict.fromkeys(("Pipe", "pipe_info", "pipe_properties"), _PIPE),
    **dict.fromkeys(("GLBuffer", "GLRenderBuffer", "GLTexture", "enqueue_acquire_gl_objects",
                     "enqueue_release_gl_objects", "get_gl_context_info_khr",
                     "gl_context_info", "gl_object_type", "gl_texture_info"), _GL),
    "device_partition_property": _PARTITION,
    "device_affinity_domain": _PARTITION,
}

UNSUPPORTED: dict[str, dict[str, str]] = {
    "ppcl": _MODULE,
    "ppcl.tools": dict.fromkeys(("SVMAllocator", "SVMPool", "PooledSVM"), _SVM),
    "Device": {"create_sub_devices": _PARTITION},
}


def unsupported(owner: str, name: str) -> AttributeError:
    """The error for ``owner.name``: why ppcl leaves it out when it does so on purpose, else
    the plain message Python gives."""
    reason = UNSUPPORTED.get(owner, {}).get(name)
    if reason is None:
        kind = "module " if owner.startswith("ppcl") else ""
        return AttributeError(f"{kind}'{owner}' has no attribute '{name}'")
    return AttributeError(f"{owner}.{name} (PyOpenCL) is not supported by ppcl: {reason}")
