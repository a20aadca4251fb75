/*
 * The recording miniport's bookkeeping: the object registry, the call log,
 * contract violations, fault injection and the blocking latch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <search.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record_internal.h"

pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

/* registry: every object the miniport made, by address */
static void *registry;
static struct rec_obj *all_objects;

/* the log */
static struct record_call **entries;
static unsigned entry_count, entry_cap;
static char **violations;
static unsigned violation_count, violation_cap;

/* steering */
static unsigned fail_countdown[RECORD_DDI_COUNT];
static NTSTATUS fail_status[RECORD_DDI_COUNT];
static unsigned null_countdown[RECORD_DDI_COUNT];
static UINT null_index[RECORD_DDI_COUNT];

/* the latch has its own lock: a stopped DDI must not hold rec_lock */
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t block_cond = PTHREAD_COND_INITIALIZER;
static bool block_armed[RECORD_DDI_COUNT];
static unsigned blocked;
static bool released;

static const char *const ddi_names[RECORD_DDI_COUNT] = {
    [RECORD_ENUM_PHYSICAL_DEVICES] = "KmtDdiEnumPhysicalDevices",
    [RECORD_ADD_DEVICE] = "DxgkDdiAddDevice",
    [RECORD_START_DEVICE] = "DxgkDdiStartDevice",
    [RECORD_STOP_DEVICE] = "DxgkDdiStopDevice",
    [RECORD_REMOVE_DEVICE] = "DxgkDdiRemoveDevice",
    [RECORD_UNLOAD] = "DxgkDdiUnload",
    [RECORD_QUERY_ADAPTER_INFO] = "DxgkDdiQueryAdapterInfo",
    [RECORD_CREATE_DEVICE] = "DxgkDdiCreateDevice",
    [RECORD_DESTROY_DEVICE] = "DxgkDdiDestroyDevice",
    [RECORD_CREATE_ALLOCATION] = "DxgkDdiCreateAllocation",
    [RECORD_DESTROY_ALLOCATION] = "DxgkDdiDestroyAllocation",
    [RECORD_OPEN_ALLOCATION] = "DxgkDdiOpenAllocation",
    [RECORD_CLOSE_ALLOCATION] = "DxgkDdiCloseAllocation",
    [RECORD_LOCK] = "DxgkDdiLock",
    [RECORD_UNLOCK] = "DxgkDdiUnlock",
    [RECORD_ESCAPE] = "DxgkDdiEscape",
};

const char *record_ddi_name(enum record_ddi ddi)
{
    return (unsigned)ddi < RECORD_DDI_COUNT ? ddi_names[ddi] : "?";
}

/* ---- registry ------------------------------------------------------------ */

static int compare_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

    return x < y ? -1 : x > y;
}

void *rec_obj_new(enum rec_kind kind, size_t size)
{
    struct rec_obj *obj = calloc(1, size);

    if (!obj)
        return NULL;
    if (!tsearch(obj, &registry, compare_address)) {
        free(obj);
        return NULL;
    }
    obj->kind = kind;
    obj->next_all = all_objects;
    all_objects = obj;
    return obj;
}

struct rec_obj *rec_obj_find(const void *handle, enum rec_kind kind)
{
    void **node;
    struct rec_obj *obj;

    if (!handle || !(node = tfind(handle, &registry, compare_address)))
        return NULL;
    obj = *node;
    return obj->kind == kind ? obj : NULL;
}

static void free_nothing(void *node)
{
    (void)node;
}

void rec_free_all(void)
{
    tdestroy(registry, free_nothing);
    registry = NULL;
    while (all_objects) {
        struct rec_obj *obj = all_objects;

        all_objects = obj->next_all;
        if (obj->kind == REC_ALLOCATION)
            free(((struct rec_allocation *)obj)->memory);
        if (obj->kind == REC_RESOURCE) {
            /* the state is shared by rewritten handles: free it with the last */
            struct rec_resource *r = (struct rec_resource *)obj;
            bool last = true;
            for (struct rec_obj *o = all_objects; o; o = o->next_all)
                if (o->kind == REC_RESOURCE && ((struct rec_resource *)o)->state == r->state)
                    last = false;
            if (last)
                free(r->state);
        }
        free(obj);
    }
}

struct record_live rec_count_live(void)
{
    struct record_live live = { 0 };

