/*
 * Synchronization objects and CPU waits.
 *
 * Mutexes, semaphores, legacy fences and CPU notifications are adapter-level
 * objects: they outlive the device they were created with (dxgkrnl keeps
 * them on the adapter).  Monitored fences belong to their device and die in
 * its cascade, first of all its objects.
 *
 * A monitored fence's value lives in a fence page the process maps twice:
 * read-only for the program (FenceValueCPUVirtualAddress) and writable for
 * the core and, through its GPU VA, the miniport's engine.
 *
 * CPU waits register a struct dxgk_cpu_wait on every object they wait on;
 * whoever changes an object re-evaluates its waiters, so no wake-up is lost:
 * a waiter registers first and checks the values second.
 */
#ifndef KMTSHIM_SYNC_H
#define KMTSHIM_SYNC_H

#include "dxgkrnl.h"

struct dxgk_context;
struct dxgk_shared_fence;

struct dxgk_syncobj {
    struct kmt_object obj;
    struct list entry;                   /* device->syncobjs or process syncobjs */
    struct list fence_entry;             /* adapter->fences (monitored fences) */
    D3DKMT_HANDLE handle;
    D3DKMT_HANDLE global_handle;         /* Flags.Shared without NT sharing */
    uint64_t broker_id;                  /* Flags.Shared: the broker reference, 0 when none */
    uint64_t broker_connection;          /* the connection of that reference (share.h) */
    bool v2;                             /* made by CreateSynchronizationObject2 or opened */
    /* The page of a Shared monitored fence, or of a Shared mutex,
     * semaphore or legacy fence, whose state then lives there instead of
     * below (syncobj_shared_state.h); NULL when not shared. */
    struct dxgk_shared_fence *shared_fence;
    uint32_t shared_me;                  /* a shared mutex: the broker's id of this process */
    D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type;
    D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags;
    struct dxgk_adapter *adapter;        /* referenced */
    struct dxgk_device *device;          /* referenced for monitored fences, else NULL */
    pthread_mutex_t lock;
    struct list waiters;                 /* struct dxgk_wait_link, under lock */
    bool destroyed;                      /* under lock */
    union {                              /* under lock, except the fence value */
        /* semaphore.max stays here for a shared semaphore, the rest goes
         * to the page; mutex.owner stays: the context of this process
         * that owns it */
        struct {
            struct dxgk_context *owner;  /* not referenced: cleared at context death */
            bool owned;
        } mutex;
        struct {
            UINT count;
            UINT max;
        } semaphore;
        struct {
            UINT64 value;
        } fence;
        struct {
            HANDLE event;
        } cpu;
        struct {
            _Atomic UINT64 *value;       /* writable view */
            void *cpu_va;                /* read-only view, given to the program */
            D3DGPU_VIRTUAL_ADDRESS gpu_va;
            unsigned slot;
            HANDLE driver_fence;         /* KmtDdiCreateFence's, NULL: memory only */
        } monitored;
    };
};

/* One registration of a CPU wait on one object. */
struct dxgk_wait_link {
    struct list entry;                   /* syncobj->waiters */
    struct dxgk_cpu_wait *wait;
    struct dxgk_syncobj *obj;
};

enum dxgk_wait_state {
    DXGK_WAIT_PENDING = 0,
    DXGK_WAIT_SATISFIED = 1,
    DXGK_WAIT_ABANDONED = 2,             /* an object was destroyed */
};

struct dxgk_cpu_wait {
    UINT count;
    bool any;
    struct dxgk_syncobj *objs[D3DDDI_MAX_OBJECT_WAITED_ON];  /* referenced */
    UINT64 values[D3DDDI_MAX_OBJECT_WAITED_ON];
    struct dxgk_wait_link links[D3DDDI_MAX_OBJECT_WAITED_ON];
    HANDLE async_event;                  /* NULL: a thread sleeps on cond */
    struct list async_entry;             /* dxgk_process.async_waits */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    /* A blocking wait on shared fences sleeps on this word and their wake
     * words instead of cond; a completion bumps it (under mutex). */
    bool sleeps_on_words;
    /* Waits on one shared fence alone: sleeps on its wake word only, and a
     * completion kicks that word instead of `word` (read-only once linked). */
    struct dxgk_shared_fence *word_fence;
    _Atomic uint32_t word;
    atomic_bool word_sleeping;           /* in futex_waitv on it: a completion wakes it */
    int state;                           /* enum dxgk_wait_state, under mutex */
    /* Async waits: the creating thread still links and checks it, so
     * whoever finishes it meanwhile leaves the freeing to the creator. */
    bool creating;                       /* under mutex */
    bool finished;                       /* under mutex */
};

/* syncobj.c */
NTSTATUS dxgk_create_syncobj(D3DKMT_HANDLE hDevice, const D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info,
                             bool v1, D3DKMT_HANDLE *out, D3DDDI_SYNCHRONIZATIONOBJECTINFO2 *info_out);
NTSTATUS dxgk_destroy_syncobj(D3DKMT_HANDLE h);
/* How a monitored fence's value gets memory (syncobj_share.c opens
 * shared ones with it too). */
