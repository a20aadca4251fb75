/*
 * hmgr: the per-process D3DKMT handle table (see hmgr.h for the rules).
 *
 * Traces (WINEDEBUG=+hmgr): a handle reserved, published with its object,
 * cancelled or freed, and every lookup, remove or peek that refuses a
 * handle, with the reason (garbage, stale, freed, reserved, wrong type).
 * A successful lookup traces nothing: it is the hot path.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/kmt_debug.h"
#include "base/kmt_rcu.h"
#include "hmgr.h"

#define NO_ENTRY UINT32_MAX

static const char *type_name(unsigned type)
{
    switch (type) {
    case HMGR_TYPE_ANY: return "any";
    case HMGR_TYPE_ADAPTER: return "adapter";
    case HMGR_TYPE_SHAREDRESOURCE: return "shared resource";
    case HMGR_TYPE_DEVICE: return "device";
    case HMGR_TYPE_RESOURCE: return "resource";
    case HMGR_TYPE_ALLOCATION: return "allocation";
    case HMGR_TYPE_CONTEXT: return "context";
    case HMGR_TYPE_SYNCOBJECT: return "sync object";
    case HMGR_TYPE_KEYEDMUTEX: return "keyed mutex";
    case HMGR_TYPE_PAGINGQUEUE: return "paging queue";
    case HMGR_TYPE_MONITOREDFENCE: return "monitored fence";
    case HMGR_TYPE_MIRACAST: return "Miracast session";
    default: return "unknown type";
    }
}

static const char *table_name(const struct hmgr_table *t)
{
    return t->instance == HMGR_INSTANCE_GLOBAL ? "global" : "local";
}

void hmgr_trace_refused(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type, const char *op)
{
    uint32_t raw = (h >> 6) & HMGR_INDEX_MASK, index = hmgr_slot_of(h), size;
    unsigned unique = h >> 30, st;
    char why[96];

    if (!kmt_debug_on(&kmt_dbch_hmgr, KMT_DBG_TRACE))
        return;
    size = atomic_load_explicit(&t->size, memory_order_acquire);
    if (!h)
        snprintf(why, sizeof(why), "null handle");
    else if ((h & 0x3f) != t->instance)
        snprintf(why, sizeof(why), "garbage: instance bits %u, not the %s table's %u",
                 h & 0x3f, table_name(t), t->instance);
    else if (!unique)
        snprintf(why, sizeof(why), "garbage: generation bits 0");
    else if (raw < HMGR_INDEX_BASE)
        snprintf(why, sizeof(why), "garbage: index %#x below kmtshim's first, %#x (another space, such as Wine's)",
                 raw, HMGR_INDEX_BASE);
    else if (index >= size)
        snprintf(why, sizeof(why), "garbage: slot %u past the table's %u", index, size);
    else {
        /* a racy read: the slot may change meanwhile, the reason stays a good guess */
        st = atomic_load_explicit(&hmgr_entry_at(t, index)->state, memory_order_relaxed);
        if (hmgr_st_unique(st) != unique)
            snprintf(why, sizeof(why), "stale: slot %u is at generation %u, the handle's is %u",
                     index, hmgr_st_unique(st), unique);
        else if (!(st & HMGR_ST_USED))
            snprintf(why, sizeof(why), "slot %u is free (never issued at this generation)", index);
        else if (!(st & HMGR_ST_PUBLISHED))
            snprintf(why, sizeof(why), "reserved, not published yet");
        else
            snprintf(why, sizeof(why), "wrong type: it is a %s", type_name(hmgr_st_type(st)));
    }
    kmt_debug_log(&kmt_dbch_hmgr, KMT_DBG_TRACE, op, "%s handle 0x%08x as %s refused: %s",
                  table_name(t), h, type_name(type), why);
}

size_t hmgr_entry_size(void)
{
    return sizeof(struct hmgr_entry);
}

static inline D3DKMT_HANDLE make_handle(const struct hmgr_table *t, uint32_t index, unsigned unique)
{
    return (D3DKMT_HANDLE)((unique << 30) | ((index + HMGR_INDEX_BASE) << 6) | t->instance);
}

