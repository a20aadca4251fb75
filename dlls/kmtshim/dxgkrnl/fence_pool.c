/*
 * Monitored-fence memory: 8-byte slots in memfd pages the process maps
 * twice, read-only for programs (FenceValueCPUVirtualAddress, as Windows
 * maps it) and read-write for the core and the miniport's engine.  Pages
 * stay mapped until process teardown, so a stale CPU address read after
 * its fence died reads a number, never faults.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fd_registry.h"
#include "sync.h"
#include "base/kmt_debug.h"

#define CHUNK_BYTES (64u * 1024u)
#define SLOTS_PER_CHUNK (CHUNK_BYTES / sizeof(UINT64))
#define MAX_CHUNKS 1024u

struct chunk {
    int fd;
    void *rw;
    void *ro;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk chunks[MAX_CHUNKS];
static unsigned chunk_count;
static unsigned *free_slots;             /* a stack of free slot numbers */
static unsigned free_count, free_capacity;

static bool add_chunk(void)
{
    struct chunk *c = &chunks[chunk_count];
    unsigned *grown;

    if (chunk_count == MAX_CHUNKS)
        return false;
    if (free_count + SLOTS_PER_CHUNK > free_capacity) {
        grown = realloc(free_slots, (free_capacity + SLOTS_PER_CHUNK) * sizeof(*free_slots));
        if (!grown)
            return false;
        free_slots = grown;
        free_capacity += SLOTS_PER_CHUNK;
    }
    c->fd = memfd_create("kmtshim-fences", MFD_CLOEXEC);
    if (c->fd < 0)
        return false;
    kmt_fd_track(c->fd);
    if (ftruncate(c->fd, CHUNK_BYTES) < 0)
        goto fail;
    c->rw = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    if (c->rw == MAP_FAILED)
        goto fail;
    c->ro = mmap(NULL, CHUNK_BYTES, PROT_READ, MAP_SHARED, c->fd, 0);
    if (c->ro == MAP_FAILED) {
        munmap(c->rw, CHUNK_BYTES);
        goto fail;
    }
    /* lowest slot on top of the stack */
    for (unsigned i = SLOTS_PER_CHUNK; i-- > 0;)
        free_slots[free_count++] = chunk_count * SLOTS_PER_CHUNK + i;
    chunk_count++;
    return true;
fail:
    kmt_fd_close(c->fd);
    return false;
}

NTSTATUS dxgk_fence_slot_alloc(_Atomic UINT64 **rw, void **ro, unsigned *slot)
{
    unsigned s;

    pthread_mutex_lock(&pool_lock);
    if (!free_count && !add_chunk()) {
        pthread_mutex_unlock(&pool_lock);
        return STATUS_NO_MEMORY;
    }
    s = free_slots[--free_count];
    pthread_mutex_unlock(&pool_lock);
    *slot = s;
    *rw = (_Atomic UINT64 *)((char *)chunks[s / SLOTS_PER_CHUNK].rw + (s % SLOTS_PER_CHUNK) * sizeof(UINT64));
    *ro = (char *)chunks[s / SLOTS_PER_CHUNK].ro + (s % SLOTS_PER_CHUNK) * sizeof(UINT64);
    return STATUS_SUCCESS;
}

void dxgk_fence_slot_free(unsigned slot)
{
    pthread_mutex_lock(&pool_lock);
    free_slots[free_count++] = slot;
    pthread_mutex_unlock(&pool_lock);
}

void dxgk_fence_pool_destroy(void)
{
    pthread_mutex_lock(&pool_lock);
    for (unsigned i = 0; i < chunk_count; i++) {
        munmap(chunks[i].rw, CHUNK_BYTES);
        munmap(chunks[i].ro, CHUNK_BYTES);
        kmt_fd_close(chunks[i].fd);
    }
    chunk_count = 0;
    free(free_slots);
    free_slots = NULL;
    free_count = free_capacity = 0;
    pthread_mutex_unlock(&pool_lock);
}

void dxgk_fence_pool_forget(void)
{
    /* the parent's chunks stay mapped (fork copies every mapping) and their
     * fds are closed with the other tracked ones; nothing here is freed,
     * since another thread of the parent may have been changing it */
    pool_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    chunk_count = 0;
    free_slots = NULL;
    free_count = free_capacity = 0;
}
