// Applies a per-element operation chosen by an enum opcode via a switch
// statement with intentional fallthrough and a default case.

typedef enum {
    OP_NOP = 0,
    OP_NEGATE,
    OP_ABS,
    OP_SQUARE,
    OP_DOUBLE_THEN_INC,
    OP_INC
} OpCode;

enum Flags { FLAG_NONE = 0, FLAG_CLAMP = 1 << 0 };

__kernel void apply_ops(__global const int *opcodes,
                        __global float *data,
                        const int flags)
{
    size_t i = get_global_id(0);
    float v = data[i];
    OpCode op = (OpCode)opcodes[i];

    switch (op) {
    case OP_NOP:
        break;
    case OP_NEGATE:
        v = -v;
        break;
    case OP_ABS:
        v = fabs(v);
        break;
    case OP_SQUARE:
        v = v * v;
        break;
    case OP_DOUBLE_THEN_INC:
        v *= 2.0f;
        /* fall through */
    case OP_INC:
        v += 1.0f;
        break;
    default:
        v = 0.0f;
        break;
    }

    if (flags & FLAG_CLAMP)
        v = clamp(v, -100.0f, 100.0f);
    data[i] = v;
}
