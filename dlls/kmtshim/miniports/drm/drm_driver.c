/*
 * DRM miniport: DriverEntry, adapter start and stop, devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_fault.h"
#include "drm_trace.h"
#include "miniports/builtin.h"

static NTSTATUS APIENTRY kdrm_add_device(const KMT_PHYSICAL_DEVICE *pdo, PVOID *ctx)
{
    const struct kdrm_physical *phys = pdo->Context;
    struct kdrm_adapter *a;

    if (!phys)
        return STATUS_INVALID_PARAMETER;
    if (!(a = calloc(1, sizeof(*a))))
        return STATUS_NO_MEMORY;
    a->phys = *phys;
    a->family = phys->family;
    a->render_fd = a->card_fd = a->fd = -1;
    a->page_size = (UINT)sysconf(_SC_PAGESIZE);
    kdrm_exec_init(a);
    kdrm_copy_init(a);
    kdrm_batches_init(a);
    kdrm_kms_init(a);
    kdrm_share_init(a);
    kdrm_clock_init(a);
    *ctx = a;
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY kdrm_start_device(PVOID ctx, DXGK_START_INFO *start, DXGKRNL_INTERFACE *iface,
                                           ULONG *sources, ULONG *children)
{
    struct kdrm_adapter *a = ctx;
    int err;

    a->dxgkrnl = *iface;
    if ((err = kdrm_open_nodes(a)) < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "%s: cannot open its node: %s\n", a->phys.location,
                   strerror(-err));
        return kdrm_status_from_errno(err);
    }
    /* fences and contexts need timelines and a way to sleep on them */
    if ((a->caps & KMT_DRM_CAP_SYNCOBJ_TIMELINE) && kdrm_syncobj_probe_eventfd(a))
        a->caps |= KMT_DRM_CAP_SYNCOBJ_EVENTFD | KMT_DRM_CAP_FENCES;
    if (a->family->start && (err = a->family->start(a)) < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "%s: %s allocator start failed: %s\n", a->phys.location,
                   a->family->name, strerror(-err));
        kdrm_close_nodes(a);
        return kdrm_status_from_errno(err);
    }
    kdrm_memory_probe(a);
    kdrm_perf_probe(a);
    kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: %s (%s allocator), render fd %d, card fd %d\n",
               a->phys.location, a->phys.driver, a->family->name, a->render_fd, a->card_fd);
    *sources = *children = kdrm_kms_start(a);   /* a child (connector) per source */
    return STATUS_SUCCESS;
}

/* The threads that call into the core go first. */
static NTSTATUS APIENTRY kdrm_stop_device(PVOID ctx)
{
    kdrm_hotplug_stop(ctx);
    kdrm_vblank_stop(ctx);
    kdrm_exec_stop(ctx);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY kdrm_remove_device(PVOID ctx)
{
    struct kdrm_adapter *a = ctx;

    if (atomic_load(&a->buffers) || atomic_load(&a->devices) || atomic_load(&a->contexts) ||
        atomic_load(&a->fences))
        kdrm_trace(a, KMT_TRACE_ERR, __func__,
                   "removed with %llu devices, %llu buffers, %llu contexts, %llu fences alive\n",
                   (unsigned long long)atomic_load(&a->devices), (unsigned long long)atomic_load(&a->buffers),
                   (unsigned long long)atomic_load(&a->contexts), (unsigned long long)atomic_load(&a->fences));
    kdrm_hotplug_stop(a);                /* it reads the sources */
    kdrm_vblank_stop(a);
    kdrm_kms_stop(a);
    kdrm_exec_stop(a);
    if (a->fd >= 0)
        kdrm_batches_release(a, NULL, true);  /* the contexts are gone: nothing runs */
    if (a->family->stop && a->fd >= 0)
        a->family->stop(a);
    kdrm_close_nodes(a);
    pthread_mutex_destroy(&a->kms.lock);
    pthread_mutex_destroy(&a->kms.conn_lock);
    pthread_mutex_destroy(&a->exec.lock);
    pthread_mutex_destroy(&a->share_lock);
    pthread_mutex_destroy(&a->clock.lock);
    free(a);
    return STATUS_SUCCESS;
}

static void APIENTRY kdrm_unload(void)
{
}

static NTSTATUS APIENTRY kdrm_create_device(HANDLE hAdapter, DXGKARG_CREATEDEVICE *args)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_device *d = calloc(1, sizeof(*d));

    if (!d)
        return STATUS_NO_MEMORY;
    d->adapter = a;
    d->core_device = args->hDevice;
    if (args->pInfo)
        memset(args->pInfo, 0, sizeof(*args->pInfo));
    args->hDevice = d;
    atomic_fetch_add(&a->devices, 1);
    return STATUS_SUCCESS;
}

