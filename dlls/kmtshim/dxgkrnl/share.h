/*
 * Sharing across processes: what one kind's sharing calls need from
 * another's.  ShareObjects bundles a resource with its keyed mutex and sync
 * object under one NT handle, and OpenResourceFromNtHandle opens all three,
 * so the resource side (resource_share.c) calls the keyed-mutex side
 * (keyed_mutex.c) and the sync-object side (syncobj_share.c) through these.
 *
 * Every shared object is registered with the session broker
 * (broker/broker.h); its local object keeps the broker reference and
 * releases it when its last local handle goes.
 */
#ifndef KMTSHIM_SHARE_H
#define KMTSHIM_SHARE_H

#include <time.h>

#include "broker/broker.h"
#include "dxgkrnl.h"
#include "base/kmt_debug.h"

/* A shared object's session state (its broker reference, the holder word
 * the broker watches, its handles in other processes) lives on the broker
 * connection its reference was taken on.  Once that connection ended (the
 * broker died or hung, docs/architecture.md) every call on the object
 * that needs that state fails with STATUS_DEVICE_REMOVED, as for a lost
 * device; its destroy still works and drops nothing at the broker. */
static inline bool dxgk_share_lost(uint64_t connection)
{
    return kmt_broker_connection_lost(connection);
}

/* The client id a holder word names this process by (*id): the id of
 * `connection`, the one the object's reference was taken on.  Once that
 * connection ended (another thread's broker call dropped it, or
 * reconnected: they reconnect by themselves) the reference went with it,
 * and the object with it: STATUS_DEVICE_REMOVED, whether a broker is up
 * now or not; an id of a new connection would name an owner whose end
 * never frees it.  A connection already over is refused before anything
 * connects, or starts a broker.  `what` names the object for the WARN
 * line. */
static inline NTSTATUS dxgk_share_holder_id(uint64_t connection, uint32_t *id, const char *what)
{
    uint64_t now = kmt_broker_connection();

    *id = 0;
    if (now == connection)
        *id = kmt_broker_client_id_on(&now);
    if (!*id || now != connection) {
        WARN_(dxgk, "%s: the broker connection ended as it was made or opened\n", what);
        *id = 0;
        return STATUS_DEVICE_REMOVED;
    }
    return STATUS_SUCCESS;
}

/* How often a long wait on a shared object looks at the broker link. */
#define DXGK_SHARE_LINK_CHECK_NS 100000000ull

/* Whether deadline a comes no later than b (CLOCK_MONOTONIC). */
static inline bool dxgk_share_deadline_first(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

/* The status of a broker call on such an object, read right after it: a
 * call that reached the broker on another connection than the object's
 * (the transport failed, or the broker was replaced meanwhile) found its
 * state gone; one refused before it was sent keeps its own status. */
static inline NTSTATUS dxgk_share_call_status(uint64_t connection, NTSTATUS status)
{
    uint64_t ran_on = kmt_broker_call_connection();

    return ran_on != KMT_BROKER_NOT_SENT && ran_on != connection ? STATUS_DEVICE_REMOVED : status;
}

/* The broker object behind a local handle that ShareObjects may name: a
 * live object of that kind made with NtSecuritySharing (a resource with
 * CreateShared|NtSecuritySharing, a keyed mutex made with
 * NtSecuritySharing, a v2 sync object with Shared|NtSecuritySharing).
 * Anything else (0, another kind, not NT-shareable, destroyed):
 * STATUS_INVALID_PARAMETER; one whose state died with the broker:
 * STATUS_DEVICE_REMOVED.  *connection: the connection of its reference. */
NTSTATUS dxgk_resource_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection);
NTSTATUS dxgk_keyed_mutex_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection);
NTSTATUS dxgk_syncobj_share_id(D3DKMT_HANDLE h, uint64_t *broker_id, uint64_t *connection);

/* Opens a keyed mutex the broker handed out (from a global or an NT
 * handle): a new local handle.  runtime/runtime_size follow
 * OpenKeyedMutex2's rules (runtime_size in: the caller's buffer size, out:
 * the creator's; the buffer is never written).  takes obj's reference and
 * fds on success, leaves them to the caller on failure. */
NTSTATUS dxgk_keyed_mutex_open_object(struct kmt_broker_object *obj, const void *runtime,
                                      UINT *runtime_size, D3DKMT_HANDLE *out);

/* Opens a sync object the broker handed out: a new local handle.  hDevice
 * 0: on the process's adapter with the creator's LUID (legacy objects);
 * otherwise on that device (monitored fences).  Same ownership rule. */
NTSTATUS dxgk_syncobj_open_object(D3DKMT_HANDLE hDevice, struct kmt_broker_object *obj,
                                  D3DKMT_HANDLE *out);

/* The name of an NT object in OBJECT_ATTRIBUTES, as UTF-8 for the broker.
 * attrs NULL or without a name: *name = NULL.  STATUS_INVALID_PARAMETER for
 * unreadable or malformed attributes; STATUS_NAME_TOO_LONG past
 * KMT_BROKER_MAX_NAME. */
NTSTATUS dxgk_nt_name(const void *object_attributes, char *name, size_t size, const char **out);

#endif /* KMTSHIM_SHARE_H */
