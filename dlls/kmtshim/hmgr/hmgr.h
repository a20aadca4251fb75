/*
 * hmgr: the per-process D3DKMT handle table.
 *
 * Handle format (Windows' and dxgkrnl's):
 *     bits 31..30  unique   generation of the slot, cycles 1, 2, 3
 *     bits 29..6   index    HMGR_INDEX_BASE (2^23) + slot number, 24 bits
 *     bits  5..0   instance 0 for local handles, 2 for global share handles
 * so the first handle of slot i is 0x60000000 | i << 6, and 0 is never valid.
 * Windows' indices start at 0.  Wine from 10.15 on hands out its own D3DKMT
 * handles in the same format from index 0 upward, in the same process as
 * kmtshim's when the gdi32 proxy is used: starting at 2^23 keeps the two
 * spaces disjoint by construction (Wine would need 8M live objects to reach
 * kmtshim's first index), so the proxy routes by bit 29 alone, live or
 * stale (dlls/gdi32/routing.txt).
 *
 * One space for every object type.  Free slots form a FIFO threaded through
 * the table and the table grows while fewer than HMGR_RESERVE slots are free,
 * so fresh handles increase monotonically and a freed slot comes back only
 * after at least HMGR_RESERVE other handles were issued; the 2-bit generation
 * then makes a stale handle miss the reused slot for its next two reuses.
 *
 * A refused create hands out nothing, as on Windows: "the sequence" is the
 * order in which hmgr_alloc() hands values out (under the free-list lock).
 * hmgr_cancel() takes the value back out of it when no value handed out
 * after it is still out, i.e. when it is the last one handed out or every
 * later one was cancelled already: the slot goes back to the head of the
 * free list at its generation, so the next hmgr_alloc() returns the same
 * value and a thread's successful creates stay exactly 0x40 apart however
 * many of its creates were refused in between.  A create that reserves
 * several handles therefore cancels them in the reverse order.  When
 * another thread took a later value meanwhile, taking it back would make
 * the sequence go down, so the slot goes to the tail of the free list
 * instead, still at its generation: it was never published, so no caller
 * holds its value and no stale handle can name it.  Only hmgr_remove()
 * (a published handle) moves a slot to its next generation.
 *
 * Concurrency: slots live in fixed chunks that never move, each guarded by a
 * one-bit spinlock in its state word.  hmgr_lookup() takes a reference on
 * the object under that lock and takes no table-wide lock; hmgr_find_rcu()
 * takes neither, for objects freed only after an RCU grace period; hmgr_alloc() and
 * the free-list part of hmgr_free() take a mutex held for a few instructions,
 * never across a miniport call.  Removing a handle hands the table's
 * reference to the caller, so an object dies only after every user that
 * looked it up has dropped its reference.
 */
#ifndef KMTSHIM_HMGR_H
#define KMTSHIM_HMGR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/kmt_debug.h"
#include "base/kmt_lock.h"
#include "kmtshim/d3dukmdt.h"

/* Object types (dxgkrnl's numbering). */
enum hmgr_type {
    HMGR_TYPE_ANY = 0,
    HMGR_TYPE_ADAPTER = 1,
    HMGR_TYPE_SHAREDRESOURCE = 2,
    HMGR_TYPE_DEVICE = 3,
    HMGR_TYPE_RESOURCE = 4,
    HMGR_TYPE_ALLOCATION = 5,
    HMGR_TYPE_CONTEXT = 7,
    HMGR_TYPE_SYNCOBJECT = 8,
    HMGR_TYPE_KEYEDMUTEX = 9,
    HMGR_TYPE_PAGINGQUEUE = 10,
    HMGR_TYPE_MONITOREDFENCE = 32,
    HMGR_TYPE_MIRACAST = 40,             /* kmtshim: a Miracast session, no dxgkrnl twin */
    HMGR_TYPE_MAX = 63,
};

/* Every object kept in a table starts with this header. */
struct kmt_object {
    atomic_uint refcount;
    uint32_t type;                       /* enum hmgr_type */
    void (*release)(struct kmt_object *obj); /* called when refcount hits 0 */
};

static inline void kmt_object_init(struct kmt_object *obj, enum hmgr_type type,
                                   void (*release)(struct kmt_object *))
{
    atomic_init(&obj->refcount, 1);
    obj->type = type;
    obj->release = release;
}

