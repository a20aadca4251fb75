/*
 * White-box looks at a shared sync object's page (dxgkrnl/shared_fence.h)
 * for the multi-process tests of shared mutexes, semaphores and legacy
 * fences: the test and its peer program both use them.
 */
#ifndef KMTSHIM_SHARED_STATE_PROBE_H
#define KMTSHIM_SHARED_STATE_PROBE_H

#include <stdbool.h>

#include "dxgkrnl/shared_fence.h"

/* The page of the shared object `h` of this process, NULL if it has none
 * (mapped while the handle lives). */
struct dxgk_shared_fence_page *kmt_probe_page(D3DKMT_HANDLE h);
/* Waits (bounded by `bound_ms`) until a GPU wait of this process's
 * scheduler is blocked on `h`; false if none was. */
bool kmt_probe_gpu_blocked(D3DKMT_HANDLE h, unsigned bound_ms);

/* Stores `holder` in the mutex `h`'s holder word and announces it, as
 * another process taking the mutex over would. */
void kmt_probe_store_holder(D3DKMT_HANDLE h, uint32_t holder);

/* How long this process's next blocking wait on `h` looks at the value
 * before it sleeps, in ns (wait.c); 0 before its first look. */
unsigned kmt_probe_spin_ns(D3DKMT_HANDLE h);

#endif /* KMTSHIM_SHARED_STATE_PROBE_H */
