/*
 * The session broker, seen from one process.
 *
 * Windows keeps a session's shared D3DKMT objects in the kernel: a global
 * handle is valid in every process of the session, and the object behind
 * it lives while any process holds a local handle to it or an NT handle
 * names it.  kmtshim has no kernel, so a per-user daemon, kmtshim-broker,
 * holds the session's global handle table and the file descriptors
 * (memfds, dma-bufs, syncobj fds) of the objects that outlive their
 * creator.  The library starts it on demand, the way Wine starts
 * wineserver, and it exits when its last client is gone
 * (docs/architecture.md, "Sharing across processes").
 *
 * The broker knows no D3DKMT semantics beyond handles and lifetimes: an
 * object is a kind, an opaque description (the blob, written and read by
 * the core) and a list of fds.  Each process holds counted references;
 * a connection that closes (the process exited or was killed) drops all
 * of its references.
 *
 * Every call is one request and one reply on the process's connection,
 * bounded in time: a broker that does not answer within the timeout fails
 * the call with STATUS_IO_TIMEOUT and the connection is dropped; one that
 * is gone fails it with STATUS_PORT_DISCONNECTED; either way the next call
 * connects again (starting a new broker if none listens).  A reply that
 * arrived whole fails its call alone, the connection kept: without its
 * fds (this process or the broker is out of fds) with
 * STATUS_INSUFFICIENT_RESOURCES, breaking the protocol with
 * STATUS_INTERNAL_ERROR.  An ERR line on the "broker" channel says why.
 *
 * Nothing here is called on the uncontended paths: acquiring a keyed mutex
 * and signalling or waiting on a shared fence work on shared memory the
 * process maps once.
 */
#ifndef KMTSHIM_BROKER_H
#define KMTSHIM_BROKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kmtshim/d3dkmthk.h"

#define KMT_BROKER_MAX_FDS 16            /* fds one object carries */
#define KMT_BROKER_MAX_BLOB (1u << 20)   /* bytes of one object's description */
#define KMT_BROKER_MAX_NT_OBJECTS 3      /* resource, keyed mutex, sync object */
#define KMT_BROKER_MAX_NAME 512          /* bytes of an NT name, UTF-8, with its NUL */

/* An object's kind; its NT handles' Windows object type in brackets. */
enum kmt_broker_kind {
    KMT_BROKER_RESOURCE = 1,             /* DxgkSharedResource */
    KMT_BROKER_SYNCOBJ = 2,              /* DxgkSharedSyncObject */
    KMT_BROKER_KEYED_MUTEX = 3,          /* DxgkSharedKeyedMutex */
};

/* The holder word: the u32 at holder_offset in the memory of fds[0] holds
 * the id of the client (kmt_broker_client_id) that owns the object, 0 when
 * none does; a client sets KMT_BROKER_HOLDER_WAITERS in it (client ids
 * stay below it) before it sleeps on the word.  When a client's connection
 * ends, for every object it held a reference to, the broker compares that
 * word, less KMT_BROKER_HOLDER_WAITERS, with the client's id and, if equal,
 * stores KMT_BROKER_HOLDER_ABANDONED there (compare-and-swap) and wakes
 * every futex waiter on the word (FUTEX_WAKE, shared).  Keyed mutexes
 * use it for STATUS_ABANDONED when the owner's process dies.  fds[0] must
 * be a memfd sealed with F_SEAL_SHRINK, opened O_RDWR, without
 * F_SEAL_WRITE or F_SEAL_FUTURE_WRITE; any other gets
 * STATUS_INVALID_PARAMETER.  A client id is its connection's: after a
 * reconnect (a timeout, a dead broker) the process has a new one, and the
 * old connection's end marks the mutexes it still held abandoned. */
#define KMT_BROKER_HOLDER_ABANDONED 0xffffffffu
#define KMT_BROKER_HOLDER_WAITERS 0x80000000u

struct kmt_broker_create {
    uint32_t kind;                       /* enum kmt_broker_kind */
    bool global;                         /* give it a global handle (not NtSecuritySharing) */
    const void *blob;                    /* description, copied */
    uint32_t blob_size;                  /* <= KMT_BROKER_MAX_BLOB */
    const int *fds;                      /* sent, not consumed: the caller keeps them */
    unsigned fd_count;                   /* <= KMT_BROKER_MAX_FDS */
    int32_t holder_offset;               /* >= 0: fds[0] has a holder word there; -1: none */
};

/* What an open gives back. */
struct kmt_broker_object {
    uint64_t id;                         /* the reference to release, on this connection only; 0: none */
    uint64_t connection;                 /* that connection (kmt_broker_connection) */
    uint32_t kind;
    D3DKMT_HANDLE global_handle;         /* 0 for NT-only objects */
    void *blob;                          /* malloc'd, blob_size bytes */
    uint32_t blob_size;
    int fds[KMT_BROKER_MAX_FDS];         /* O_CLOEXEC, owned by the caller */
    unsigned fd_count;                   /* 0 when no reference was taken */
};

/* Frees the blob and closes the fds; the reference (id) stays. */
void kmt_broker_object_free(struct kmt_broker_object *obj);

/* Registers a new object; the caller holds one reference (*id).  With
 * c->global the object gets a global handle (low bits 2, not reused
 * within 2^23 creations, nor ever while its object lives; none left:
 * STATUS_INSUFFICIENT_RESOURCES). */
NTSTATUS kmt_broker_create(const struct kmt_broker_create *c, uint64_t *id,
                           D3DKMT_HANDLE *global_handle);

