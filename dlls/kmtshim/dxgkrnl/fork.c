/*
 * A child of fork() is a new process.  On Windows a new process starts with
 * an empty handle table and opens its own adapters; kmtshim's child does
 * the same: the first D3DKMT call in it starts the library afresh, and every
 * handle of the parent is invalid there (STATUS_INVALID_PARAMETER, as any
 * handle the process never made).
 *
 * The parent's state is abandoned, never used or freed: another thread of
 * the parent may have held its locks or been changing it at the fork, and
 * its threads (schedulers, engines, watchers) do not exist in the child.
 * Only the file descriptors the library opened are closed (fd_registry.h):
 * the parent's DRM files must not stay open in the child, since buffers,
 * sync objects and GEM handles belong to the open file, and a child that
 * used them would close or overwrite the parent's.  Mappings stay, as fork
 * leaves every mapping; the library does not use them again.
 *
 * The handler is registered when the library is loaded, not at its first
 * start: child handlers run in the order they were registered, and a
 * program's own (registered before its first D3DKMT call, say) that calls
 * D3DKMT in the child must find the library already forgotten.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/fd_registry.h"
#include "broker/broker.h"
#include "dxgkrnl.h"
#include "keyed_mutex.h"
#include "sync.h"

static atomic_bool started;              /* the library started in this process or a parent */

static void child_after_fork(void)
{
    /* the broker connection may exist before the library starts */
    kmt_broker_forget();
    if (!atomic_load_explicit(&started, memory_order_relaxed))
        return;                          /* nothing to forget */
    kmt_fd_close_all_tracked();
    dxgk_wait_forget();
    dxgk_fence_pool_forget();
    dxgk_priority_forget();
    dxgk_keyed_mutex_forget();
    dxgk_process_forget();
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, child_after_fork);
}

void dxgk_fork_watch(void)
{
    atomic_store(&started, true);
}