    for (struct rec_obj *o = all_objects; o; o = o->next_all) {
        if (o->dead)
            continue;
        switch (o->kind) {
        case REC_ADAPTER:    live.adapters++; break;
        case REC_DEVICE:     live.devices++; break;
        case REC_RESOURCE:   live.resources++; break;
        case REC_BINDING:    live.bindings++; break;
        case REC_ALLOCATION:
            live.allocations++;
            live.mappings += ((struct rec_allocation *)o)->mappings;
            break;
        }
    }
    return live;
}

unsigned rec_adapter_live_children(const struct rec_adapter *a)
{
    unsigned n = 0;

    for (struct rec_obj *o = all_objects; o; o = o->next_all) {
        if (o->dead)
            continue;
        switch (o->kind) {
        case REC_DEVICE:     n += ((struct rec_device *)o)->adapter == a; break;
        case REC_RESOURCE:   n += ((struct rec_resource *)o)->adapter == a; break;
        case REC_ALLOCATION: n += ((struct rec_allocation *)o)->adapter == a; break;
        case REC_BINDING:    n += ((struct rec_binding *)o)->device->adapter == a; break;
        case REC_ADAPTER:    break;
        }
    }
    return n;
}

void rec_device_live_children(const struct rec_device *d, unsigned *allocations, unsigned *bindings)
{
    *allocations = *bindings = 0;
    for (struct rec_obj *o = all_objects; o; o = o->next_all) {
        if (o->dead)
            continue;
        if (o->kind == REC_ALLOCATION && ((struct rec_allocation *)o)->creator == d)
            ++*allocations;
        else if (o->kind == REC_BINDING && ((struct rec_binding *)o)->device == d)
            ++*bindings;
    }
}

struct record_live record_live_objects(void)
{
    struct record_live live;

    pthread_mutex_lock(&rec_lock);
    live = rec_count_live();
    pthread_mutex_unlock(&rec_lock);
    return live;
}

/* ---- log and violations ------------------------------------------------------ */

unsigned char *rec_dup(const void *data, size_t size)
{
    unsigned char *copy;

    if (!data || !size || !(copy = malloc(size)))
        return NULL;
    memcpy(copy, data, size);
    return copy;
}

static bool grow(void *array, unsigned *cap, size_t elem)
{
    unsigned n = *cap ? *cap * 2 : 64;
    void *p = realloc(*(void **)array, n * elem);

    if (!p)
        return false;
    *(void **)array = p;
    *cap = n;
    return true;
}

struct record_call *rec_log_new(enum record_ddi ddi)
{
    static struct record_call scratch;    /* out of memory: keep the DDI working */
    struct record_call *call;

    if (entry_count == entry_cap && !grow(&entries, &entry_cap, sizeof(*entries)))
        goto fail;
    if (!(call = calloc(1, sizeof(*call))))
        goto fail;
    call->seq = entry_count;
    call->ddi = ddi;
    entries[entry_count++] = call;
    return call;
fail:
    memset(&scratch, 0, sizeof(scratch));
    scratch.ddi = ddi;
    return &scratch;
}

void rec_violation(const char *fmt, ...)
{
    char *msg;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (violation_count == violation_cap && !grow(&violations, &violation_cap, sizeof(*violations))) {
        free(msg);
        return;
    }
    violations[violation_count++] = msg;
}

