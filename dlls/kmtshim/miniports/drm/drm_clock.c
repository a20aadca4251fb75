/*
 * DRM miniport: DxgkDdiCalibrateGpuClock, from the family's GPU timestamp
 * (family_i915.c: the render ring's timestamp register; family_xe.c:
 * DEVICE_QUERY_ENGINE_CYCLES; family_amdgpu.c: AMDGPU_INFO_TIMESTAMP).
 * virtio_gpu, dumb and generic adapters have no timestamp a program could
 * put next to the GPU's own: STATUS_NOT_SUPPORTED.  The adapter's one
 * node and engine share that clock.
 *
 * The hardware counters are narrower than the 64 bits Windows reports
 * (i915's is 36 bits, xe says how wide its is), so the raw value wraps
 * within an hour at their rates.  Each calibration extends it to 64 bits
 * from the previous one: the CPU time between the two says how far the
 * GPU counter went, which picks the wrap it is in even when calls are
 * more than a wrap apart, and the value never goes back.
 */
#include <errno.h>
#include <string.h>

#include "base/kmt_time.h"
#include "drm_winsys.h"
#include "drm_trace.h"

void kdrm_clock_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->clock.lock, NULL);
    a->clock.valid = false;
}

/* The GPU ticks in `qpc` ticks of QueryPerformanceCounter. */
static uint64_t gpu_ticks_in(uint64_t qpc, uint64_t frequency)
{
    /* by whole seconds and the rest: no 128-bit product, which i386 lacks */
    return qpc / KMT_QPC_FREQUENCY * frequency + qpc % KMT_QPC_FREQUENCY * frequency / KMT_QPC_FREQUENCY;
}

uint64_t kdrm_clock_extend(struct kdrm_clock_state *state, const struct kdrm_gpu_clock *clock)
{
    uint64_t span, mask, raw, expected, value;

    if (!clock->width || clock->width >= 64)
        return clock->gpu;
    span = 1ull << clock->width;
    mask = span - 1;
    raw = clock->gpu & mask;
    pthread_mutex_lock(&state->lock);
    if (!state->valid) {
        value = raw;
    } else {
        uint64_t elapsed = clock->cpu_qpc > state->cpu_qpc ? clock->cpu_qpc - state->cpu_qpc : 0;

        /* the value of `raw`'s residue nearest to where the GPU should be */
        expected = state->gpu + gpu_ticks_in(elapsed, clock->frequency);
        value = (expected & ~mask) | raw;
        if (value + span / 2 < expected)
            value += span;
        else if (value > expected + span / 2 && value >= span)
            value -= span;
        /* a sample older than the saved one (a racing thread got the lock
         * first) is extended from it but moves it neither way */
        if (clock->cpu_qpc < state->cpu_qpc) {
            pthread_mutex_unlock(&state->lock);
            return value;
        }
        if (value < state->gpu)
            value = state->gpu;
    }
    state->valid = true;
    state->gpu = value;
    state->cpu_qpc = clock->cpu_qpc;
    pthread_mutex_unlock(&state->lock);
    return value;
}

NTSTATUS APIENTRY kdrm_calibrate_gpu_clock(HANDLE hAdapter, UINT32 node, UINT32 engine,
                                           DXGKARG_CALIBRATEGPUCLOCK *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_gpu_clock clock = { 0 };
    int err;

    if (node != 0 || engine != 0)
        return STATUS_INVALID_PARAMETER;
    if (!a->family->gpu_clock)
        return STATUS_NOT_SUPPORTED;
    if ((err = a->family->gpu_clock(a, &clock)) < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "no GPU timestamp: %s\n", strerror(-err));
        return err == -EOPNOTSUPP ? STATUS_NOT_SUPPORTED : kdrm_status_from_errno(err);
    }
    args->GpuFrequency = clock.frequency;
    args->GpuClockCounter = kdrm_clock_extend(&a->clock, &clock);
    args->CpuClockCounter = clock.cpu_qpc;
    return STATUS_SUCCESS;
}
