/*
 * kmtshim.so: Win32 events for the core.
 *
 * The core sets events (CPU notifications, async CPU waits, EnqueueCpuEvent)
 * from whatever thread reaches the point: the caller's, the scheduler's,
 * the engine's.  None of those can make a Win32 call here, and most are not
 * Wine threads at all.  So the callbacks this file gives the core
 * (KmtSetEventCallbacks) only queue the request; the PE half delivers it
 * with SetEvent(): on the calling thread right after the call, when the
 * set happened inside a D3DKMT call (a CPU signal satisfying an async
 * wait); else on its pump thread (KMT_UNIX_EVENTS_WAIT, then _TAKE), which
 * only a set on one of the core's own threads wakes.
 *
 * Every handle the core holds is a duplicate the PE half made for it
 * (pe/events.c), registered here by the unix entry of the call that
 * carries it: `validate` accepts registered handles only.  A registration
 * ends when the core is done with the handle: a one-shot event (async wait,
 * EnqueueCpuEvent) when it is set, a CPU notification's when its object is
 * destroyed, any when its call failed.  The PE half then closes the
 * duplicate, after delivering every set queued before (one FIFO, one
 * deliverer at a time on the PE side).
 *
 * One node per registration serves as its queue entry too, so a set never
 * allocates (it runs under core locks).  Sets of a CPU notification that
 * are still queued merge into one: for a Win32 event, two SetEvent()s
 * nobody waited between are one.
 *
 * Locking: `lock` is a leaf (nothing of the core is called under it).  The
 * pump sleeps on a futex, never holding a lock, so a pump thread Wine
 * kills at process exit leaves nothing locked behind.
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "base/kmt_lock.h"
#include "base/kmt_debug.h"
#include "base/kmt_list.h"
#include "unixlib.h"
#include "entries.h"
#include "events.h"

#define BUCKETS 64

struct event_node {
    struct list hash_entry;              /* buckets[], while registered */
    struct list queue_entry;             /* queue, while ops are pending */
    HANDLE event;
    D3DKMT_HANDLE syncobj;               /* persistent: its CPU notification */
    bool persistent;                     /* set many times (CPU notification) */
    bool registered, queued;
    bool busy;                           /* the call that registered it still runs */
    uint32_t ops;                        /* KMT_EVENT_SET | KMT_EVENT_CLOSE, queued */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct list buckets[BUCKETS];
static struct list queue = LIST_INIT(queue);
static unsigned persistent_count;        /* under lock: DestroySynchronizationObject looks only then */

__thread bool kmt_events_caller_delivers;

static _Atomic uint32_t pending;         /* nodes in the queue; the PE half polls it */
static _Atomic uint32_t seq;             /* the futex word: bumped by every queue and stop */
static _Atomic uint32_t sleepers;
static _Atomic bool stopped;

static struct list *bucket(HANDLE event)
{
    return &buckets[((uintptr_t)event >> 2) % BUCKETS];
}

static struct event_node *lookup_locked(HANDLE event)
{
    struct event_node *node;

    LIST_FOR_EACH_ENTRY(node, bucket(event), struct event_node, hash_entry)
        if (node->event == event)
            return node;
    return NULL;
}

static void unregister_locked(struct event_node *node)
{
    list_remove(&node->hash_entry);
    node->registered = false;
    if (node->persistent)
        persistent_count--;
}

static void enqueue_locked(struct event_node *node, uint32_t ops)
{
    node->ops |= ops;
    if (!node->queued) {
        node->queued = true;
        list_add_tail(&queue, &node->queue_entry);
        atomic_fetch_add(&pending, 1);
    }
}

static void wake_pump(void)
{
    atomic_fetch_add(&seq, 1);
    if (atomic_load(&sleepers))
        kmt_futex_wake(&seq, INT_MAX);
}

/* ---- the core's callbacks ------------------------------------------------------ */

static NTSTATUS APIENTRY event_validate(HANDLE event)
{
    bool known;

    pthread_mutex_lock(&lock);
    known = lookup_locked(event) != NULL;
    pthread_mutex_unlock(&lock);
    if (!known)
        TRACE_(kmtshim, "event %p: not a handle kmtshim.dll registered\n", event);
    return known ? STATUS_SUCCESS : STATUS_INVALID_HANDLE;
}

