// Decodes tightly packed sensor records (packed struct, no padding) into
// an aligned output record and uses an aligned private scratch array.

typedef struct __attribute__((packed)) {
    uchar id;
    short temperature;
    uint timestamp;
    float humidity;
} RawRecord;

struct __attribute__((aligned(16))) Decoded {
    float4 values;
    uint timestamp;
    uint id;
};

__kernel void decode_records(__global const RawRecord *raw,
                             __global struct Decoded *out)
{
    size_t i = get_global_id(0);
    RawRecord r = raw[i];
    float scratch[4] __attribute__((aligned(16)));
    scratch[0] = (float)r.temperature * 0.01f;
    scratch[1] = r.humidity;
    scratch[2] = (float)sizeof(RawRecord);
    scratch[3] = 0.0f;

    struct Decoded d;
    d.values = vload4(0, scratch);
    d.timestamp = r.timestamp;
    d.id = r.id;
    out[i] = d;
}
