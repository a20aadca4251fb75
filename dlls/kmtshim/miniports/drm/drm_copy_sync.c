/*
 * DRM miniport: copy-backed allocations around submissions.
 *
 * Where the kernel cannot put a GEM object over the caller's pages (no
 * userptr: virtio_gpu, vgem, xe), an existing-sysmem allocation is a GEM
 * object holding a copy.  On Windows the GPU works on the caller's pages
 * themselves; here the copy is brought in step where a program can tell:
 *   push  before a submission that names the object: the caller's pages go
 *         into it (and out to the host, the family's cpu_end), and what was
 *         pushed is kept as a shadow;
 *   pull  once the kernel completed that submission, before the miniport
 *         reports it (so a fence signalled after it shows the data): the
 *         bytes the GPU changed against the shadow go back to the caller's
 *         pages.  Bytes it left alone are not written, so what the CPU
 *         wrote meanwhile elsewhere in the allocation survives.
 * A push while an earlier submission's pull is pending waits for the GPU
 * and pulls first; only the newest push is pulled (an older completion
 * whose data a newer push carried forward writes nothing).  A destroyed
 * allocation's pages are never touched again, and its object (GEM handle
 * included) lives on until the last submission naming it completed.
 * All of it under the adapter's copy_lock, a leaf: no core call under it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_cs.h"
#include "drm_trace.h"

void kdrm_copy_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->copy_lock, NULL);
    list_init(&a->copies);
}

void kdrm_copy_register(struct kdrm_adapter *a, struct kdrm_bo *bo, void *user, UINT64 size)
{
    pthread_mutex_lock(&a->copy_lock);
    bo->user = user;
    bo->user_size = size;
    bo->copy_refs = 1;
    list_add_tail(&a->copies, &bo->copy_entry);
    pthread_mutex_unlock(&a->copy_lock);
}

bool kdrm_copy_forget(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    bool last;

    pthread_mutex_lock(&a->copy_lock);
    list_remove(&bo->copy_entry);
    list_init(&bo->copy_entry);
    bo->user = NULL;
    last = !--bo->copy_refs;
    pthread_mutex_unlock(&a->copy_lock);
    return last;
}

/* Copies the bytes that differ between what the GPU left and what was
 * pushed; a word compare skips the untouched stretches. */
static void write_back(unsigned char *user, const unsigned char *gpu, const unsigned char *pushed, UINT64 size)
{
    UINT64 i = 0;

    for (; i + 8 <= size; i += 8) {
        UINT64 g, p;

        memcpy(&g, gpu + i, 8);
        memcpy(&p, pushed + i, 8);
        if (g == p)
            continue;
        for (UINT64 k = i; k < i + 8; k++)
            if (gpu[k] != pushed[k])
                user[k] = gpu[k];
    }
    for (; i < size; i++)
        if (gpu[i] != pushed[i])
            user[i] = gpu[i];
}

/* The object's mapping for the copies, made at its first push and kept
 * until it is freed (kdrm_bo_release): a map and unmap per submission cost
 * more than the copies.  copy_lock held. */
static int copy_map_locked(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    return bo->copy_map ? 0 : a->family->map(a, bo, PROT_READ | PROT_WRITE, &bo->copy_map);
}

/* copy_lock held.  Waits for the GPU and fetches from the host first. */
static int pull_locked(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    DXGK_LOCKFLAGS wait_and_fetch = { .Value = 0 };
    int err;

    bo->shadow_live = false;
    if (!bo->user)
        return 0;                        /* destroyed: its pages may be gone */
    if (a->family->cpu_begin && (err = a->family->cpu_begin(a, bo, wait_and_fetch)) < 0)
        return err;
    if ((err = copy_map_locked(a, bo)) < 0)
        return err;
    write_back(bo->user, bo->copy_map, bo->shadow, bo->user_size);
    return 0;
}

