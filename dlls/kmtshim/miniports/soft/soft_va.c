/*
 * Software miniport: the GPU virtual address space.  Ranges live in a
 * balanced tree (glibc's tsearch) keyed by address; the bump allocator never
 * hands out an address twice, so a stale GPU address faults instead of
 * reaching a new allocation.
 */
#define _GNU_SOURCE
#include <search.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "soft.h"

#define VA_BASE 0x0000000100000000ull   /* 4 GiB: 0 and small numbers never map */
#define VA_ALIGN 0x10000ull             /* 64 KiB, with a 64 KiB guard after each range */

static int range_cmp(const void *a, const void *b)
{
    const struct soft_va_range *x = a, *y = b;

    if (x->start + x->size <= y->start)
        return -1;
    if (y->start + y->size <= x->start)
        return 1;
    return 0;                           /* overlapping: the same range for lookups */
}

void soft_va_init(struct soft_vaspace *va)
{
    pthread_rwlock_init(&va->lock, NULL);
    pthread_mutex_init(&va->next_lock, NULL);
    va->tree = NULL;
    va->next = VA_BASE;
}

static void free_range(void *node)
{
    free(node);
}

void soft_va_destroy(struct soft_vaspace *va)
{
    tdestroy(va->tree, free_range);
    va->tree = NULL;
    pthread_rwlock_destroy(&va->lock);
    pthread_mutex_destroy(&va->next_lock);
}

UINT64 soft_va_reserve(struct soft_vaspace *va, UINT64 size)
{
    UINT64 start;

    pthread_mutex_lock(&va->next_lock);
    start = va->next;
    va->next += ((size + VA_ALIGN - 1) & ~(VA_ALIGN - 1)) + VA_ALIGN;
    pthread_mutex_unlock(&va->next_lock);
    return start;
}

NTSTATUS soft_va_insert(struct soft_vaspace *va, UINT64 start, UINT64 size,
                        struct soft_allocation *alloc, void *cpu)
{
    struct soft_va_range *r = malloc(sizeof(*r));
    bool inserted;

    if (!r)
        return STATUS_NO_MEMORY;
    r->start = start;
    r->size = size;
    r->alloc = alloc;
    r->cpu = cpu;
    pthread_rwlock_wrlock(&va->lock);
    {
        /* the node is only ours to read while the lock is held: a
         * concurrent tdelete may free or reuse it right after */
        void *node = tsearch(r, &va->tree, range_cmp);
        inserted = node && *(struct soft_va_range **)node == r;
    }
    pthread_rwlock_unlock(&va->lock);
    if (!inserted) {
        free(r);
        return STATUS_NO_MEMORY;
    }
    return STATUS_SUCCESS;
}

void soft_va_remove(struct soft_vaspace *va, UINT64 start)
{
    struct soft_va_range key = { start, 1, NULL, NULL }, *r = NULL;
    void *node;

    pthread_rwlock_wrlock(&va->lock);   /* waits for the command using it */
    node = tfind(&key, &va->tree, range_cmp);
    if (node) {
        r = *(struct soft_va_range **)node;
        tdelete(&key, &va->tree, range_cmp);
    }
    pthread_rwlock_unlock(&va->lock);
    free(r);
}

/* The engine's view of an allocation's memory: mapped once, on first use. */
static void *engine_view(struct soft_allocation *s)
{
    void *p = atomic_load(&s->engine_map), *expected = NULL;

    if (p)
        return p;
    if (s->sysmem)
        return s->sysmem;
    p = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (!atomic_compare_exchange_strong(&s->engine_map, &expected, p)) {
        munmap(p, s->size);             /* another command mapped it first */
        return expected;
    }
    return p;
}

void *soft_va_translate(struct soft_vaspace *va, UINT64 gpu_va, UINT64 size)
{
    struct soft_va_range key = { gpu_va, size ? size : 1, NULL, NULL }, *r;
    void **node = tfind(&key, &va->tree, range_cmp);
    void *base;

    if (!node || size > UINT64_MAX - gpu_va)
        return NULL;
    r = *node;
    if (gpu_va < r->start || gpu_va + size > r->start + r->size)
        return NULL;                    /* straddles the end of the range */
    base = r->alloc ? engine_view(r->alloc) : r->cpu;
    return base ? (char *)base + (gpu_va - r->start) : NULL;
}

NTSTATUS APIENTRY soft_map_system_memory(HANDLE hAdapter, VOID *cpu, SIZE_T size, D3DGPU_VIRTUAL_ADDRESS *gpu_va)
{
    struct soft_adapter *a = hAdapter;
    UINT64 start;
    NTSTATUS status;

    if (!cpu || !size || !gpu_va)
        return STATUS_INVALID_PARAMETER;
    start = soft_va_reserve(&a->va, size);
    if ((status = soft_va_insert(&a->va, start, size, NULL, cpu)))
        return status;
    *gpu_va = start;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_unmap_system_memory(HANDLE hAdapter, D3DGPU_VIRTUAL_ADDRESS gpu_va)
{
    struct soft_adapter *a = hAdapter;

    soft_va_remove(&a->va, gpu_va);
    return STATUS_SUCCESS;
}