static inline void kmt_object_get(struct kmt_object *obj)
{
    atomic_fetch_add_explicit(&obj->refcount, 1, memory_order_relaxed);
}

/* A reference on an object whose count may already have dropped to 0
 * (found under kmt_rcu_read_lock(), its release pending): false then. */
static inline bool kmt_object_tryget(struct kmt_object *obj)
{
    unsigned n = atomic_load_explicit(&obj->refcount, memory_order_relaxed);

    do {
        if (!n)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&obj->refcount, &n, n + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

static inline void kmt_object_put(struct kmt_object *obj)
{
    if (atomic_fetch_sub_explicit(&obj->refcount, 1, memory_order_acq_rel) == 1)
        obj->release(obj);
}

#define HMGR_INDEX_BITS 24
#define HMGR_INDEX_MASK ((1u << HMGR_INDEX_BITS) - 1)
/* The index of slot 0: the upper half of the index space is kmtshim's, the
 * lower half is left to a Wine that hands out D3DKMT handles of its own. */
#define HMGR_INDEX_BASE (1u << (HMGR_INDEX_BITS - 1))
/* Slots: indices HMGR_INDEX_BASE to 2^24 - 2 (2^24 - 1 stays unused). */
#define HMGR_MAX_ENTRIES (HMGR_INDEX_MASK - HMGR_INDEX_BASE)
#define HMGR_CHUNK_SHIFT 10
#define HMGR_CHUNK_SIZE (1u << HMGR_CHUNK_SHIFT)
#define HMGR_MAX_CHUNKS ((HMGR_INDEX_MASK + 1 - HMGR_INDEX_BASE) >> HMGR_CHUNK_SHIFT)
#define HMGR_RESERVE 128u

#define HMGR_INSTANCE_LOCAL 0u
#define HMGR_INSTANCE_GLOBAL 2u

struct hmgr_entry;

struct hmgr_table {
    unsigned instance;                   /* low 6 bits of every handle */
    _Atomic(struct hmgr_entry *) chunks[HMGR_MAX_CHUNKS];
    atomic_uint size;                    /* entries in published chunks */
    struct kmt_mutex free_lock;          /* free list and growth */
    uint32_t free_head, free_tail, free_count;
    uint32_t issued;                     /* values handed out, less those taken back */
    atomic_uint live;                    /* handles currently allocated */
};

/* Bytes of table memory per handle slot (reported in the README). */
size_t hmgr_entry_size(void);

void hmgr_init(struct hmgr_table *t, unsigned instance);
/* Frees the table's memory; the caller has freed every handle. */
void hmgr_destroy(struct hmgr_table *t);

/* Reserves a slot (invisible to lookups).  Returns 0 when the table is full
 * or memory is exhausted. */
D3DKMT_HANDLE hmgr_alloc(struct hmgr_table *t);
/* Makes a reserved slot visible with an object; the table keeps the
 * reference the caller owned. */
void hmgr_publish(struct hmgr_table *t, D3DKMT_HANDLE h, struct kmt_object *obj);
/* Returns a reserved, never published slot to the free list; when no later
 * value is still out, the next hmgr_alloc() returns h again (see above). */
void hmgr_cancel(struct hmgr_table *t, D3DKMT_HANDLE h);

/* Removes a published handle of the given type and returns its object with
 * the table's reference, which the caller now owns; NULL if the handle is not
 * live with that type (so of two racing frees exactly one wins). */
struct kmt_object *hmgr_remove(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type);

/* ---- slots, and the lookup every D3DKMT call makes --------------------------
 * Inline so that a lookup costs no function call: under an emulated CPU a
 * call and its return cost more than the lookup's own instructions. */

#define HMGR_INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__) || defined(__i386__)
# define hmgr_cpu_relax() __builtin_ia32_pause()
#else
# define hmgr_cpu_relax() do { } while (0)
#endif

/* Slot state word. */
#define HMGR_ST_LOCK      0x001u
#define HMGR_ST_USED      0x002u   /* reserved or published: not on the free list */
#define HMGR_ST_PUBLISHED 0x004u   /* visible to lookups */
#define HMGR_ST_UNIQUE_SHIFT 4     /* 2 bits: 1..3 */
#define HMGR_ST_UNIQUE_MASK  (3u << HMGR_ST_UNIQUE_SHIFT)
#define HMGR_ST_TYPE_SHIFT 8       /* 6 bits */
#define HMGR_ST_TYPE_MASK  (0x3fu << HMGR_ST_TYPE_SHIFT)

struct hmgr_entry {
    atomic_uint state;
    uint32_t next_free;                  /* under free_lock: the free-list link; while
                                            reserved, the slot's place in the sequence
                                            (hmgr_table.issued when handed out) */
    /* written under the slot lock; hmgr_find_rcu() reads it without */
    _Atomic(struct kmt_object *) obj;
};

static inline unsigned hmgr_st_unique(unsigned st)
{
    return (st & HMGR_ST_UNIQUE_MASK) >> HMGR_ST_UNIQUE_SHIFT;
}

static inline unsigned hmgr_st_type(unsigned st)
{
    return (st & HMGR_ST_TYPE_MASK) >> HMGR_ST_TYPE_SHIFT;
}

HMGR_INLINE struct hmgr_entry *hmgr_entry_at(struct hmgr_table *t, uint32_t index)
{
    struct hmgr_entry *chunk =
        atomic_load_explicit(&t->chunks[index >> HMGR_CHUNK_SHIFT], memory_order_acquire);
    return &chunk[index & (HMGR_CHUNK_SIZE - 1)];
}

/* A handle's slot number; an index below HMGR_INDEX_BASE wraps to a value
 * past every table's size. */
static inline uint32_t hmgr_slot_of(D3DKMT_HANDLE h)
{
    return ((h >> 6) & HMGR_INDEX_MASK) - HMGR_INDEX_BASE;
}

/* Decodes a handle to its slot; NULL for anything that cannot be one of ours. */
HMGR_INLINE struct hmgr_entry *hmgr_entry_of(struct hmgr_table *t, D3DKMT_HANDLE h, unsigned *unique)
{
    uint32_t index = hmgr_slot_of(h);

    if ((h & 0x3f) != t->instance || !(h >> 30))
        return NULL;
    if (index >= atomic_load_explicit(&t->size, memory_order_acquire))
        return NULL;
    *unique = h >> 30;
    return hmgr_entry_at(t, index);
}

HMGR_INLINE unsigned hmgr_entry_lock(struct hmgr_entry *e)
{
    unsigned st = atomic_load_explicit(&e->state, memory_order_relaxed);

    for (;;) {
        if (!(st & HMGR_ST_LOCK) &&
            atomic_compare_exchange_weak_explicit(&e->state, &st, st | HMGR_ST_LOCK,
                                                  memory_order_acquire, memory_order_relaxed))
            return st;
        hmgr_cpu_relax();
        st = atomic_load_explicit(&e->state, memory_order_relaxed);
    }
}

HMGR_INLINE void hmgr_entry_unlock(struct hmgr_entry *e, unsigned st)
{
    atomic_store_explicit(&e->state, st & ~HMGR_ST_LOCK, memory_order_release);
}

HMGR_INLINE bool hmgr_st_matches(unsigned st, unsigned unique, enum hmgr_type type)
{
    return (st & HMGR_ST_PUBLISHED) && hmgr_st_unique(st) == unique &&
           (type == HMGR_TYPE_ANY || hmgr_st_type(st) == (unsigned)type);
}

/* Traces (+hmgr) why `op` refused h as `type`: garbage, stale, free,
 * reserved or of another type.  Out of line and cold: only refusals call it. */
void hmgr_trace_refused(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type, const char *op)
    __attribute__((cold, noinline));

/* A refused lookup: the channel check inline, the tracing out of line; a
 * lookup that succeeds never comes here. */
#define HMGR_LOOKUP_REFUSED(t, h, type) \
    do { if (__builtin_expect(KMT_TRACE_ON(hmgr), 0)) hmgr_trace_refused(t, h, type, "hmgr_lookup"); } while (0)

/* Looks a handle up and takes a reference on its object; NULL if the handle
 * is 0, malformed, stale, free, reserved, or of another type (type ANY
 * accepts every type). */
HMGR_INLINE struct kmt_object *hmgr_lookup(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type)
{
    struct kmt_object *obj;
    unsigned unique, st;
    struct hmgr_entry *e = hmgr_entry_of(t, h, &unique);

    /* Cheap unlocked pre-check: most bad handles never touch the lock. */
    if (__builtin_expect(!e, 0) ||
        __builtin_expect(!hmgr_st_matches(atomic_load_explicit(&e->state, memory_order_relaxed), unique, type), 0)) {
        HMGR_LOOKUP_REFUSED(t, h, type);
        return NULL;
    }
    st = hmgr_entry_lock(e);
    if (__builtin_expect(!hmgr_st_matches(st, unique, type), 0)) {
        hmgr_entry_unlock(e, st);
        HMGR_LOOKUP_REFUSED(t, h, type);
        return NULL;
    }
    obj = atomic_load_explicit(&e->obj, memory_order_relaxed);
    kmt_object_get(obj);
    hmgr_entry_unlock(e, st);
    return obj;
}

/* Looks a handle up without a reference and without the slot lock: no
 * locked instruction and no call, a few loads and compares.  Only for
 * objects whose memory is freed after a kmt_rcu_synchronize() that follows
 * their removal (keyed mutexes); the caller is inside kmt_rcu_read_lock()
 * and uses the object only until kmt_rcu_read_unlock().  `instance` is t's,
 * as a constant, and `type` is one type (not ANY): a published slot of
 * that handle then has exactly one state word but for the lock bit, and
 * one compare checks generation, type and publication at once.  The state
 * is read before and after the object pointer: unchanged, the pointer is
 * the one published under that handle, or NULL while a remove is under
 * way.  A slot that went through all three generations back to the same
 * state between the two reads would give its newest object of the same
 * type, as a handle kept past three reuses of its slot does.  NULL, with
 * no trace, for a handle that names no such object. */
HMGR_INLINE struct kmt_object *hmgr_find_rcu(struct hmgr_table *t, unsigned instance, D3DKMT_HANDLE h,
                                             enum hmgr_type type)
{
    /* a unique of 0 gives a state no published slot has */
    unsigned want = HMGR_ST_USED | HMGR_ST_PUBLISHED | (h >> 30) << HMGR_ST_UNIQUE_SHIFT |
                    (unsigned)type << HMGR_ST_TYPE_SHIFT;
    uint32_t index = hmgr_slot_of(h);
    struct kmt_object *obj;
    struct hmgr_entry *e;

    if (__builtin_expect((h & 0x3f) != instance, 0) ||
        __builtin_expect(index >= atomic_load_explicit(&t->size, memory_order_acquire), 0))
        return NULL;
    e = hmgr_entry_at(t, index);
    if (__builtin_expect((atomic_load_explicit(&e->state, memory_order_acquire) & ~HMGR_ST_LOCK) != want, 0))
        return NULL;
    obj = atomic_load_explicit(&e->obj, memory_order_acquire);
    if (__builtin_expect(!obj, 0) ||
        __builtin_expect((atomic_load_explicit(&e->state, memory_order_relaxed) & ~HMGR_ST_LOCK) != want, 0))
        return NULL;
    return obj;
}

/* hmgr_find_rcu() in any table, tracing a refusal. */
HMGR_INLINE struct kmt_object *hmgr_lookup_rcu(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type)
{
    struct kmt_object *obj = hmgr_find_rcu(t, t->instance, h, type);

    if (__builtin_expect(!obj, 0))
        HMGR_LOOKUP_REFUSED(t, h, type);
    return obj;
}

/* Has `read` copy what it needs out of a live object of `type`, under its
 * slot lock and without a reference: the table's own keeps the object alive
 * meanwhile, and no reference of the caller's can turn out to be the last,
 * whose teardown (DDI calls, resource locks) must not run inside a
 * miniport's callback.  False if h names no such object.  `read` must not
 * block or call back into the table. */
bool hmgr_peek(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type,
               void (*read)(const struct kmt_object *obj, void *out), void *out);

/* The value the next hmgr_alloc() will hand out (barring other threads),
 * for tests and traces; 0 if the table is full. */
D3DKMT_HANDLE hmgr_next_value(struct hmgr_table *t);

/* Handles currently reserved or published. */
unsigned hmgr_live_count(struct hmgr_table *t);

static inline bool hmgr_is_global_handle(D3DKMT_HANDLE h)
{
    return (h & 0x3f) == HMGR_INSTANCE_GLOBAL;
}

#endif /* KMTSHIM_HMGR_H */