unsigned record_log_count(void)
{
    unsigned n;

    pthread_mutex_lock(&rec_lock);
    n = entry_count;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

const struct record_call *record_log_get(unsigned index)
{
    const struct record_call *call = NULL;

    pthread_mutex_lock(&rec_lock);
    if (index < entry_count)
        call = entries[index];
    pthread_mutex_unlock(&rec_lock);
    return call;
}

unsigned record_log_find(enum record_ddi ddi, unsigned from)
{
    unsigned found = RECORD_NONE;

    pthread_mutex_lock(&rec_lock);
    for (unsigned i = from; i < entry_count; i++) {
        if (entries[i]->ddi == ddi) {
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&rec_lock);
    return found;
}

unsigned record_log_find_last(enum record_ddi ddi)
{
    unsigned found = RECORD_NONE;

    pthread_mutex_lock(&rec_lock);
    for (unsigned i = entry_count; i-- > 0;) {
        if (entries[i]->ddi == ddi) {
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&rec_lock);
    return found;
}

unsigned record_log_count_ddi(enum record_ddi ddi)
{
    unsigned n = 0;

    pthread_mutex_lock(&rec_lock);
    for (unsigned i = 0; i < entry_count; i++)
        n += entries[i]->ddi == ddi;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

static void free_call(struct record_call *call)
{
    for (UINT i = 0; call->allocs && i < call->num; i++)
        free(call->allocs[i].priv);
    free(call->allocs);
    free(call->priv);
    free(call->pages);
    free(call);
}

void record_log_clear(void)
{
    pthread_mutex_lock(&rec_lock);
    for (unsigned i = 0; i < entry_count; i++)
        free_call(entries[i]);
    entry_count = 0;
    pthread_mutex_unlock(&rec_lock);
}

#ifdef KMT_RECORD_PLUGIN
/* The plugin's log dies with it: nobody can read it after dlclose. */
__attribute__((destructor)) static void free_log_at_unload(void)
{
    record_log_clear();
    free(entries);
    for (unsigned i = 0; i < violation_count; i++)
        free(violations[i]);
    free(violations);
}
#endif

void record_log_dump(void)
{
    pthread_mutex_lock(&rec_lock);
    for (unsigned i = 0; i < entry_count; i++) {
        const struct record_call *c = entries[i];

        fprintf(stderr, "%4u %-26s status %#010x num %u flags %#x dev %p res %p->%p type %#x\n",
                c->seq, record_ddi_name(c->ddi), (unsigned)c->status, c->num, c->flags, c->device,
                c->resource_in, c->resource_out, c->type);
    }
    for (unsigned i = 0; i < violation_count; i++)
        fprintf(stderr, "violation: %s\n", violations[i]);
    pthread_mutex_unlock(&rec_lock);
}

unsigned record_violation_count(void)
{
    unsigned n;

    pthread_mutex_lock(&rec_lock);
    n = violation_count;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

const char *record_violation(unsigned index)
{
    const char *msg = NULL;

    pthread_mutex_lock(&rec_lock);
    if (index < violation_count)
        msg = violations[index];
    pthread_mutex_unlock(&rec_lock);
    return msg;
}

/* ---- fault injection ------------------------------------------------------------ */

void record_fail_call(enum record_ddi ddi, unsigned nth, NTSTATUS status)
{
    if ((unsigned)ddi >= RECORD_DDI_COUNT)
        return;
    pthread_mutex_lock(&rec_lock);
    fail_countdown[ddi] = nth;
    fail_status[ddi] = status;
    pthread_mutex_unlock(&rec_lock);
}

void record_null_handle(enum record_ddi ddi, unsigned nth, UINT index)
{
    if ((unsigned)ddi >= RECORD_DDI_COUNT)
        return;
    pthread_mutex_lock(&rec_lock);
    null_countdown[ddi] = nth;
    null_index[ddi] = index;
    pthread_mutex_unlock(&rec_lock);
}

NTSTATUS rec_injected_failure(enum record_ddi ddi)
{
    if (fail_countdown[ddi] && !--fail_countdown[ddi])
        return fail_status[ddi];
    return STATUS_SUCCESS;
}

UINT rec_injected_null(enum record_ddi ddi)
{
    if (null_countdown[ddi] && !--null_countdown[ddi])
        return null_index[ddi];
    return RECORD_NONE;
}

/* ---- blocking latch ----------------------------------------------------------- */

void record_block(enum record_ddi ddi)
{
    if ((unsigned)ddi >= RECORD_DDI_COUNT)
        return;
    pthread_mutex_lock(&block_lock);
    block_armed[ddi] = true;
    released = false;
    pthread_mutex_unlock(&block_lock);
}

void rec_maybe_block(enum record_ddi ddi)
{
    pthread_mutex_lock(&block_lock);
    if (block_armed[ddi]) {
        block_armed[ddi] = false;
        blocked++;
        pthread_cond_broadcast(&block_cond);
        while (!released)
            pthread_cond_wait(&block_cond, &block_lock);
        blocked--;
    }
    pthread_mutex_unlock(&block_lock);
}

bool record_wait_blocked(unsigned timeout_ms)
{
    struct timespec deadline;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&block_lock);
    while (!blocked)
        if (pthread_cond_timedwait(&block_cond, &block_lock, &deadline) == ETIMEDOUT)
            break;
    ok = blocked != 0;
    pthread_mutex_unlock(&block_lock);
    return ok;
}

void record_unblock(void)
{
    pthread_mutex_lock(&block_lock);
    released = true;
    for (unsigned i = 0; i < RECORD_DDI_COUNT; i++)
        block_armed[i] = false;
    pthread_cond_broadcast(&block_cond);
    pthread_mutex_unlock(&block_lock);
}