/* Opens an object by global handle.  take_ref: the caller gets a new
 * reference and the fds; otherwise only the kind and the blob (a query).
 * A handle that is not a live global handle of `kind` (0, a local handle,
 * a stale one, another kind) gives STATUS_INVALID_PARAMETER. */
NTSTATUS kmt_broker_open_global(D3DKMT_HANDLE global, uint32_t kind, bool take_ref,
                                struct kmt_broker_object *out);

/* Drops one reference.  The object dies with its last reference and NT
 * handle; its global handle is then invalid everywhere. */
NTSTATUS kmt_broker_release(uint64_t id);

/* Replaces an object's blob (D3DKMT_ESCAPE_UPDATE_RESOURCE_WINE); the
 * caller must hold a reference. */
NTSTATUS kmt_broker_set_blob(uint64_t id, const void *blob, uint32_t blob_size);

/* NT handles.  Natively an NT handle is a file descriptor in the
 * HANDLE-sized field (the convention of Microsoft's libdxg on WSL): one
 * end of a socket pair whose other end the broker keeps, so fork,
 * inheritance and SCM_RIGHTS carry it, close() closes it, and the broker
 * sees the last copy go.  The named objects live while any NT handle to
 * them is open.
 *
 * share_nt: a new NT handle (O_CLOEXEC) naming objects ids[0..count-1]
 *   (1 to KMT_BROKER_MAX_NT_OBJECTS, the first one's kind is the handle's
 *   type), holding a reference to each.  name: NULL, or a name in the
 *   session's namespace (compared without regard to ASCII case);
 *   STATUS_OBJECT_NAME_COLLISION if an NT share of that name lives.
 * open_nt: the objects an NT handle names, in share order.  A closed or
 *   invalid fd gives STATUS_INVALID_HANDLE; an fd that is not a kmtshim NT
 *   handle, or whose first object is not of `kind`, gives
 *   STATUS_OBJECT_TYPE_MISMATCH; one whose broker died (its other end is
 *   closed), STATUS_DEVICE_REMOVED.  take_ref as for open_global.
 * open_name: a new NT handle for a named share.  Unknown name:
 *   STATUS_OBJECT_NAME_NOT_FOUND; access 0: STATUS_ACCESS_DENIED; a share
 *   whose first object is not of `kind`: STATUS_OBJECT_TYPE_MISMATCH. */
NTSTATUS kmt_broker_share_nt(const uint64_t *ids, unsigned count, const char *name,
                             uint32_t access, int *nt_fd);
NTSTATUS kmt_broker_open_nt(int nt_fd, uint32_t kind, bool take_ref,
                            struct kmt_broker_object *out, unsigned max, unsigned *count);
NTSTATUS kmt_broker_open_name(const char *name, uint32_t kind, uint32_t access, int *nt_fd);

/* This process's id at the broker (connecting first if needed): from 1
 * to KMT_BROKER_HOLDER_WAITERS - 2, so never 0 and, with or without
 * KMT_BROKER_HOLDER_WAITERS, never KMT_BROKER_HOLDER_ABANDONED; 0 when no
 * broker can be reached. */
uint32_t kmt_broker_client_id(void);

/* The same id with the connection it belongs to (*connection, 0 with id
 * 0), read together: the pair a keyed mutex's holder word needs. */
uint32_t kmt_broker_client_id_on(uint64_t *connection);

/* The connection that is up now, without connecting (one atomic load,
 * inline: the uncontended keyed-mutex acquire checks it every call): a
 * number no other connection of this process had (client ids are the
 * broker's, and a new broker counts them from 1 again), 0 when there is
 * none.  Every reference belongs to the connection it was taken on; once
 * that connection ended (a timeout, a dead broker) the broker dropped it,
 * so an object taken on another connection than this one is gone for
 * this process.  Written by client.c only, under its call lock. */
extern _Atomic uint64_t kmt_broker_connection_now;

static inline uint64_t kmt_broker_connection(void)
{
    return atomic_load_explicit(&kmt_broker_connection_now, memory_order_relaxed);
}

/* The connection this thread's last kmt_broker_* call ran on: the one a
 * reference it took belongs to.  0 when its transport failed;
 * KMT_BROKER_NOT_SENT when it was refused before reaching the broker (its
 * arguments), which says nothing of any connection. */
#define KMT_BROKER_NOT_SENT UINT64_MAX
uint64_t kmt_broker_call_connection(void);

/* Whether the connection taken_on is over: another is up, or the broker
 * hung up on it (it died; then it is dropped).  A poll, no round trip:
 * for long waits on shared objects, now and then.  A hung broker shows
 * only once a call timed out. */
bool kmt_broker_connection_lost(uint64_t taken_on);

/* The broker's books, for tests and kmtinfo. */
struct kmt_broker_stats {
    uint32_t broker_pid;
    uint32_t clients;                    /* live connections */
    uint32_t objects;                    /* live objects */
    uint32_t global_handles;             /* live global handles */
    uint32_t nt_shares;                  /* live NT shares (each with >= 1 open NT handle) */
    uint32_t names;                      /* live names */
    uint32_t fds;                        /* fds the broker holds for objects */
    uint64_t objects_freed;              /* since the broker started */
};
NTSTATUS kmt_broker_query_stats(struct kmt_broker_stats *stats);

/* In a fork() child: the parent's connection is the parent's (fork.c). */
void kmt_broker_forget(void);

#endif /* KMTSHIM_BROKER_H */