void hmgr_init(struct hmgr_table *t, unsigned instance)
{
    /* hmgr_find_rcu() may read size and chunks meanwhile, with no lock and
     * no look at whether the process is up (a table set up again after
     * hmgr_destroy()): atomic stores, not a memset */
    atomic_store_explicit(&t->size, 0, memory_order_relaxed);
    for (unsigned i = 0; i < HMGR_MAX_CHUNKS; i++)
        atomic_store_explicit(&t->chunks[i], NULL, memory_order_relaxed);
    atomic_store_explicit(&t->live, 0, memory_order_relaxed);
    t->instance = instance & 0x3f;
    kmt_mutex_init(&t->free_lock);
    t->free_head = t->free_tail = NO_ENTRY;
    t->free_count = t->issued = 0;
}

void hmgr_destroy(struct hmgr_table *t)
{
    /* hmgr_lookup_rcu() reads a chunk with no lock and no reference: no
     * lookup may start on the chunks once the size says 0, and those under
     * way end within the grace period */
    atomic_store_explicit(&t->size, 0, memory_order_seq_cst);
    kmt_rcu_synchronize();
    for (unsigned i = 0; i < HMGR_MAX_CHUNKS; i++) {
        struct hmgr_entry *chunk = atomic_load(&t->chunks[i]);
        if (!chunk)
            break;
        free(chunk);
        atomic_store(&t->chunks[i], NULL);
    }
    atomic_store(&t->size, 0);
    kmt_mutex_destroy(&t->free_lock);
}

/* t->live changes under free_lock, which every change holds anyway: a
 * plain load and store, no second locked instruction. */
HMGR_INLINE void live_add(struct hmgr_table *t, int delta)
{
    unsigned n = atomic_load_explicit(&t->live, memory_order_relaxed);

    atomic_store_explicit(&t->live, n + (unsigned)delta, memory_order_relaxed);
}

HMGR_INLINE void free_list_append(struct hmgr_table *t, uint32_t index)
{
    hmgr_entry_at(t, index)->next_free = NO_ENTRY;
    if (t->free_tail == NO_ENTRY)
        t->free_head = index;
    else
        hmgr_entry_at(t, t->free_tail)->next_free = index;
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
        count = HMGR_MAX_ENTRIES - size;   /* index 2^24 - 1 stays unused */
    if (!count)
        return false;
    chunk = calloc(HMGR_CHUNK_SIZE, sizeof(*chunk));
    if (!chunk)
        return false;
    for (uint32_t i = 0; i < HMGR_CHUNK_SIZE; i++)
        atomic_init(&chunk[i].state, 1u << HMGR_ST_UNIQUE_SHIFT);
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

    kmt_mutex_lock(&t->free_lock);
    if (t->free_count <= HMGR_RESERVE && !grow(t) && !t->free_count) {
        kmt_mutex_unlock(&t->free_lock);
        WARN_(hmgr, "%s table: no handle left (%u live, at most %u; or out of memory)", table_name(t),
              atomic_load_explicit(&t->live, memory_order_relaxed), HMGR_MAX_ENTRIES);
        return 0;
    }
    index = t->free_head;
    e = hmgr_entry_at(t, index);
    t->free_head = e->next_free;
    if (t->free_head == NO_ENTRY)
        t->free_tail = NO_ENTRY;
    t->free_count--;
    e->next_free = ++t->issued;
    live_add(t, +1);
    kmt_mutex_unlock(&t->free_lock);

    st = hmgr_entry_lock(e);
    st = (st & HMGR_ST_UNIQUE_MASK) | HMGR_ST_USED;
    atomic_store_explicit(&e->obj, NULL, memory_order_relaxed);
    hmgr_entry_unlock(e, st);
    TRACE_(hmgr, "%s handle 0x%08x reserved", table_name(t), make_handle(t, index, hmgr_st_unique(st)));
    return make_handle(t, index, hmgr_st_unique(st));
}

void hmgr_publish(struct hmgr_table *t, D3DKMT_HANDLE h, struct kmt_object *obj)
{
    unsigned unique, st;
    struct hmgr_entry *e = hmgr_entry_of(t, h, &unique);

    if (!e)
        return;
    st = hmgr_entry_lock(e);
    if ((st & (HMGR_ST_USED | HMGR_ST_PUBLISHED)) != HMGR_ST_USED || hmgr_st_unique(st) != unique) {
        hmgr_entry_unlock(e, st);
        return;
    }
    atomic_store_explicit(&e->obj, obj, memory_order_relaxed);
    st = (st & ~HMGR_ST_TYPE_MASK) | HMGR_ST_PUBLISHED | ((obj->type & 0x3fu) << HMGR_ST_TYPE_SHIFT);
    hmgr_entry_unlock(e, st);
    TRACE_(hmgr, "%s handle 0x%08x issued: %s %p", table_name(t), h, type_name(obj->type), (void *)obj);
}

