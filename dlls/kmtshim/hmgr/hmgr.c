/*
 * hmgr: the per-process D3DKMT handle table (see hmgr.h for the rules).
 */
#include <stdlib.h>
#include <string.h>

#include "hmgr.h"

#if defined(__x86_64__) || defined(__i386__)
# define cpu_relax() __builtin_ia32_pause()
#else
# define cpu_relax() do { } while (0)
#endif

/* Slot state word. */
#define ST_LOCK      0x001u
#define ST_USED      0x002u   /* reserved or published: not on the free list */
#define ST_PUBLISHED 0x004u   /* visible to lookups */
#define ST_UNIQUE_SHIFT 4     /* 2 bits: 1..3 */
#define ST_UNIQUE_MASK  (3u << ST_UNIQUE_SHIFT)
#define ST_TYPE_SHIFT 8       /* 6 bits */
#define ST_TYPE_MASK  (0x3fu << ST_TYPE_SHIFT)

struct hmgr_entry {
    atomic_uint state;
    uint32_t next_free;                  /* free-list link, under free_lock */
    struct kmt_object *obj;              /* under the slot lock */
};

#define NO_ENTRY UINT32_MAX

size_t hmgr_entry_size(void)
{
    return sizeof(struct hmgr_entry);
}

static inline unsigned st_unique(unsigned st) { return (st & ST_UNIQUE_MASK) >> ST_UNIQUE_SHIFT; }
static inline unsigned st_type(unsigned st) { return (st & ST_TYPE_MASK) >> ST_TYPE_SHIFT; }

static inline D3DKMT_HANDLE make_handle(const struct hmgr_table *t, uint32_t index, unsigned unique)
{
    return (D3DKMT_HANDLE)((unique << 30) | (index << 6) | t->instance);
}

static struct hmgr_entry *entry_at(struct hmgr_table *t, uint32_t index)
{
    struct hmgr_entry *chunk =
        atomic_load_explicit(&t->chunks[index >> HMGR_CHUNK_SHIFT], memory_order_acquire);
    return &chunk[index & (HMGR_CHUNK_SIZE - 1)];
}

/* Decodes a handle to its slot; NULL for anything that cannot be one of ours. */
static struct hmgr_entry *entry_of(struct hmgr_table *t, D3DKMT_HANDLE h, unsigned *unique)
{
    uint32_t index = (h >> 6) & HMGR_MAX_ENTRIES;

    if ((h & 0x3f) != t->instance || !(h >> 30))
        return NULL;
    if (index >= atomic_load_explicit(&t->size, memory_order_acquire))
        return NULL;
    *unique = h >> 30;
    return entry_at(t, index);
}

static unsigned entry_lock(struct hmgr_entry *e)
{
    unsigned st = atomic_load_explicit(&e->state, memory_order_relaxed);

    for (;;) {
        if (!(st & ST_LOCK) &&
            atomic_compare_exchange_weak_explicit(&e->state, &st, st | ST_LOCK,
                                                  memory_order_acquire, memory_order_relaxed))
            return st;
        cpu_relax();
        st = atomic_load_explicit(&e->state, memory_order_relaxed);
    }
}

static void entry_unlock(struct hmgr_entry *e, unsigned st)
{
    atomic_store_explicit(&e->state, st & ~ST_LOCK, memory_order_release);
}

void hmgr_init(struct hmgr_table *t, unsigned instance)
{
    memset(t, 0, sizeof(*t));
    t->instance = instance & 0x3f;
    pthread_mutex_init(&t->free_lock, NULL);
    t->free_head = t->free_tail = NO_ENTRY;
}

void hmgr_destroy(struct hmgr_table *t)
{
    for (unsigned i = 0; i < HMGR_MAX_CHUNKS; i++) {
        struct hmgr_entry *chunk = atomic_load(&t->chunks[i]);
        if (!chunk)
            break;
        free(chunk);
        atomic_store(&t->chunks[i], NULL);
    }
    atomic_store(&t->size, 0);
    pthread_mutex_destroy(&t->free_lock);
}

static void free_list_append(struct hmgr_table *t, uint32_t index)
{
    entry_at(t, index)->next_free = NO_ENTRY;
    if (t->free_tail == NO_ENTRY)
        t->free_head = index;
    else
        entry_at(t, t->free_tail)->next_free = index;
    t->free_tail = index;
    t->free_count++;
}

