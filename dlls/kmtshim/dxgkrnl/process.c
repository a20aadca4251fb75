/*
 * The process: lazy start of the miniports, and dxgkrnl's process-exit
 * teardown (KmtProcessShutdown).
 */
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "shared_fence.h"
#include "sync.h"
#include "miracast.h"
#include "keyed_mutex.h"
#include "base/kmt_debug.h"
#include "base/kmt_spare.h"

struct dxgk_process dxgk_process = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Why the process has no adapter: a miniport that loaded but found no
 * device (KMTSHIM_MINIPORT=drm on a machine without a GPU) is not one that
 * failed to load. */
static void report_no_adapter(NTSTATUS status)
{
    const char *sel = getenv("KMTSHIM_MINIPORT");

    if (!sel || !*sel)
        sel = "the default selection";
    if (!list_empty(&dxgk_process.miniports))
        ERR_(dxgk, "no adapter: %s loaded but found no device\n", sel);
    else
        ERR_(dxgk, "no miniport could be loaded from %s: %s\n", sel, kmt_debugstr_status(status));
}

NTSTATUS dxgk_process_init_slow(void)
{
    NTSTATUS status;

    dxgk_fork_watch();
    pthread_mutex_lock(&dxgk_process.lock);
    if (!dxgk_process.initialized) {
        list_init(&dxgk_process.miniports);
        list_init(&dxgk_process.adapters);
        kmt_mutex_init(&dxgk_process.devices_lock);
        list_init(&dxgk_process.devices);
        list_init(&dxgk_process.adapter_handles);
        list_init(&dxgk_process.syncobjs);
        list_init(&dxgk_process.async_waits);
        hmgr_init(&dxgk_process.handles, HMGR_INSTANCE_LOCAL);
        hmgr_init(&dxgk_process.global_handles, HMGR_INSTANCE_GLOBAL);
        status = dxgk_load_miniports();
        if (dxgk_status_is_exhaustion(status)) {
            /* nothing is published yet: no handle, no thread of ours */
            ERR_(dxgk, "the process start ran out of memory (%s); the next call tries again\n",
                 kmt_debugstr_status(status));
            dxgk_release_adapters_locked();
            dxgk_unload_miniports();
            hmgr_destroy(&dxgk_process.handles);
            hmgr_destroy(&dxgk_process.global_handles);
            kmt_mutex_destroy(&dxgk_process.devices_lock);
            pthread_mutex_unlock(&dxgk_process.lock);
            return status;
        }
        if (status)
            report_no_adapter(status);
        dxgk_process.init_status = status;
        __atomic_store_n(&dxgk_process.initialized, true, __ATOMIC_RELEASE);
    }
    status = dxgk_process.init_status;
    pthread_mutex_unlock(&dxgk_process.lock);
    return status;
}

void dxgk_process_shutdown(void)
{
    struct dxgk_device *device;

    pthread_mutex_lock(&dxgk_process.lock);
    if (!dxgk_process.initialized) {
        pthread_mutex_unlock(&dxgk_process.lock);
        return;
    }
    pthread_mutex_unlock(&dxgk_process.lock);

    TRACE_(dxgk, "tearing the process down\n");
    dxgk_miracast_process_shutdown();   /* sessions hold adapters, not devices */
    dxgk_keyed_mutex_process_shutdown();  /* abandons what this process holds */
    /* Devices first, each with its full cascade, as at process exit. */
    for (;;) {
        D3DKMT_HANDLE h = 0;

        kmt_mutex_lock(&dxgk_process.devices_lock);
        if (!list_empty(&dxgk_process.devices)) {
            device = LIST_ENTRY(dxgk_process.devices.next, struct dxgk_device, entry);
            h = device->handle;
        }
        kmt_mutex_unlock(&dxgk_process.devices_lock);
        if (!h)
            break;
        if (dxgk_destroy_device(h)) {
            /* lost a race with a DestroyDevice call: wait for it to unlink */
            kmt_mutex_lock(&dxgk_process.devices_lock);
            kmt_mutex_unlock(&dxgk_process.devices_lock);
        }
    }
    dxgk_process_cancel_async_waits();
    dxgk_vblank_stop_all();           /* waits without a device hold only the adapter */
    dxgk_process_destroy_syncobjs();  /* the adapter-level ones outlive devices */
    dxgk_shared_fence_watch_stop();   /* no shared fence is left to watch */
    dxgk_stop_adapters();           /* closes the remaining adapter handles too */
    dxgk_unload_miniports();
    kmt_spare_drain();                /* this thread's; other threads' at their exit */

    pthread_mutex_lock(&dxgk_process.lock);
    if (hmgr_live_count(&dxgk_process.handles) || hmgr_live_count(&dxgk_process.global_handles))
        WARN_(dxgk, "%u local and %u global handles outlived the process teardown\n",
              hmgr_live_count(&dxgk_process.handles),
              hmgr_live_count(&dxgk_process.global_handles));
    hmgr_destroy(&dxgk_process.handles);
    hmgr_destroy(&dxgk_process.global_handles);
    kmt_mutex_destroy(&dxgk_process.devices_lock);  /* the next start sets it up again */
    dxgk_fence_pool_destroy();
    __atomic_store_n(&dxgk_process.initialized, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&dxgk_process.lock);
}

void dxgk_process_forget(void)
{
    memset(&dxgk_process, 0, sizeof(dxgk_process));
    dxgk_process.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}