static void APIENTRY event_set(HANDLE event)
{
    struct event_node *node;

    pthread_mutex_lock(&lock);
    if (!(node = lookup_locked(event))) {
        pthread_mutex_unlock(&lock);
        WARN_(kmtshim, "event %p is not registered: not set\n", event);
        return;
    }
    if (node->persistent) {
        enqueue_locked(node, KMT_EVENT_SET);
    } else {
        unregister_locked(node);             /* set once: the core is done with it */
        enqueue_locked(node, KMT_EVENT_SET | KMT_EVENT_CLOSE);
    }
    pthread_mutex_unlock(&lock);
    TRACE_(kmtshim, "event %p queued%s\n", event, kmt_events_caller_delivers ? " for the caller" : "");
    if (!kmt_events_caller_delivers)
        wake_pump();                         /* a thread of the core's: the pump delivers */
}

/* Under Wine an "event" is a Win32 event handle, never an eventfd. */
__attribute__((constructor)) static void install_event_callbacks(void)
{
    for (unsigned i = 0; i < BUCKETS; i++)
        list_init(&buckets[i]);
    KmtSetEventCallbacks(event_validate, event_set);
}

/* ---- registrations, by the calls that carry an event -------------------------------- */

/* Registers the call's event (if any) before the core can see it. */
static NTSTATUS event_begin(struct kmt_event_params *p, bool persistent, struct event_node **out)
{
    HANDLE event = (HANDLE)(uintptr_t)p->event;
    struct event_node *node;

    *out = NULL;
    p->owned = 0;
    if (!event)
        return STATUS_SUCCESS;
    if (!(node = calloc(1, sizeof(*node))))
        return STATUS_NO_MEMORY;
    node->event = event;
    node->persistent = persistent;
    node->busy = true;
    list_init(&node->queue_entry);
    pthread_mutex_lock(&lock);
    if (lookup_locked(event)) {
        /* the PE half hands each call a fresh duplicate: never happens */
        pthread_mutex_unlock(&lock);
        free(node);
        ERR_(kmtshim, "event %p is registered twice\n", event);
        return STATUS_INVALID_HANDLE;
    }
    list_add_tail(bucket(event), &node->hash_entry);
    node->registered = true;
    if (persistent)
        persistent_count++;
    pthread_mutex_unlock(&lock);
    *out = node;
    return STATUS_SUCCESS;
}

/* After the call: a failed call never handed the event to the core, so
 * the PE half gets it back at once (owned 0), unless it was queued
 * meanwhile (then it is closed through the queue).  An event set during
 * the call may even have been delivered already: its node waited for us. */
static void event_end(struct kmt_event_params *p, struct event_node *node, NTSTATUS status)
{
    if (!node)
        return;
    pthread_mutex_lock(&lock);
    node->busy = false;
    p->owned = 1;
    if (status && node->registered) {
        unregister_locked(node);
        if (node->queued) {
            enqueue_locked(node, KMT_EVENT_CLOSE);
        } else {
            free(node);
            p->owned = 0;
        }
    } else if (!node->registered && !node->queued) {
        free(node);
    }
    pthread_mutex_unlock(&lock);
    TRACE_(kmtshim, "event %#llx: %s\n", (unsigned long long)p->event,
           p->owned ? "kept by kmtshim" : "given back");
}

/* A CPU notification was destroyed: its event is released after the sets
 * already queued (the core sets none after the destroy returned). */
static void event_unbind_syncobj(D3DKMT_HANDLE syncobj)
{
    bool queued = false;

    pthread_mutex_lock(&lock);
    for (unsigned i = 0; persistent_count && i < BUCKETS; i++) {
        struct event_node *node, *next;

        LIST_FOR_EACH_ENTRY_SAFE(node, next, &buckets[i], struct event_node, hash_entry) {
            if (!node->persistent || node->syncobj != syncobj)
                continue;
            unregister_locked(node);
            enqueue_locked(node, KMT_EVENT_CLOSE);
            queued = true;
        }
    }
    pthread_mutex_unlock(&lock);
    if (queued)
        TRACE_(kmtshim, "sync object %#x: its event is released\n", syncobj);
}

NTSTATUS unix_CreateSynchronizationObject2(void *args)
{
    struct kmt_event_params *p = args;
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *desc;
    struct event_node *node;
    NTSTATUS status;

    if (!p)
        return STATUS_INVALID_PARAMETER;
    desc = (D3DKMT_CREATESYNCHRONIZATIONOBJECT2 *)(uintptr_t)p->desc;
    if ((status = event_begin(p, true, &node)))
        return status;
    status = KMT_EVENTS_CALL(D3DKMTCreateSynchronizationObject2(desc));
    if (!status && node) {
        pthread_mutex_lock(&lock);
        node->syncobj = desc->hSyncObject;   /* desc was valid: the call succeeded */
        pthread_mutex_unlock(&lock);
    }
    event_end(p, node, status);
    return status;
}