static NTSTATUS APIENTRY kdrm_destroy_device(HANDLE hDevice)
{
    struct kdrm_device *d = hDevice;

    atomic_fetch_sub(&d->adapter->devices, 1);
    free(d);
    return STATUS_SUCCESS;
}

/* A fork() child starts the miniport afresh with the core (dxgkrnl/fork.c):
 * the file-scope state the new start reads must not be the parent's.  As
 * the core's, registered when the library is loaded: a program's handler
 * registered later may start the library in the child. */
static void child_after_fork(void)
{
    kdrm_fault_forget();
#ifdef KMT_HAVE_DRM_AMDGPU
    kdrm_amdgpu_forget();
#endif
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, child_after_fork);
}

NTSTATUS APIENTRY KmtDrmMiniportDriverEntry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    DRIVER_INITIALIZATION_DATA init = {
        .Version = KMT_MINIPORT_INTERFACE_VERSION,
        .Size = sizeof(DRIVER_INITIALIZATION_DATA),
        .DriverName = "drm",
        .KmtDdiEnumPhysicalDevices = kdrm_enum_physical_devices,
        .DxgkDdiAddDevice = kdrm_add_device,
        .DxgkDdiStartDevice = kdrm_start_device,
        .DxgkDdiStopDevice = kdrm_stop_device,
        .DxgkDdiRemoveDevice = kdrm_remove_device,
        .DxgkDdiUnload = kdrm_unload,
        .DxgkDdiQueryAdapterInfo = kdrm_query_adapter_info,
        .DxgkDdiCalibrateGpuClock = kdrm_calibrate_gpu_clock,
        .DxgkDdiCreateDevice = kdrm_create_device,
        .DxgkDdiDestroyDevice = kdrm_destroy_device,
        .DxgkDdiCreateAllocation = kdrm_create_allocation,
        .DxgkDdiDestroyAllocation = kdrm_destroy_allocation,
        .DxgkDdiOpenAllocation = kdrm_open_allocation,
        .DxgkDdiCloseAllocation = kdrm_close_allocation,
        .DxgkDdiLock = kdrm_lock,
        .DxgkDdiUnlock = kdrm_unlock,
        .DxgkDdiEscape = kdrm_escape,
        .DxgkDdiCreateContext = kdrm_create_context,
        .DxgkDdiDestroyContext = kdrm_destroy_context,
        .DxgkDdiRender = kdrm_render,
        .DxgkDdiSubmitCommand = kdrm_submit_command,
        .DxgkDdiSubmitCommandVirtual = kdrm_submit_command_virtual,
        .KmtDdiCreateFence = kdrm_create_fence,
        .KmtDdiDestroyFence = kdrm_destroy_fence,
        .KmtDdiSignalFence = kdrm_signal_fence,
        .DxgkDdiControlInterrupt = kdrm_control_interrupt,
        .DxgkDdiGetScanLine = kdrm_get_scan_line,
        .DxgkDdiQueryChildStatus = kdrm_query_child_status,
        .KmtDdiExportAllocation = kdrm_export_allocation,
        .KmtDdiImportAllocation = kdrm_import_allocation,
        .KmtDdiExportFence = kdrm_export_fence,
        .KmtDdiImportFence = kdrm_import_fence,
    };

    kdrm_fault_arm_from_env();
    kdrm_set_sysfs_root(getenv("KMTSHIM_DRM_SYSFS"));
    return dxgkrnl->DxgkInitialize(driver, &init);
}
