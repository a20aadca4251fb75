/*
 * Keyed mutexes: handles, lifetimes and sharing (keyed_mutex.h).
 *
 * Every keyed mutex is a broker object of kind KMT_BROKER_KEYED_MUTEX:
 * fds[0] is the memfd of its shared page (keyed_mutex_page.h), with the
 * holder word at offset 0, and the blob says how big the page is and holds
 * the creator's runtime data.  It gets a global handle unless it was made
 * with NtSecuritySharing.  Each local handle, in any process, is its own
 * object with its own mapping and its own broker reference; the broker
 * frees the object (and invalidates the global handle) when the last
 * reference goes, including when its holders' processes die.
 *
 * Ownership belongs to a handle: the page's word names the process and
 * the handle of that process that acquired it.  Destroying that handle
 * while it holds the mutex abandons the mutex, as the broker does when the
 * owner's process dies.
 *
 * Acquire and release find the object with hmgr_lookup_rcu(), inside an
 * RCU read-side section (base/kmt_rcu.h): no reference, no locked
 * instruction.  Their uncontended case is inline in the thunks
 * (keyed_mutex_fast.h), under the same rules.  DestroyKeyedMutex therefore waits for a grace period
 * (kmt_rcu_synchronize) after it removes the handle and before it drops
 * the table's reference: no section that found the object is still
 * running when the page is unmapped and the object freed.  An acquire that
 * must sleep takes a reference first and leaves the section.  Process
 * teardown destroys every handle the same way, and hmgr_destroy() waits
 * for a grace period before it frees the table's chunks.
 */
#define _GNU_SOURCE                      /* memfd_create, file seals */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keyed_mutex.h"
#include "keyed_mutex_fast.h"
#include "share.h"
#include "base/kmt_debug.h"
#include "base/kmt_list.h"
#include "base/kmt_lock.h"
#include "base/kmt_rcu.h"
#include "base/kmt_time.h"

#if defined(__SANITIZE_THREAD__)
char dxgk_km_tsan_sync[64];
#endif

#define BLOB_MAGIC 0x4b4d4258u           /* "XBMK" */
#define BLOB_NT_SHARING 0x1u

/* The broker blob: this header, then runtime_size bytes of runtime data. */
struct km_blob {
    uint32_t magic;
    uint32_t flags;                      /* BLOB_* */
    uint32_t runtime_size;               /* also the page's data capacity */
    uint32_t page_size;
};

static void note_inode(struct dxgk_keyed_mutex *km, int fd)
{
    struct stat st;

    if (!fstat(fd, &st))
        km->inode = st.st_ino;
}

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list live_mutexes = LIST_INIT(live_mutexes);

/* The handle is going away: if it holds the mutex, abandon it (once: the
 * page's compare-and-swap decides). */
static void abandon_if_held(struct dxgk_keyed_mutex *km)
{
    if (km->handle && dxgk_km_page_abandon(km->page, km->me, km->handle))
        TRACE_(dxgk, "keyed mutex %#x destroyed while held: abandoned\n", km->handle);
}

static void keyed_mutex_release(struct kmt_object *obj)
{
    struct dxgk_keyed_mutex *km = (struct dxgk_keyed_mutex *)obj;

    /* a published object comes here from dxgk_destroy_keyed_mutex(),
     * after its grace period: no lookup still uses it */
    if (km->page) {
        /* an acquire on this handle that raced with its destroy finished
         * before now: it holds the mutex */
        abandon_if_held(km);
        munmap(km->page, km->map_size);
    }
    /* a reference of an ended connection went with it */
    if (km->broker_id && !dxgk_share_lost(km->connection)) {
        NTSTATUS status = kmt_broker_release(km->broker_id);

        if (status)
            WARN_(dxgk, "keyed mutex %#x: broker release: %s\n", km->handle,
                  kmt_debugstr_status(status));
    }
    dxgk_count_object(-1);
    free(km);
}