struct dxgk_fence_init {
    UINT64 initial;
    bool no_gpu_access;
    bool shared;                         /* a page of its own, not a pool slot */
    int page_fd;                         /* shared: map this page; -1: make one */
    int driver_fd;                       /* KmtDdiImportFence's fd, or -1 */
};
/* A new object of the adapter, before it has a handle (a monitored fence
 * is typed D3DDDI_FENCE until dxgk_syncobj_init_monitored succeeds). */
struct dxgk_syncobj *dxgk_syncobj_alloc(struct dxgk_adapter *adapter, D3DDDI_SYNCHRONIZATIONOBJECT_TYPE type,
                                        D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS flags);
/* *new_page_fd: the page made for a new shared fence (the caller closes it). */
NTSTATUS dxgk_syncobj_init_monitored(struct dxgk_syncobj *obj, const struct dxgk_fence_init *init,
                                     int *new_page_fd);
/* Gives a new object its local handle and links it (obj->device, if set,
 * must be referenced); on failure the caller aborts it. */
NTSTATUS dxgk_syncobj_publish(struct dxgk_syncobj *obj, D3DKMT_HANDLE *out);
void dxgk_syncobj_abort(struct dxgk_syncobj *obj);
/* Looks up a live sync object of the adapter; referenced. */
struct dxgk_syncobj *dxgk_syncobj_lookup(D3DKMT_HANDLE h, struct dxgk_adapter *adapter);
void dxgk_syncobj_put(struct dxgk_syncobj *obj);
/* A monitored fence's hDriverFence (DxgkCbGetHandleData), or NULL. */
HANDLE dxgk_syncobj_driver_fence(D3DKMT_HANDLE h);
/* Destroys the device's monitored fences (DestroyDevice cascade). */
void dxgk_device_destroy_syncobjs(struct dxgk_device *device);
void dxgk_process_destroy_syncobjs(void);

/* Signals, as the scheduler (or a CPU signal) performs them. */
void dxgk_syncobj_signal(struct dxgk_syncobj *obj, UINT64 value, bool allow_rewind);
/* Tries to take every object of a GPU wait; all or none. */
bool dxgk_syncobj_try_wait(struct dxgk_syncobj **objs, const UINT64 *values, UINT count,
                           struct dxgk_context *ctx);
/* The monitored fences' values may have changed behind our back (the GPU
 * wrote them): wake whoever they satisfy. */
void dxgk_fences_changed(struct dxgk_adapter *adapter);
/* TDR rule: a faulted device's fences jump to UINT64_MAX unless
 * NoSignalMaxValueOnTdr, releasing every waiter. */
void dxgk_device_fences_to_max(struct dxgk_device *device);
/* A context dies: release the mutexes it owns. */
void dxgk_syncobj_context_gone(struct dxgk_context *ctx);

static inline UINT64 dxgk_fence_value(const struct dxgk_syncobj *obj)
{
    return atomic_load_explicit(obj->monitored.value, memory_order_acquire);
}

/* wait.c */
NTSTATUS dxgk_signal_from_cpu(D3DKMT_HANDLE hDevice, const D3DKMT_HANDLE *handles,
                              const UINT64 *values, UINT count, D3DDDICB_SIGNALFLAGS flags);
/* timeout_ms < 0: infinite.  STATUS_TIMEOUT, STATUS_ABANDONED (an object
 * was destroyed during the wait), or STATUS_SUCCESS. */
NTSTATUS dxgk_wait_from_cpu(D3DKMT_HANDLE hDevice, const D3DKMT_HANDLE *handles,
                            const UINT64 *values, UINT count, bool any, HANDLE async_event,
                            int timeout_ms);
/* Re-evaluates an object's CPU waiters; called with obj->lock held. */
void dxgk_wake_waiters_locked(struct dxgk_syncobj *obj, bool abandoned);
/* The object's broker link ended (shared_fence_watch.c): its async waits
 * end, their events set, as if it were destroyed; blocking waits look at
 * the link themselves.  obj->lock held. */
void dxgk_end_async_waits_locked(struct dxgk_syncobj *obj);
void dxgk_process_cancel_async_waits(void);
/* Frees async waits that completed under an object lock; call with no
 * sync-object lock held. */
void dxgk_reap_async_waits(void);
/* In a fork() child: no async wait and no reaping pending (fork.c). */
void dxgk_wait_forget(void);

/* fence_pool.c: 8-byte slots mapped read-only and read-write */
NTSTATUS dxgk_fence_slot_alloc(_Atomic UINT64 **rw, void **ro, unsigned *slot);
void dxgk_fence_slot_free(unsigned slot);
void dxgk_fence_pool_destroy(void);
/* In a fork() child: the pool starts empty (fork.c). */
void dxgk_fence_pool_forget(void);

/* event.c: Win32 events under Wine, eventfds natively */
NTSTATUS dxgk_event_validate(HANDLE event);
void dxgk_event_set(HANDLE event);
/* No host replaced the events: each is an eventfd a wait may poll. */
bool dxgk_events_are_fds(void);

#endif /* KMTSHIM_SYNC_H */