/* Turns a locked, used slot back into a free one and queues it. */
HMGR_INLINE void release_slot(struct hmgr_table *t, struct hmgr_entry *e, unsigned st, uint32_t index)
{
    unsigned unique = hmgr_st_unique(st) % 3 + 1;

    atomic_store_explicit(&e->obj, NULL, memory_order_relaxed);
    hmgr_entry_unlock(e, unique << HMGR_ST_UNIQUE_SHIFT);
    kmt_mutex_lock(&t->free_lock);
    free_list_append(t, index);
    live_add(t, -1);
    kmt_mutex_unlock(&t->free_lock);
}

void hmgr_cancel(struct hmgr_table *t, D3DKMT_HANDLE h)
{
    unsigned unique, st;
    uint32_t index;
    bool taken_back;
    struct hmgr_entry *e = hmgr_entry_of(t, h, &unique);

    if (!e)
        return;
    st = hmgr_entry_lock(e);
    if ((st & (HMGR_ST_USED | HMGR_ST_PUBLISHED)) != HMGR_ST_USED || hmgr_st_unique(st) != unique) {
        hmgr_entry_unlock(e, st);
        return;
    }
    /* free at the same generation: the value was never published */
    atomic_store_explicit(&e->obj, NULL, memory_order_relaxed);
    hmgr_entry_unlock(e, st & HMGR_ST_UNIQUE_MASK);
    index = hmgr_slot_of(h);
    kmt_mutex_lock(&t->free_lock);
    if ((taken_back = e->next_free == t->issued)) {
        t->issued--;
        e->next_free = t->free_head;
        t->free_head = index;
        if (t->free_tail == NO_ENTRY)
            t->free_tail = index;
        t->free_count++;
    } else {
        free_list_append(t, index);
    }
    live_add(t, -1);
    kmt_mutex_unlock(&t->free_lock);
    TRACE_(hmgr, "%s handle 0x%08x cancelled (never published)%s", table_name(t), h,
           taken_back ? ", the next one handed out" : ", a later one is out");
}

struct kmt_object *hmgr_remove(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type)
{
    struct kmt_object *obj;
    unsigned unique, st;
    struct hmgr_entry *e = hmgr_entry_of(t, h, &unique);

    if (!e) {
        hmgr_trace_refused(t, h, type, __func__);
        return NULL;
    }
    st = hmgr_entry_lock(e);
    if (!hmgr_st_matches(st, unique, type)) {
        hmgr_entry_unlock(e, st);
        hmgr_trace_refused(t, h, type, __func__);
        return NULL;
    }
    obj = atomic_load_explicit(&e->obj, memory_order_relaxed);
    release_slot(t, e, st, hmgr_slot_of(h));
    TRACE_(hmgr, "%s handle 0x%08x freed: %s %p", table_name(t), h, type_name(obj->type), (void *)obj);
    return obj;
}

bool hmgr_peek(struct hmgr_table *t, D3DKMT_HANDLE h, enum hmgr_type type,
               void (*read)(const struct kmt_object *obj, void *out), void *out)
{
    unsigned unique, st;
    struct hmgr_entry *e = hmgr_entry_of(t, h, &unique);
    bool found;

    if (!e) {
        hmgr_trace_refused(t, h, type, __func__);
        return false;
    }
    st = hmgr_entry_lock(e);
    if ((found = hmgr_st_matches(st, unique, type)))
        read(atomic_load_explicit(&e->obj, memory_order_relaxed), out);
    hmgr_entry_unlock(e, st);
    if (!found)
        hmgr_trace_refused(t, h, type, __func__);
    return found;
}

D3DKMT_HANDLE hmgr_next_value(struct hmgr_table *t)
{
    uint32_t size, index;
    unsigned unique = 1;

    kmt_mutex_lock(&t->free_lock);
    size = atomic_load_explicit(&t->size, memory_order_relaxed);
    index = t->free_head;
    if (index == NO_ENTRY)
        index = size < HMGR_MAX_ENTRIES ? size : NO_ENTRY;   /* a growth's first slot */
    else
        unique = hmgr_st_unique(atomic_load_explicit(&hmgr_entry_at(t, index)->state, memory_order_relaxed));
    kmt_mutex_unlock(&t->free_lock);
    return index == NO_ENTRY ? 0 : make_handle(t, index, unique);
}

unsigned hmgr_live_count(struct hmgr_table *t)
{
    return atomic_load_explicit(&t->live, memory_order_relaxed);
}