/* copy_lock held. */
static int push_locked(struct kdrm_adapter *a, struct kdrm_bo *bo)
{
    DXGK_LOCKFLAGS written = { .Value = 0 };
    int err;

    if (bo->shadow_live && (err = pull_locked(a, bo)) < 0)
        kdrm_trace(a, KMT_TRACE_ERR, __func__, "write-back of %p before a new push failed: %s\n", bo,
                   strerror(-err));
    if (!bo->shadow && !(bo->shadow = malloc(bo->user_size)))
        return -ENOMEM;
    if ((err = copy_map_locked(a, bo)) < 0)
        return err;
    /* one snapshot for both: the CPU may be writing its pages meanwhile */
    memcpy(bo->shadow, bo->user, bo->user_size);
    memcpy(bo->copy_map, bo->shadow, bo->user_size);
    if (a->family->cpu_end)
        a->family->cpu_end(a, bo, written);
    bo->shadow_live = true;
    bo->pushed++;
    return 0;
}

static struct kdrm_bo *find_locked(struct kdrm_adapter *a, UINT32 handle)
{
    struct kdrm_bo *bo;

    LIST_FOR_EACH_ENTRY(bo, &a->copies, struct kdrm_bo, copy_entry)
        if (bo->handle == handle)
            return bo;
    return NULL;
}

static bool named(const struct kdrm_submission *s, const struct kdrm_bo *bo)
{
    for (UINT i = 0; i < s->ncopies; i++)
        if (s->copies[i].bo == bo)
            return true;
    return false;
}

/* Drops the submission's references, writing back first if it ran; frees
 * what nothing holds any more.  Returns the first write-back's failure. */
int kdrm_copy_finish(struct kdrm_adapter *a, struct kdrm_submission *s, bool pull)
{
    UINT dead = 0;
    int failed = 0;

    if (!s->copies)
        return 0;                        /* named none (the array comes with the first) */
    pthread_mutex_lock(&a->copy_lock);
    for (UINT i = 0; i < s->ncopies; i++) {
        struct kdrm_bo *bo = s->copies[i].bo;
        int err;

        if (pull && bo->shadow_live && bo->pushed == s->copies[i].generation &&
            (err = pull_locked(a, bo)) < 0) {
            kdrm_trace(a, KMT_TRACE_ERR, __func__, "write-back of %p failed: %s\n", bo, strerror(-err));
            if (!failed)
                failed = err;
        }
        if (!--bo->copy_refs)
            s->copies[dead++].bo = bo;   /* reuse the array: done with entry i */
    }
    pthread_mutex_unlock(&a->copy_lock);
    for (UINT i = 0; i < dead; i++)
        kdrm_bo_release(a, s->copies[i].bo);
    free(s->copies);
    s->copies = NULL;
    s->ncopies = 0;
    return failed;
}

int kdrm_copy_push(struct kdrm_adapter *a, const UINT32 *handles, UINT n, struct kdrm_submission *s)
{
    int err = 0;

    pthread_mutex_lock(&a->copy_lock);
    for (UINT i = 0; i < n && !list_empty(&a->copies); i++) {
        struct kdrm_bo *bo = find_locked(a, handles[i]);

        if (!bo || named(s, bo))
            continue;
        if (!s->copies && !(s->copies = calloc(n, sizeof(*s->copies)))) {
            err = -ENOMEM;
            break;
        }
        if ((err = push_locked(a, bo)) < 0)
            break;
        bo->copy_refs++;
        s->copies[s->ncopies].bo = bo;
        s->copies[s->ncopies++].generation = bo->pushed;
    }
    pthread_mutex_unlock(&a->copy_lock);
    if (err < 0) {
        kdrm_trace(a, KMT_TRACE_WARN, __func__, "refreshing a copy-backed object failed: %s\n", strerror(-err));
        kdrm_copy_finish(a, s, false);   /* the job will not run: nothing to write back */
    }
    return err;
}
