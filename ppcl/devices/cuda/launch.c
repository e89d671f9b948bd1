/* The CUDA device's launch and wait in one foreign call: cuLaunchKernel then
 * cuStreamSynchronize on the launch's stream, both reached through the pointers the call
 * carries (the driver library is loaded by Python, not linked here). Returns 0, the launch's
 * error as a negative number, or the wait's error. */
typedef int (*ppcl_cu_launch)(void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                              unsigned block_x, unsigned block_y, unsigned block_z,
                              unsigned shared_bytes, void *stream, void **params, void **extra);
typedef int (*ppcl_cu_wait)(void *stream);

typedef struct {
    ppcl_cu_launch launch;
    ppcl_cu_wait wait;
    void *function;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    void *stream;
    void **params;
} ppcl_cuda_call;

int ppcl_cuda_launch_wait(const ppcl_cuda_call *call)
{
    int code = call->launch(call->function, call->grid[0], call->grid[1], call->grid[2],
                            call->block[0], call->block[1], call->block[2],
                            call->shared_bytes, call->stream, call->params, 0);
    if (code != 0)
        return -code;
    return call->wait(call->stream);
}
