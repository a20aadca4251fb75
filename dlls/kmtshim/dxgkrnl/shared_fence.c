/*
 * The page of a shared monitored fence and the wake a signal sends to the
 * processes watching it (shared_fence.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "look.h"
#include "shared_fence.h"
#include "base/kmt_debug.h"
#include "base/kmt_futex_waitv.h"

#define PAGE_BYTES 4096u
_Static_assert(offsetof(struct dxgk_shared_fence_page, holder) == DXGK_SHARED_HOLDER_OFFSET,
               "the holder word's offset the broker is told");

static NTSTATUS map_page(int fd, struct dxgk_shared_fence **out)
{
    struct dxgk_shared_fence *sf = calloc(1, sizeof(*sf));
    void *rw, *ro;

    if (!sf)
        return STATUS_NO_MEMORY;
    rw = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rw == MAP_FAILED) {
        free(sf);
        return errno == EACCES || errno == ENODEV || errno == EBADF ? STATUS_INVALID_PARAMETER
                                                                    : STATUS_NO_MEMORY;
    }
    ro = mmap(NULL, PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    if (ro == MAP_FAILED) {
        munmap(rw, PAGE_BYTES);
        free(sf);
        return STATUS_NO_MEMORY;
    }
    sf->rw = rw;
    sf->ro = ro;
    atomic_init(&sf->seen, atomic_load(&sf->rw->value));
    list_init(&sf->entry);
    *out = sf;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_shared_fence_create(UINT64 initial, struct dxgk_shared_fence **out, int *fd)
{
    NTSTATUS status;
    int f = memfd_create("kmtshim-shared-fence", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (f < 0)
        return STATUS_INSUFFICIENT_RESOURCES;
    if (ftruncate(f, PAGE_BYTES) < 0) {
        close(f);
        return STATUS_NO_MEMORY;
    }
    /* no process can shrink it under the others' mappings or the broker's */
    fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    if ((status = map_page(f, out))) {
        close(f);
        return status;
    }
    atomic_store(&(*out)->rw->value, initial);
    atomic_store(&(*out)->seen, initial);
    *fd = f;
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_shared_fence_map(int fd, struct dxgk_shared_fence **out)
{
    struct stat st;

    /* a file of another size is no shared fence of ours */
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size != PAGE_BYTES)
        return STATUS_INVALID_PARAMETER;
    return map_page(fd, out);
}

void dxgk_shared_fence_free(struct dxgk_shared_fence *sf)
{
    if (!sf)
        return;
    munmap(sf->rw, PAGE_BYTES);
    munmap((void *)sf->ro, PAGE_BYTES);
    free(sf);
}

void dxgk_shared_fence_kick(struct dxgk_shared_fence *sf)
{
    atomic_fetch_add(&sf->rw->wake, 1);
    syscall(SYS_futex, &sf->rw->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void wake_watchers(struct dxgk_shared_fence *sf)
{
    /* Pairs with the watcher, which counts itself in `watchers` before it
     * reads the value: one of the two sees the other. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&sf->rw->watchers, memory_order_relaxed))
        return;                          /* nobody sleeps on it: no system call */
    dxgk_shared_fence_kick(sf);
}

void dxgk_shared_fence_stored(struct dxgk_shared_fence *sf)
{
    /* a hint on the line the signal writes anyway: sched_getcpu reads rseq */
    atomic_store_explicit(&sf->rw->signal_cpu, dxgk_look_cpu(), memory_order_relaxed);
    atomic_store(&sf->seen, atomic_load(&sf->rw->value));
    wake_watchers(sf);
}

bool dxgk_shared_fence_signalled_elsewhere(const struct dxgk_shared_fence *sf)
{
    uint32_t cpu = atomic_load_explicit(&sf->rw->signal_cpu, memory_order_relaxed);

    return cpu && cpu != dxgk_look_cpu();
}

void dxgk_shared_fence_changed(struct dxgk_shared_fence *sf)
{
    uint64_t v = atomic_load(&sf->rw->value);

    if (atomic_exchange(&sf->seen, v) != v)
        wake_watchers(sf);
}

void dxgk_shared_fence_arm(struct dxgk_shared_fence *sf)
{
    atomic_fetch_add(&sf->rw->watchers, 1);
}

void dxgk_shared_fence_disarm(struct dxgk_shared_fence *sf)
{
    atomic_fetch_sub(&sf->rw->watchers, 1);
}

uint32_t dxgk_shared_fence_seq(const struct dxgk_shared_fence *sf)
{
    return atomic_load(&sf->rw->wake);
}

bool dxgk_futex_waitv(struct dxgk_waitv *w, unsigned count, const struct timespec *deadline)
{
    static atomic_bool missing;

    if (atomic_load_explicit(&missing, memory_order_relaxed))
        return false;
    if (kmt_futex_waitv(w, count, deadline) < 0 && errno == ENOSYS) {
        WARN_(dxgk, "no futex_waitv: shared fences are looked at every millisecond\n");
        atomic_store(&missing, true);
        return false;
    }
    return true;
}

static bool passed(const struct timespec *deadline)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

bool dxgk_shared_fence_sleep_one(struct dxgk_shared_fence *sf, uint32_t seq, const struct timespec *deadline)
{
    /* the bitset form takes an absolute CLOCK_MONOTONIC deadline */
    syscall(SYS_futex, &sf->rw->wake, FUTEX_WAIT_BITSET, seq, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    return !deadline || !passed(deadline);
}

bool dxgk_shared_fence_sleep(_Atomic uint32_t *word, uint32_t value, struct dxgk_shared_fence *const *sfs,
                             const uint32_t *seqs, unsigned count, const struct timespec *deadline)
{
    struct dxgk_waitv w[D3DDDI_MAX_OBJECT_WAITED_ON + 1];

    w[0] = (struct dxgk_waitv){ .val = value, .uaddr = (uintptr_t)word,
                                .flags = DXGK_WAITV_U32 | DXGK_WAITV_PRIVATE };
    for (unsigned i = 0; i < count; i++)
        w[i + 1] = (struct dxgk_waitv){ .val = seqs[i], .uaddr = (uintptr_t)&sfs[i]->rw->wake,
                                        .flags = DXGK_WAITV_U32 };
    if (!dxgk_futex_waitv(w, count + 1, deadline)) {
        struct timespec poll = { 0, 1000000 };   /* without futex_waitv: look every millisecond */
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, &poll, NULL, 0);
    }
    return !deadline || !passed(deadline);
}
