"""OpenCL enumerations as PyOpenCL spells them: classes of int constants with ``to_string``.

``cl.mem_flags.READ_ONLY`` is the int from cl.h; ``cl.mem_flags.to_string(4)`` is ``"READ_ONLY"``.
Bit-field classes also name combinations (``"READ_ONLY | COPY_HOST_PTR"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ppcl.compiler.frontend import image_formats
from ppcl.runtime.errors import ERROR_CODES

_names_cache: dict[type, dict[str, int]] = {}


def constant_names(cls: type) -> dict[str, int]:
    """The constants of an enumeration class by name (its upper-case int attributes).

    A function, not a method: programs list a class's constants with ``dir(cl.device_info)``
    (PyOpenCL's dump-properties example) and must find only them and ``to_string`` there.
    """
    cached = _names_cache.get(cls)
    if cached is not None:
        return cached
    found: dict[str, int] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if name.isupper() and isinstance(value, int) and not isinstance(value, bool):
                found[name] = value
    _names_cache[cls] = found
    return found


class _InfoValue:
    """``obj.<name>``: what ``obj.get_info(code)`` gives. A non-data descriptor, so that an
    attribute an object sets itself (``queue.device``) stays its own."""

    __slots__ = ("code",)

    def __init__(self, code: int) -> None:
        self.code = code

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.get_info(self.code)


_C = TypeVar("_C", bound=type)


def info_attributes(info: type, *, own: tuple[str, ...] = ()) -> Callable[[_C], _C]:
    """A class decorator giving the class's objects every ``info`` value as an attribute
    (``queue.reference_count``, ``buf.associated_memobject``), as PyOpenCL's objects have
    them. The names the class defines and ``own`` (the attributes its objects set
    themselves) are left alone. Descriptors, not ``__getattr__``: CPython 3.11 specializes no
    attribute read of a class with ``__getattr__``, which cost an empty launch 0.7 us (4.4 ->
    5.1 us); a name missing from ``own`` makes reads of that attribute slower (a test checks
    the lists)."""

    def decorate(cls: _C) -> _C:
        for name, code in constant_names(info).items():
            attribute = name.lower()
            if attribute in own or any(attribute in vars(k) for k in cls.__mro__):
                continue
            setattr(cls, attribute, _InfoValue(code))
        return cls

    return decorate


def info_descriptors(cls: type) -> set[str]:
    """The attributes :func:`info_attributes` gave ``cls`` (for tests)."""
    return {name for k in cls.__mro__ for name, value in vars(k).items()
            if isinstance(value, _InfoValue)}


class _ConstantClass:
    """Base of the enumeration classes; the int attributes in upper case are the values."""

    _bitfield = False

    @classmethod
    def to_string(cls, value: int, default_format: str | None = None) -> str:
        names = constant_names(cls)
        for name, known in names.items():
            if known == value:
                return name
        if cls._bitfield and value > 0:
            parts = [name for name, bit in names.items() if bit and value & bit == bit
                     and bit & (bit - 1) == 0]
            covered = 0
            for name in parts:
                covered |= names[name]
            if covered == value:
                return " | ".join(parts)
        if default_format is not None:
            return default_format.format(value)
        raise ValueError(f"a name for value {value} was not found in {cls.__name__}")


class status_code(_ConstantClass):
    pass


for _name, _code in ERROR_CODES.items():
    setattr(status_code, _name, _code)


class platform_info(_ConstantClass):
    PROFILE = 0x0900
    VERSION = 0x0901
    NAME = 0x0902
    VENDOR = 0x0903
    EXTENSIONS = 0x0904
    # queries of later OpenCL versions (see ``LATER_QUERIES``)
    HOST_TIMER_RESOLUTION = 0x0905
    NUMERIC_VERSION = 0x0906
    EXTENSIONS_WITH_VERSION = 0x0907


class device_type(_ConstantClass):
    _bitfield = True
    DEFAULT = 1 << 0
    CPU = 1 << 1
    GPU = 1 << 2
    ACCELERATOR = 1 << 3
    CUSTOM = 1 << 4
    ALL = 0xFFFFFFFF


class device_info(_ConstantClass):
    TYPE = 0x1000
    VENDOR_ID = 0x1001
    MAX_COMPUTE_UNITS = 0x1002
    MAX_WORK_ITEM_DIMENSIONS = 0x1003
    MAX_WORK_GROUP_SIZE = 0x1004
    MAX_WORK_ITEM_SIZES = 0x1005
    PREFERRED_VECTOR_WIDTH_CHAR = 0x1006
    PREFERRED_VECTOR_WIDTH_SHORT = 0x1007
    PREFERRED_VECTOR_WIDTH_INT = 0x1008
    PREFERRED_VECTOR_WIDTH_LONG = 0x1009
    PREFERRED_VECTOR_WIDTH_FLOAT = 0x100A
    PREFERRED_VECTOR_WIDTH_DOUBLE = 0x100B
    MAX_CLOCK_FREQUENCY = 0x100C
    ADDRESS_BITS = 0x100D
    MAX_READ_IMAGE_ARGS = 0x100E
    MAX_WRITE_IMAGE_ARGS = 0x100F
    MAX_MEM_ALLOC_SIZE = 0x1010
    IMAGE2D_MAX_WIDTH = 0x1011
    IMAGE2D_MAX_HEIGHT = 0x1012
    IMAGE3D_MAX_WIDTH = 0x1013
    IMAGE3D_MAX_HEIGHT = 0x1014
    IMAGE3D_MAX_DEPTH = 0x1015
    IMAGE_SUPPORT = 0x1016
    MAX_PARAMETER_SIZE = 0x1017
    MAX_SAMPLERS = 0x1018
    MEM_BASE_ADDR_ALIGN = 0x1019
    MIN_DATA_TYPE_ALIGN_SIZE = 0x101A
    SINGLE_FP_CONFIG = 0x101B
    GLOBAL_MEM_CACHE_TYPE = 0x101C
    GLOBAL_MEM_CACHELINE_SIZE = 0x101D
    GLOBAL_MEM_CACHE_SIZE = 0x101E
    GLOBAL_MEM_SIZE = 0x101F
    MAX_CONSTANT_BUFFER_SIZE = 0x1020
    MAX_CONSTANT_ARGS = 0x1021
    LOCAL_MEM_TYPE = 0x1022
    LOCAL_MEM_SIZE = 0x1023
    ERROR_CORRECTION_SUPPORT = 0x1024
    PROFILING_TIMER_RESOLUTION = 0x1025
    ENDIAN_LITTLE = 0x1026
    AVAILABLE = 0x1027
    COMPILER_AVAILABLE = 0x1028
    EXECUTION_CAPABILITIES = 0x1029
    QUEUE_PROPERTIES = 0x102A
    QUEUE_ON_HOST_PROPERTIES = 0x102A  # OpenCL 2.0's name of QUEUE_PROPERTIES
    NAME = 0x102B
    VENDOR = 0x102C
    DRIVER_VERSION = 0x102D
    PROFILE = 0x102E
    VERSION = 0x102F
    EXTENSIONS = 0x1030
    PLATFORM = 0x1031
    DOUBLE_FP_CONFIG = 0x1032
    PREFERRED_VECTOR_WIDTH_HALF = 0x1034
    HOST_UNIFIED_MEMORY = 0x1035
    NATIVE_VECTOR_WIDTH_CHAR = 0x1036
    NATIVE_VECTOR_WIDTH_SHORT = 0x1037
    NATIVE_VECTOR_WIDTH_INT = 0x1038
    NATIVE_VECTOR_WIDTH_LONG = 0x1039
    NATIVE_VECTOR_WIDTH_FLOAT = 0x103A
    NATIVE_VECTOR_WIDTH_DOUBLE = 0x103B
    NATIVE_VECTOR_WIDTH_HALF = 0x103C
    OPENCL_C_VERSION = 0x103D
    LINKER_AVAILABLE = 0x103E
    BUILT_IN_KERNELS = 0x103F
    IMAGE_MAX_BUFFER_SIZE = 0x1040
    IMAGE_MAX_ARRAY_SIZE = 0x1041
    PARENT_DEVICE = 0x1042
    PARTITION_MAX_SUB_DEVICES = 0x1043
    PARTITION_PROPERTIES = 0x1044
    PARTITION_AFFINITY_DOMAIN = 0x1045
    PARTITION_TYPE = 0x1046
    REFERENCE_COUNT = 0x1047
    PREFERRED_INTEROP_USER_SYNC = 0x1048
    PRINTF_BUFFER_SIZE = 0x1049
    # queries of later OpenCL versions (see ``LATER_QUERIES``)
    MAX_READ_WRITE_IMAGE_ARGS = 0x104C
    MAX_GLOBAL_VARIABLE_SIZE = 0x104D
    QUEUE_ON_DEVICE_PROPERTIES = 0x104E
    QUEUE_ON_DEVICE_PREFERRED_SIZE = 0x104F
    QUEUE_ON_DEVICE_MAX_SIZE = 0x1050
    MAX_ON_DEVICE_QUEUES = 0x1051
    MAX_ON_DEVICE_EVENTS = 0x1052
    SVM_CAPABILITIES = 0x1053
    GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE = 0x1054
    MAX_PIPE_ARGS = 0x1055
    PIPE_MAX_ACTIVE_RESERVATIONS = 0x1056
    PIPE_MAX_PACKET_SIZE = 0x1057
    PREFERRED_PLATFORM_ATOMIC_ALIGNMENT = 0x1058
    PREFERRED_GLOBAL_ATOMIC_ALIGNMENT = 0x1059
    PREFERRED_LOCAL_ATOMIC_ALIGNMENT = 0x105A
    IL_VERSION = 0x105B
    MAX_NUM_SUB_GROUPS = 0x105C
    SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS = 0x105D
    NUMERIC_VERSION = 0x105E
    EXTENSIONS_WITH_VERSION = 0x1060
    ILS_WITH_VERSION = 0x1061
    BUILT_IN_KERNELS_WITH_VERSION = 0x1062
    ATOMIC_MEMORY_CAPABILITIES = 0x1063
    ATOMIC_FENCE_CAPABILITIES = 0x1064
    NON_UNIFORM_WORK_GROUP_SUPPORT = 0x1065
    OPENCL_C_ALL_VERSIONS = 0x1066
    PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x1067
    WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT = 0x1068
    GENERIC_ADDRESS_SPACE_SUPPORT = 0x1069
    OPENCL_C_FEATURES = 0x106F
    DEVICE_ENQUEUE_CAPABILITIES = 0x1070
    PIPE_SUPPORT = 0x1071


# The info queries OpenCL added after 1.2, with the version that added them. ppcl reports
# OpenCL 1.2, so it answers them as a 1.2 implementation must: CL_INVALID_VALUE. PyOpenCL
# has the names, and programs written for 3.0 query them.
LATER_QUERIES: dict[type, dict[int, str]] = {
    platform_info: {
        platform_info.HOST_TIMER_RESOLUTION: "2.1",
        platform_info.NUMERIC_VERSION: "3.0",
        platform_info.EXTENSIONS_WITH_VERSION: "3.0",
    },
    device_info: {
        **{code: "2.0" for code in range(device_info.MAX_READ_WRITE_IMAGE_ARGS,
                                         device_info.PREFERRED_LOCAL_ATOMIC_ALIGNMENT + 1)},
        **{code: "2.1" for code in range(device_info.IL_VERSION,
                                         device_info.SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS + 1)},
        **{code: "3.0" for code in range(device_info.NUMERIC_VERSION,
                                         device_info.PIPE_SUPPORT + 1)
           if code in constant_names(device_info).values()},
    },
}


class device_fp_config(_ConstantClass):
    _bitfield = True
    DENORM = 1 << 0
    INF_NAN = 1 << 1
    ROUND_TO_NEAREST = 1 << 2
    ROUND_TO_ZERO = 1 << 3
    ROUND_TO_INF = 1 << 4
    FMA = 1 << 5
    SOFT_FLOAT = 1 << 6
    CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7


class device_mem_cache_type(_ConstantClass):
    NONE = 0
    READ_ONLY_CACHE = 1
    READ_WRITE_CACHE = 2


class device_local_mem_type(_ConstantClass):
    LOCAL = 1
    GLOBAL = 2


class device_exec_capabilities(_ConstantClass):
    _bitfield = True
    KERNEL = 1 << 0
    NATIVE_KERNEL = 1 << 1


class command_queue_properties(_ConstantClass):
    _bitfield = True
    OUT_OF_ORDER_EXEC_MODE_ENABLE = 1 << 0
    PROFILING_ENABLE = 1 << 1


class context_info(_ConstantClass):
    REFERENCE_COUNT = 0x1080
    DEVICES = 0x1081
    PROPERTIES = 0x1082
    NUM_DEVICES = 0x1083


class context_properties(_ConstantClass):
    PLATFORM = 0x1084


class command_queue_info(_ConstantClass):
    CONTEXT = 0x1090
    DEVICE = 0x1091
    REFERENCE_COUNT = 0x1092
    PROPERTIES = 0x1093


class mem_flags(_ConstantClass):
    _bitfield = True
    READ_WRITE = 1 << 0
    WRITE_ONLY = 1 << 1
    READ_ONLY = 1 << 2
    USE_HOST_PTR = 1 << 3
    ALLOC_HOST_PTR = 1 << 4
    COPY_HOST_PTR = 1 << 5
    HOST_WRITE_ONLY = 1 << 7
    HOST_READ_ONLY = 1 << 8
    HOST_NO_ACCESS = 1 << 9


class mem_object_type(_ConstantClass):
    BUFFER = 0x10F0
    IMAGE2D = 0x10F1
    IMAGE3D = 0x10F2
    IMAGE2D_ARRAY = 0x10F3
    IMAGE1D = 0x10F4
    IMAGE1D_ARRAY = 0x10F5
    IMAGE1D_BUFFER = 0x10F6


class channel_order(_ConstantClass):
    pass


class channel_type(_ConstantClass):
    pass


# the codes kernels see through get_image_channel_order/_data_type: one table for both sides
for _name, _code in image_formats.CHANNEL_ORDERS.items():
    setattr(channel_order, _name, _code)
for _name, _code in image_formats.CHANNEL_TYPES.items():
    setattr(channel_type, _name, _code)


class image_info(_ConstantClass):
    FORMAT = 0x1110
    ELEMENT_SIZE = 0x1111
    ROW_PITCH = 0x1112
    SLICE_PITCH = 0x1113
    WIDTH = 0x1114
    HEIGHT = 0x1115
    DEPTH = 0x1116
    ARRAY_SIZE = 0x1117
    BUFFER = 0x1118
    NUM_MIP_LEVELS = 0x1119
    NUM_SAMPLES = 0x111A


class addressing_mode(_ConstantClass):
    NONE = 0x1130
    CLAMP_TO_EDGE = 0x1131
    CLAMP = 0x1132
    REPEAT = 0x1133
    MIRRORED_REPEAT = 0x1134


class filter_mode(_ConstantClass):
    NEAREST = 0x1140
    LINEAR = 0x1141


class sampler_info(_ConstantClass):
    REFERENCE_COUNT = 0x1150
    CONTEXT = 0x1151
    NORMALIZED_COORDS = 0x1152
    ADDRESSING_MODE = 0x1153
    FILTER_MODE = 0x1154


class mem_info(_ConstantClass):
    TYPE = 0x1100
    FLAGS = 0x1101
    SIZE = 0x1102
    HOST_PTR = 0x1103
    MAP_COUNT = 0x1104
    REFERENCE_COUNT = 0x1105
    CONTEXT = 0x1106
    ASSOCIATED_MEMOBJECT = 0x1107
    OFFSET = 0x1108


class map_flags(_ConstantClass):
    _bitfield = True
    READ = 1 << 0
    WRITE = 1 << 1
    WRITE_INVALIDATE_REGION = 1 << 2


class mem_migration_flags(_ConstantClass):
    _bitfield = True
    HOST = 1 << 0
    CONTENT_UNDEFINED = 1 << 1


class program_info(_ConstantClass):
    REFERENCE_COUNT = 0x1160
    CONTEXT = 0x1161
    NUM_DEVICES = 0x1162
    DEVICES = 0x1163
    SOURCE = 0x1164
    BINARY_SIZES = 0x1165
    BINARIES = 0x1166
    NUM_KERNELS = 0x1167
    KERNEL_NAMES = 0x1168


class program_build_info(_ConstantClass):
    STATUS = 0x1181
    OPTIONS = 0x1182
    LOG = 0x1183
    BINARY_TYPE = 0x1184


class program_binary_type(_ConstantClass):
    NONE = 0x0
    COMPILED_OBJECT = 0x1
    LIBRARY = 0x2
    EXECUTABLE = 0x4


class build_status(_ConstantClass):
    SUCCESS = 0
    NONE = -1
    ERROR = -2
    IN_PROGRESS = -3


class kernel_info(_ConstantClass):
    FUNCTION_NAME = 0x1190
    NUM_ARGS = 0x1191
    REFERENCE_COUNT = 0x1192
    CONTEXT = 0x1193
    PROGRAM = 0x1194
    ATTRIBUTES = 0x1195


class kernel_arg_info(_ConstantClass):
    ADDRESS_QUALIFIER = 0x1196
    ACCESS_QUALIFIER = 0x1197
    TYPE_NAME = 0x1198
    TYPE_QUALIFIER = 0x1199
    NAME = 0x119A


class kernel_arg_address_qualifier(_ConstantClass):
    GLOBAL = 0x119B
    LOCAL = 0x119C
    CONSTANT = 0x119D
    PRIVATE = 0x119E


class kernel_arg_access_qualifier(_ConstantClass):
    READ_ONLY = 0x11A0
    WRITE_ONLY = 0x11A1
    READ_WRITE = 0x11A2
    NONE = 0x11A3


class kernel_arg_type_qualifier(_ConstantClass):
    _bitfield = True
    NONE = 0
    CONST = 1 << 0
    RESTRICT = 1 << 1
    VOLATILE = 1 << 2


class kernel_work_group_info(_ConstantClass):
    WORK_GROUP_SIZE = 0x11B0
    COMPILE_WORK_GROUP_SIZE = 0x11B1
    LOCAL_MEM_SIZE = 0x11B2
    PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x11B3
    PRIVATE_MEM_SIZE = 0x11B4
    GLOBAL_WORK_SIZE = 0x11B5


class event_info(_ConstantClass):
    COMMAND_QUEUE = 0x11D0
    COMMAND_TYPE = 0x11D1
    REFERENCE_COUNT = 0x11D2
    COMMAND_EXECUTION_STATUS = 0x11D3
    CONTEXT = 0x11D4


class command_type(_ConstantClass):
    NDRANGE_KERNEL = 0x11F0
    TASK = 0x11F1
    NATIVE_KERNEL = 0x11F2
    READ_BUFFER = 0x11F3
    WRITE_BUFFER = 0x11F4
    COPY_BUFFER = 0x11F5
    READ_IMAGE = 0x11F6
    WRITE_IMAGE = 0x11F7
    COPY_IMAGE = 0x11F8
    COPY_IMAGE_TO_BUFFER = 0x11F9
    COPY_BUFFER_TO_IMAGE = 0x11FA
    MAP_BUFFER = 0x11FB
    MAP_IMAGE = 0x11FC
    UNMAP_MEM_OBJECT = 0x11FD
    MARKER = 0x11FE
    ACQUIRE_GL_OBJECTS = 0x11FF
    RELEASE_GL_OBJECTS = 0x1200
    READ_BUFFER_RECT = 0x1201
    WRITE_BUFFER_RECT = 0x1202
    COPY_BUFFER_RECT = 0x1203
    USER = 0x1204
    BARRIER = 0x1205
    MIGRATE_MEM_OBJECTS = 0x1206
    FILL_BUFFER = 0x1207
    FILL_IMAGE = 0x1208


class command_execution_status(_ConstantClass):
    COMPLETE = 0x0
    RUNNING = 0x1
    SUBMITTED = 0x2
    QUEUED = 0x3


class profiling_info(_ConstantClass):
    QUEUED = 0x1280
    SUBMIT = 0x1281
    START = 0x1282
    END = 0x1283
    COMPLETE = 0x1284  # OpenCL 2.0; PyOpenCL offers it as event.profile.complete