static struct dxgk_keyed_mutex *keyed_mutex_new(void)
{
    struct dxgk_keyed_mutex *km = calloc(1, sizeof(*km));

    if (!km)
        return NULL;
    kmt_rcu_init();                      /* before any acquire or release looks it up */
    kmt_object_init(&km->obj, HMGR_TYPE_KEYEDMUTEX, keyed_mutex_release);
    list_init(&km->entry);
    dxgk_count_object(1);
    return km;
}

static struct dxgk_keyed_mutex *keyed_mutex_lookup(D3DKMT_HANDLE h)
{
    return (struct dxgk_keyed_mutex *)hmgr_lookup(&dxgk_process.handles, h, HMGR_TYPE_KEYEDMUTEX);
}

/* Inside kmt_rcu_read_lock(): valid until kmt_rcu_read_unlock().  Traces a
 * refusal (dxgk_keyed_mutex_find, the thunks' inline path, does not). */
static inline __attribute__((always_inline)) struct dxgk_keyed_mutex *keyed_mutex_find(D3DKMT_HANDLE h)
{
    return (struct dxgk_keyed_mutex *)hmgr_lookup_rcu(&dxgk_process.handles, h, HMGR_TYPE_KEYEDMUTEX);
}

static void keyed_mutex_put(struct dxgk_keyed_mutex *km)
{
    kmt_object_put(&km->obj);
}

/* Reserves a handle, then publishes km under it and writes it to *out. */
static NTSTATUS keyed_mutex_publish(struct dxgk_keyed_mutex *km, D3DKMT_HANDLE *out)
{
    D3DKMT_HANDLE h = hmgr_alloc(&dxgk_process.handles);

    if (!h)
        return STATUS_NO_MEMORY;
    km->handle = h;
    *out = h;
    pthread_mutex_lock(&live_lock);
    list_add_tail(&live_mutexes, &km->entry);
    pthread_mutex_unlock(&live_lock);
    hmgr_publish(&dxgk_process.handles, h, &km->obj);
    return STATUS_SUCCESS;
}

/* The client id the holder word names this process by: km->connection's. */
static NTSTATUS client_id(struct dxgk_keyed_mutex *km)
{
    return dxgk_share_holder_id(km->connection, &km->me, "keyed mutex");
}

