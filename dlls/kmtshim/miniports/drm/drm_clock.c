/*
 * DRM miniport: DxgkDdiCalibrateGpuClock, from the family's GPU timestamp
 * (family_i915.c: the render ring's timestamp register; family_xe.c:
 * DEVICE_QUERY_ENGINE_CYCLES; family_amdgpu.c: AMDGPU_INFO_TIMESTAMP).
 * virtio_gpu, dumb and generic adapters have no timestamp a program could
 * put next to the GPU's own: STATUS_NOT_SUPPORTED.  The adapter's one
 * node and engine share that clock.
 */
#include <errno.h>
#include <string.h>

#include "drm_winsys.h"
#include "drm_trace.h"

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
    args->GpuClockCounter = clock.gpu;
    args->CpuClockCounter = clock.cpu_qpc;
    return STATUS_SUCCESS;
}
