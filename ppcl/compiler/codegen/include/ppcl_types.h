/* Types shared by every C translation unit the CPU backend generates.

   OpenCL vector types are GCC vector extensions named ppcl_<elem><width>. A 3-component vector
   has the size and alignment of the 4-component one (OpenCL C 1.2 section 6.1.5); its fourth lane
   is padding. half is a storage-only type in OpenCL C 1.2: half data is handled as its 16-bit
   pattern (unsigned short), so there are no half vector types here.

   The definitions of the builtins a kernel calls are pasted after this header, only those it
   uses, so this file stays small: it is parsed for every kernel build. */
#ifndef PPCL_TYPES_H
#define PPCL_TYPES_H

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

typedef signed char ppcl_char2 __attribute__((vector_size(2)));
typedef signed char ppcl_char3 __attribute__((vector_size(4)));
typedef signed char ppcl_char4 __attribute__((vector_size(4)));
typedef signed char ppcl_char8 __attribute__((vector_size(8)));
typedef signed char ppcl_char16 __attribute__((vector_size(16)));

typedef unsigned char ppcl_uchar2 __attribute__((vector_size(2)));
typedef unsigned char ppcl_uchar3 __attribute__((vector_size(4)));
typedef unsigned char ppcl_uchar4 __attribute__((vector_size(4)));
typedef unsigned char ppcl_uchar8 __attribute__((vector_size(8)));
typedef unsigned char ppcl_uchar16 __attribute__((vector_size(16)));

typedef short ppcl_short2 __attribute__((vector_size(4)));
typedef short ppcl_short3 __attribute__((vector_size(8)));
typedef short ppcl_short4 __attribute__((vector_size(8)));
typedef short ppcl_short8 __attribute__((vector_size(16)));
typedef short ppcl_short16 __attribute__((vector_size(32)));

typedef unsigned short ppcl_ushort2 __attribute__((vector_size(4)));
typedef unsigned short ppcl_ushort3 __attribute__((vector_size(8)));
typedef unsigned short ppcl_ushort4 __attribute__((vector_size(8)));
typedef unsigned short ppcl_ushort8 __attribute__((vector_size(16)));
typedef unsigned short ppcl_ushort16 __attribute__((vector_size(32)));

typedef int ppcl_int2 __attribute__((vector_size(8)));
typedef int ppcl_int3 __attribute__((vector_size(16)));
typedef int ppcl_int4 __attribute__((vector_size(16)));
typedef int ppcl_int8 __attribute__((vector_size(32)));
typedef int ppcl_int16 __attribute__((vector_size(64)));

typedef unsigned int ppcl_uint2 __attribute__((vector_size(8)));
typedef unsigned int ppcl_uint3 __attribute__((vector_size(16)));
typedef unsigned int ppcl_uint4 __attribute__((vector_size(16)));
typedef unsigned int ppcl_uint8 __attribute__((vector_size(32)));
typedef unsigned int ppcl_uint16 __attribute__((vector_size(64)));

typedef long ppcl_long2 __attribute__((vector_size(16)));
typedef long ppcl_long3 __attribute__((vector_size(32)));
typedef long ppcl_long4 __attribute__((vector_size(32)));
typedef long ppcl_long8 __attribute__((vector_size(64)));
typedef long ppcl_long16 __attribute__((vector_size(128)));

typedef unsigned long ppcl_ulong2 __attribute__((vector_size(16)));
typedef unsigned long ppcl_ulong3 __attribute__((vector_size(32)));
typedef unsigned long ppcl_ulong4 __attribute__((vector_size(32)));
typedef unsigned long ppcl_ulong8 __attribute__((vector_size(64)));
typedef unsigned long ppcl_ulong16 __attribute__((vector_size(128)));

typedef float ppcl_float2 __attribute__((vector_size(8)));
typedef float ppcl_float3 __attribute__((vector_size(16)));
typedef float ppcl_float4 __attribute__((vector_size(16)));
typedef float ppcl_float8 __attribute__((vector_size(32)));
typedef float ppcl_float16 __attribute__((vector_size(64)));

typedef double ppcl_double2 __attribute__((vector_size(16)));
typedef double ppcl_double3 __attribute__((vector_size(32)));
typedef double ppcl_double4 __attribute__((vector_size(32)));
typedef double ppcl_double8 __attribute__((vector_size(64)));
typedef double ppcl_double16 __attribute__((vector_size(128)));

/* Bit patterns of floating-point values (compiled to register moves). */
static inline unsigned int __ppcl_float_bits(float x) {
    unsigned int u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float __ppcl_bits_float(unsigned int u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline unsigned long __ppcl_double_bits(double x) {
    unsigned long u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double __ppcl_bits_double(unsigned long u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#endif /* PPCL_TYPES_H */