NTSTATUS dxgk_create_keyed_mutex(UINT64 initial_key, const void *runtime, UINT runtime_size,
                                 bool nt_sharing, D3DKMT_HANDLE *out, D3DKMT_HANDLE *global)
{
    struct kmt_broker_create c = { .kind = KMT_BROKER_KEYED_MUTEX, .global = !nt_sharing,
                                   .holder_offset = DXGK_KM_HOLDER_OFFSET };
    struct dxgk_keyed_mutex *km;
    struct km_blob *blob = NULL;
    D3DKMT_HANDLE global_handle = 0;
    NTSTATUS status;
    int fd = -1;

    if (runtime_size > DXGK_KEYED_MUTEX_MAX_RUNTIME)
        return STATUS_INVALID_PARAMETER;
    if (!(km = keyed_mutex_new()))
        return STATUS_NO_MEMORY;
    km->runtime_size = runtime_size;
    km->nt_shareable = nt_sharing;
    km->map_size = dxgk_km_page_size(runtime_size);
    status = STATUS_NO_MEMORY;
    if (!(blob = malloc(sizeof(*blob) + runtime_size)))
        goto fail;
    *blob = (struct km_blob){ BLOB_MAGIC, nt_sharing ? BLOB_NT_SHARING : 0, runtime_size,
                              (uint32_t)km->map_size };
    if (runtime_size)
        memcpy(blob + 1, runtime, runtime_size);
    status = STATUS_INSUFFICIENT_RESOURCES;
    if ((fd = memfd_create("kmtshim-keyed-mutex", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
        goto fail;
    if (ftruncate(fd, (off_t)km->map_size))
        goto fail;
    /* no process can shrink it under the others' mappings */
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    note_inode(km, fd);
    km->page = mmap(NULL, km->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (km->page == MAP_FAILED) {
        km->page = NULL;
        status = STATUS_NO_MEMORY;
        goto fail;
    }
    dxgk_km_page_init(km->page, initial_key, runtime_size);

    c.blob = blob;
    c.blob_size = sizeof(*blob) + runtime_size;
    c.fds = &fd;
    c.fd_count = 1;
    status = kmt_broker_create(&c, &km->broker_id, &global_handle);
    km->connection = kmt_broker_call_connection();
    if (status || (status = client_id(km)) || (status = keyed_mutex_publish(km, out)))
        goto fail;
    close(fd);
    free(blob);
    *global = nt_sharing ? 0 : global_handle;
    TRACE_(dxgk, "keyed mutex %#x, global %#x, key %#llx, %u bytes of runtime data\n", *out,
           *global, (unsigned long long)initial_key, runtime_size);
    return STATUS_SUCCESS;

fail:
    if (fd >= 0)
        close(fd);
    free(blob);
    keyed_mutex_put(km);                 /* unmaps, drops the broker reference */
    return status;
}

/* A broker object's blob and page, checked: what a keyed mutex needs. */
static NTSTATUS check_object(const struct kmt_broker_object *obj, const struct km_blob **blob)
{
    const struct km_blob *b = obj->blob;
    struct stat st;

    if (obj->kind != KMT_BROKER_KEYED_MUTEX)
        return STATUS_OBJECT_TYPE_MISMATCH;
    if (obj->blob_size < sizeof(*b) || b->magic != BLOB_MAGIC ||
        b->runtime_size > DXGK_KEYED_MUTEX_MAX_RUNTIME ||
        obj->blob_size != sizeof(*b) + b->runtime_size ||
        b->page_size != dxgk_km_page_size(b->runtime_size) || obj->fd_count < 1 ||
        fstat(obj->fds[0], &st) || (uint64_t)st.st_size < b->page_size) {
        ERR_(dxgk, "broker object %llu is not a keyed mutex this library made\n",
             (unsigned long long)obj->id);
        return STATUS_INVALID_PARAMETER;
    }
    *blob = b;
    return STATUS_SUCCESS;
}

/* OpenKeyedMutex2's runtime data: size 0, or a buffer of at least the
 * creator's size (Windows reads, never writes it). */
static bool runtime_args_ok(const void *runtime, UINT size, UINT creator_size)
{
    return !size || (runtime && size >= creator_size);
}

NTSTATUS dxgk_keyed_mutex_open_object(struct kmt_broker_object *obj, const void *runtime,
                                      UINT *runtime_size, D3DKMT_HANDLE *out)
{
    const struct km_blob *blob;
    struct dxgk_keyed_mutex *km;
    NTSTATUS status;

    if ((status = check_object(obj, &blob)))
        return status;
    if (!runtime_args_ok(runtime, *runtime_size, blob->runtime_size))
        return STATUS_INVALID_PARAMETER;
    if (!(km = keyed_mutex_new()))
        return STATUS_NO_MEMORY;
    km->runtime_size = blob->runtime_size;
    km->nt_shareable = blob->flags & BLOB_NT_SHARING;
    km->map_size = blob->page_size;
    note_inode(km, obj->fds[0]);
    km->page = mmap(NULL, km->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, obj->fds[0], 0);
    if (km->page == MAP_FAILED) {
        km->page = NULL;
        keyed_mutex_put(km);
        return STATUS_NO_MEMORY;
    }
    /* the reference is the object's before its handle is visible: a destroy
     * racing with the publication (process shutdown) releases it with km */
    km->broker_id = obj->id;
    km->connection = obj->connection;
    obj->id = 0;
    if ((status = client_id(km)) || (status = keyed_mutex_publish(km, out))) {
        keyed_mutex_put(km);
        return status;
    }
    /* the fds are not needed past the mapping */
    for (unsigned i = 0; i < obj->fd_count; i++)
        close(obj->fds[i]);
    obj->fd_count = 0;
    *runtime_size = blob->runtime_size;
    TRACE_(dxgk, "keyed mutex %#x opened (global %#x)\n", *out, obj->global_handle);
    return STATUS_SUCCESS;
}

/* Opens what the broker handed out; drops the reference on failure. */
static NTSTATUS open_taken(struct kmt_broker_object *obj, const void *runtime, UINT runtime_size,
                           D3DKMT_HANDLE *out)
{
    NTSTATUS status = dxgk_keyed_mutex_open_object(obj, runtime, &runtime_size, out);

    if (status && obj->id)
        kmt_broker_release(obj->id);
    kmt_broker_object_free(obj);
    return status;
}

NTSTATUS dxgk_open_keyed_mutex(D3DKMT_HANDLE global, const void *runtime, UINT runtime_size,
                               D3DKMT_HANDLE *out)
{
    struct kmt_broker_object obj;
    NTSTATUS status;

    if (!global || (global & 0x3f) != 2)
        return STATUS_INVALID_PARAMETER;  /* 0, or a local handle: never global */
    /* a NULL buffer with a size fails before any broker call */
    if (runtime_size && !runtime)
        return STATUS_INVALID_PARAMETER;
    if ((status = kmt_broker_open_global(global, KMT_BROKER_KEYED_MUTEX, true, &obj)))
        return status;
    return open_taken(&obj, runtime, runtime_size, out);
}

NTSTATUS dxgk_open_keyed_mutex_from_nt(int nt_fd, const void *runtime, UINT runtime_size,
                                       D3DKMT_HANDLE *out)
{
    struct kmt_broker_object obj[KMT_BROKER_MAX_NT_OBJECTS];
    unsigned count = 0;
    NTSTATUS status;

    if (runtime_size && !runtime)
        return STATUS_INVALID_PARAMETER;
    status = kmt_broker_open_nt(nt_fd, KMT_BROKER_KEYED_MUTEX, true, obj, 1, &count);
    if (status)
        return status;
    if (count != 1) {
        for (unsigned i = 0; i < count; i++) {
            if (obj[i].id)
                kmt_broker_release(obj[i].id);
            kmt_broker_object_free(&obj[i]);
        }
        return STATUS_OBJECT_TYPE_MISMATCH;
    }
    return open_taken(&obj[0], runtime, runtime_size, out);
}

NTSTATUS dxgk_keyed_mutex_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection)
{
    struct dxgk_keyed_mutex *km = keyed_mutex_lookup(h);
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (!km)
        return status;
    if (km->nt_shareable) {
        *broker_id = km->broker_id;
        *connection = km->connection;
        status = dxgk_share_lost(km->connection) ? STATUS_DEVICE_REMOVED : STATUS_SUCCESS;
    }
    keyed_mutex_put(km);
    return status;
}

NTSTATUS dxgk_destroy_keyed_mutex(D3DKMT_HANDLE h)
{
    struct dxgk_keyed_mutex *km =
        (struct dxgk_keyed_mutex *)hmgr_remove(&dxgk_process.handles, h, HMGR_TYPE_KEYEDMUTEX);

    if (!km)
        return STATUS_INVALID_PARAMETER;
    pthread_mutex_lock(&live_lock);
    list_remove(&km->entry);
    list_init(&km->entry);
    pthread_mutex_unlock(&live_lock);
    /* Acquirers that found the handle before its removal: those without a
     * reference leave their read section within the grace period, so a
     * hold they took is seen below; those asleep with a reference see
     * `destroyed` once they take it (both sides order with seq_cst) and
     * abandon it themselves.  Either way no hold outlives the handle, and
     * no one sleeps forever on a mutex only a gone handle could release. */
    atomic_store_explicit(&km->destroyed, true, memory_order_seq_cst);
    kmt_rcu_synchronize();
    abandon_if_held(km);
    keyed_mutex_put(km);                 /* the table's reference */
    return STATUS_SUCCESS;
}

void dxgk_km_page_hand_back(struct dxgk_km_page *p, uint32_t me, uint32_t owner)
{
    dxgk_km_unlock(p, me, owner);
}

/* The acquire succeeded: what the last release left for the new owner. */
static inline __attribute__((always_inline)) void took(struct dxgk_keyed_mutex *km, UINT64 *fence, void *data, UINT size)
{
    KMT_TSAN(__tsan_acquire(DXGK_KM_TSAN_SYNC(km)));
    *fence = atomic_load_explicit(&km->page->fence, memory_order_relaxed);
    if (size) {
        UINT stored = atomic_load_explicit(&km->page->data_size, memory_order_relaxed);

        if (stored > size)
            stored = size;
        memcpy(data, km->page->data, stored);
        if (stored < size)
            memset((char *)data + stored, 0, size - stored);
    }
}

/* The wait in slices of DXGK_SHARE_LINK_CHECK_NS: after each, a look at
 * the broker link.  A holder that dies after the broker died is abandoned
 * by nobody, so a waiter would sleep to its timeout; a waiter whose
 * connection ended ends with STATUS_DEVICE_REMOVED instead.  The look for
 * the release is the first slice's alone: one wait looks once. */
static NTSTATUS acquire_watching_link(struct dxgk_keyed_mutex *km, UINT64 key, bool timed,
                                      const struct timespec *deadline)
{
    for (bool first = true;; first = false) {
        struct timespec slice = kmt_timespec_of(kmt_now_ns() + DXGK_SHARE_LINK_CHECK_NS);
        bool last = timed && dxgk_share_deadline_first(deadline, &slice);
        NTSTATUS status = dxgk_km_page_acquire(km->page, km->me, km->handle, key, last ? deadline : &slice,
                                               &km->look, first);

        if (status != STATUS_TIMEOUT || last)
            return status;
        if (dxgk_share_lost(km->connection)) {
            WARN_(dxgk, "keyed mutex %#x: its broker connection ended while waiting\n", km->handle);
            return STATUS_DEVICE_REMOVED;
        }
    }
}

/* The mutex is not free for us now: wait for it, holding a reference. */
static NTSTATUS acquire_slow(struct dxgk_keyed_mutex *km, UINT64 key, const LONGLONG *timeout,
                             UINT64 *fence, void *data, UINT size)
{
    struct timespec deadline;
    bool timed = dxgk_km_deadline(timeout, &deadline);
    NTSTATUS status = acquire_watching_link(km, key, timed, &deadline);

    /* the connection may have ended while we slept: a hold under its id
     * is watched by no broker, so it is given up at once */
    if (status == STATUS_SUCCESS) {
        atomic_thread_fence(memory_order_seq_cst);
        if (km->connection != kmt_broker_connection()) {
            dxgk_km_page_abandon(km->page, km->me, km->handle);
            status = STATUS_DEVICE_REMOVED;
        } else if (atomic_load_explicit(&km->destroyed, memory_order_seq_cst)) {
            /* the handle was destroyed while we slept: taken, then abandoned
             * with it, as if the destroy came just after */
            abandon_if_held(km);
        }
    }
    if (status == STATUS_SUCCESS)
        took(km, fence, data, size);
    else
        *fence = 0;
    keyed_mutex_put(km);
    return status;
}

/* Not the uncontended success: a connection that ended, or a mutex that
 * is not free for us.  Out of line, so the hot path keeps few registers. */
static __attribute__((noinline, cold)) NTSTATUS
acquire_not_free(struct kmt_rcu_reader *rcu, struct dxgk_keyed_mutex *km, UINT64 key,
                 const LONGLONG *timeout, UINT64 *fence, void *data, UINT size)
{
    /* the connection our reference was taken on ended (broker.h): the
     * reference is gone, and a hold under the old id would not be watched */
    if (km->connection != kmt_broker_connection()) {
        WARN_(dxgk, "keyed mutex %#x: its broker connection ended; open it again\n", km->handle);
        kmt_rcu_read_unlock(rcu);
        *fence = 0;
        return STATUS_DEVICE_REMOVED;
    }
    /* no reference left: its handle is gone, as if we came after */
    if (!kmt_object_tryget(&km->obj)) {
        kmt_rcu_read_unlock(rcu);
        return STATUS_INVALID_PARAMETER;
    }
    kmt_rcu_read_unlock(rcu);
    return acquire_slow(km, key, timeout, fence, data, size);
}

NTSTATUS dxgk_acquire_keyed_mutex(D3DKMT_HANDLE h, UINT64 key, const LONGLONG *timeout,
                                  UINT64 *fence, void *data, UINT size)
{
    struct kmt_rcu_reader *rcu = kmt_rcu_read_lock();
    struct dxgk_keyed_mutex *km = keyed_mutex_find(h);

    if (__builtin_expect(!km || (size && size != km->runtime_size), 0)) {
        kmt_rcu_read_unlock(rcu);
        return STATUS_INVALID_PARAMETER;
    }
    if (__builtin_expect(km->connection == kmt_broker_connection(), 1) &&
        __builtin_expect(dxgk_km_page_try_acquire(km->page, km->me, km->handle, key), 1)) {
        /* a destroy racing with us waits for this section to end, then
         * abandons what we took */
        took(km, fence, data, size);
        kmt_rcu_read_unlock(rcu);
        return STATUS_SUCCESS;
    }
    return acquire_not_free(rcu, km, key, timeout, fence, data, size);
}

NTSTATUS dxgk_release_keyed_mutex(D3DKMT_HANDLE h, UINT64 key, UINT64 fence, const void *data,
                                  UINT size)
{
    struct kmt_rcu_reader *rcu = kmt_rcu_read_lock();
    struct dxgk_keyed_mutex *km = keyed_mutex_find(h);
    NTSTATUS status = STATUS_INVALID_PARAMETER;

    if (km && (!size || size == km->runtime_size)) {
        KMT_TSAN(__tsan_release(DXGK_KM_TSAN_SYNC(km)));
        /* two releases (or a release and a destroy) of one handle: one wins */
        if (dxgk_km_page_release(km->page, km->me, km->handle, key, fence, data, size))
            status = STATUS_SUCCESS;
        else if (km->connection != kmt_broker_connection())
            status = STATUS_DEVICE_REMOVED;  /* a hold of before still releases */
    }
    kmt_rcu_read_unlock(rcu);
    return status;
}

struct dxgk_km_look *dxgk_keyed_mutex_look(D3DKMT_HANDLE h)
{
    struct dxgk_keyed_mutex *km = keyed_mutex_lookup(h);
    struct dxgk_km_look *look;

    if (!km)
        return NULL;
    look = &km->look;
    keyed_mutex_put(km);
    return look;
}

void dxgk_keyed_mutex_process_shutdown(void)
{
    for (;;) {
        D3DKMT_HANDLE h = 0;

        pthread_mutex_lock(&live_lock);
        if (!list_empty(&live_mutexes))
            h = LIST_ENTRY(live_mutexes.next, struct dxgk_keyed_mutex, entry)->handle;
        pthread_mutex_unlock(&live_lock);
        if (!h)
            return;
        if (dxgk_destroy_keyed_mutex(h)) {
            /* lost a race with a DestroyKeyedMutex call: wait for its unlink */
            pthread_mutex_lock(&live_lock);
            pthread_mutex_unlock(&live_lock);
        }
    }
}

void dxgk_keyed_mutex_forget(void)
{
    /* the parent's objects stay as they are (another thread may have held
     * the lock at the fork): the child starts with none */
    live_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    list_init(&live_mutexes);
    kmt_rcu_forget_other_threads();
}