/* The one-shot events: set once by the core, then released. */
#define ONESHOT_ENTRY(name, type)                                           \
    NTSTATUS unix_##name(void *args)                                        \
    {                                                                       \
        struct kmt_event_params *p = args;                    \
        struct event_node *node;                                            \
        NTSTATUS status;                                                    \
                                                                            \
        if (!p)                                                             \
            return STATUS_INVALID_PARAMETER;                                \
        if ((status = event_begin(p, false, &node)))                        \
            return status;                                                  \
        status = KMT_EVENTS_CALL(D3DKMT##name((type *)(uintptr_t)p->desc)); \
        event_end(p, node, status);                                         \
        return status;                                                      \
    }

ONESHOT_ENTRY(WaitForSynchronizationObjectFromCpu, const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU)
ONESHOT_ENTRY(SignalSynchronizationObject2, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2)
ONESHOT_ENTRY(SignalSynchronizationObjectFromGpu2, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2)

/* A plain call for the PE half (struct kmt_desc_params); the handle is
 * captured first, so the event released is the destroyed object's. */
NTSTATUS unix_DestroySynchronizationObject(void *args)
{
    const struct kmt_desc_params *p = args;
    const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *desc;
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT k;
    NTSTATUS status;

    if (!p)
        return STATUS_INVALID_PARAMETER;
    desc = (const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT *)(uintptr_t)p->desc;
    if (!kmt_wine_ptr_ok(desc, sizeof(*desc)))
        return D3DKMTDestroySynchronizationObject(desc);    /* the thunk answers */
    k = *desc;
    status = KMT_EVENTS_CALL(D3DKMTDestroySynchronizationObject(&k));
    if (!status)
        event_unbind_syncobj(k.hSyncObject);
    return status;
}

/* ---- the PE half's pump --------------------------------------------------------- */

NTSTATUS unix_events_init(void *args)
{
    struct kmt_events_init_params *p = args;

    if (!p)
        return STATUS_INVALID_PARAMETER;
    p->pending = (uint64_t)(uintptr_t)&pending;
    return STATUS_SUCCESS;
}

/* Sleeps until something is queued or the pump is stopped.  A waker bumps
 * `seq` after queueing and then looks at `sleepers`; a sleeper counts
 * itself before its last look at the queue: one of them sees the other. */
NTSTATUS unix_events_wait(void *args)
{
    if (!args)
        return STATUS_INVALID_PARAMETER;
    for (;;) {
        uint32_t s = atomic_load(&seq);

        if (atomic_load(&stopped))
            return KMT_STATUS_EVENTS_STOPPED;
        if (atomic_load(&pending))
            return STATUS_SUCCESS;
        atomic_fetch_add(&sleepers, 1);
        if (!atomic_load(&pending) && !atomic_load(&stopped))
            kmt_futex_wait(&seq, s);
        atomic_fetch_sub(&sleepers, 1);
    }
}

NTSTATUS unix_events_take(void *args)
{
    struct kmt_events_take_params *p = args;

    if (!p)
        return STATUS_INVALID_PARAMETER;
    p->count = 0;
    pthread_mutex_lock(&lock);
    while (p->count < KMT_EVENTS_BATCH && !list_empty(&queue)) {
        struct event_node *node = LIST_ENTRY(queue.next, struct event_node, queue_entry);
        struct kmt_event_op *op = &p->ops[p->count++];

        list_remove(&node->queue_entry);
        atomic_fetch_sub(&pending, 1);
        op->event = (uint64_t)(uintptr_t)node->event;
        op->ops = node->ops;
        op->pad = 0;
        node->queued = false;
        node->ops = 0;
        if (!node->registered && !node->busy)
            free(node);                      /* the PE half closes it now */
    }
    pthread_mutex_unlock(&lock);
    return STATUS_SUCCESS;
}

/* DLL detach / process exit: the pump returns from its wait and ends.
 * Lock-free: at process exit Wine may have killed a thread anywhere. */
NTSTATUS unix_events_stop(void *args)
{
    if (!args)
        return STATUS_INVALID_PARAMETER;
    atomic_store(&stopped, true);
    atomic_fetch_add(&seq, 1);
    kmt_futex_wake(&seq, INT_MAX);
    return STATUS_SUCCESS;
}