/* Adds one chunk of fresh slots at the tail of the free list. */
static bool grow(struct hmgr_table *t)
{
    uint32_t size = atomic_load_explicit(&t->size, memory_order_relaxed);
    uint32_t chunk_no = size >> HMGR_CHUNK_SHIFT;
    uint32_t count = HMGR_CHUNK_SIZE;
    struct hmgr_entry *chunk;

    if (chunk_no >= HMGR_MAX_CHUNKS)
        return false;
    if (size + count > HMGR_MAX_ENTRIES)
        count = HMGR_MAX_ENTRIES - size;   /* index 2^24-1 stays unused */
    if (!count)
        return false;
    chunk = calloc(HMGR_CHUNK_SIZE, sizeof(*chunk));
    if (!chunk)
        return false;
    for (uint32_t i = 0; i < HMGR_CHUNK_SIZE; i++)
        atomic_init(&chunk[i].state, 1u << ST_UNIQUE_SHIFT);
    atomic_store_explicit(&t->chunks[chunk_no], chunk, memory_order_release);
    for (uint32_t i = 0; i < count; i++)
        free_list_append(t, size + i);
    atomic_store_explicit(&t->size, size + count, memory_order_release);
    return true;
}

D3DKMT_HANDLE hmgr_alloc(struct hmgr_table *t)
{
    struct hmgr_entry *e;
    uint32_t index;
    unsigned st;

    pthread_mutex_lock(&t->free_lock);
    if (t->free_count <= HMGR_RESERVE && !grow(t) && !t->free_count) {
        pthread_mutex_unlock(&t->free_lock);
        return 0;
    }
    index = t->free_head;
    e = entry_at(t, index);
    t->free_head = e->next_free;
    if (t->free_head == NO_ENTRY)
        t->free_tail = NO_ENTRY;
    t->free_count--;
    pthread_mutex_unlock(&t->free_lock);

    st = entry_lock(e);
    st = (st & ST_UNIQUE_MASK) | ST_USED;
    e->obj = NULL;
    entry_unlock(e, st);
    atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
    return make_handle(t, index, st_unique(st));
}

void hmgr_publish(struct hmgr_table *t, D3DKMT_HANDLE h, struct kmt_object *obj)
{
    unsigned unique, st;
    struct hmgr_entry *e = entry_of(t, h, &unique);

    if (!e)
        return;
    st = entry_lock(e);
    if ((st & (ST_USED | ST_PUBLISHED)) != ST_USED || st_unique(st) != unique) {
        entry_unlock(e, st);
        return;
    }
    e->obj = obj;
    st = (st & ~ST_TYPE_MASK) | ST_PUBLISHED | ((obj->type & 0x3fu) << ST_TYPE_SHIFT);
    entry_unlock(e, st);
}

/* Turns a locked, used slot back into a free one and queues it. */
static void release_slot(struct hmgr_table *t, struct hmgr_entry *e, unsigned st, uint32_t index)
{
    unsigned unique = st_unique(st) % 3 + 1;

    e->obj = NULL;
    entry_unlock(e, unique << ST_UNIQUE_SHIFT);
    pthread_mutex_lock(&t->free_lock);
    free_list_append(t, index);
    pthread_mutex_unlock(&t->free_lock);
    atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
}

void hmgr_cancel(struct hmgr_table *t, D3DKMT_HANDLE h)
{
    unsigned unique, st;
    struct hmgr_entry *e = entry_of(t, h, &unique);

    if (!e)
        return;
    st = entry_lock(e);
    if ((st & (ST_USED | ST_PUBLISHED)) != ST_USED || st_unique(st) != unique) {
        entry_unlock(e, st);
        return;
    }
    release_slot(t, e, st, (h >> 6) & HMGR_MAX_ENTRIES);
}

static bool matches(unsigned st, unsigned unique, enum hmgr_type type)
{
    return (st & ST_PUBLISHED) && st_unique(st) == unique &&
           (type == HMGR_TYPE_ANY || st_type(st) == (unsigned)type);
}

struct kmt_object *hmgr_lookup(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type)
{
    struct kmt_object *obj = NULL;
    unsigned unique, st;
    struct hmgr_entry *e = entry_of(t, h, &unique);

    if (!e)
        return NULL;
    /* Cheap unlocked pre-check: most bad handles never touch the lock. */
    if (!matches(atomic_load_explicit(&e->state, memory_order_relaxed), unique, type))
        return NULL;
    st = entry_lock(e);
    if (matches(st, unique, type)) {
        obj = e->obj;
        kmt_object_get(obj);
    }
    entry_unlock(e, st);
    return obj;
}

struct kmt_object *hmgr_remove(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type)
{
    struct kmt_object *obj;
    unsigned unique, st;
    struct hmgr_entry *e = entry_of(t, h, &unique);

    if (!e)
        return NULL;
    st = entry_lock(e);
    if (!matches(st, unique, type)) {
        entry_unlock(e, st);
        return NULL;
    }
    obj = e->obj;
    release_slot(t, e, st, (h >> 6) & HMGR_MAX_ENTRIES);
    return obj;
}

unsigned hmgr_live_count(struct hmgr_table *t)
{
    return atomic_load_explicit(&t->live, memory_order_relaxed);
}
