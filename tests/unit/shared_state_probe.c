/*
 * White-box looks at shared sync objects (shared_state_probe.h).
 */
#include <time.h>
#include <unistd.h>

#include "shared_state_probe.h"
#include "dxgkrnl/sync.h"

static struct dxgk_shared_fence *shared_of(D3DKMT_HANDLE h)
{
    struct dxgk_syncobj *obj = dxgk_syncobj_lookup(h, NULL);
    struct dxgk_shared_fence *sf;

    if (!obj)
        return NULL;
    sf = obj->shared_fence;
    dxgk_syncobj_put(obj);
    return sf;
}

struct dxgk_shared_fence_page *kmt_probe_page(D3DKMT_HANDLE h)
{
    struct dxgk_shared_fence *sf = shared_of(h);

    return sf ? sf->rw : NULL;
}

/* The scheduler marks the fence when a GPU wait on it fails, and the
 * watcher clears the mark only when the page moves (shared_fence_watch.c). */
bool kmt_probe_gpu_blocked(D3DKMT_HANDLE h, unsigned bound_ms)
{
    struct dxgk_shared_fence *sf = shared_of(h);

    for (unsigned ms = 0; sf && ms < bound_ms; ms++) {
        if (atomic_load(&sf->gpu_blocked))
            return true;
        usleep(1000);
    }
    return false;
}

void kmt_probe_store_holder(D3DKMT_HANDLE h, uint32_t holder)
{
    struct dxgk_shared_fence *sf = shared_of(h);

    if (sf) {
        atomic_store(&sf->rw->holder, holder);
        dxgk_shared_fence_stored(sf);
    }
}

unsigned kmt_probe_spin_ns(D3DKMT_HANDLE h)
{
    struct dxgk_shared_fence *sf = shared_of(h);

    return sf ? atomic_load(&sf->spin_ns) : 0;
}
