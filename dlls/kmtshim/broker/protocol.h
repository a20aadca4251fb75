/*
 * The wire format between the library (client.c) and kmtshim-broker.
 *
 * A Unix stream socket carries framed messages: a head, then `size` bytes
 * of payload (an op's fixed part, then its variable part: a blob, a name,
 * object descriptions).  File descriptors travel with SCM_RIGHTS on the
 * first byte of their message; `fd_count` says how many to expect, and a
 * message whose fds do not match is malformed.  Every request gets one
 * reply with the same op; a failed reply has no payload and no fds.
 *
 * The first request on a connection is HELLO; a broker of another
 * protocol version refuses it (STATUS_REVISION_MISMATCH) and hangs up.
 */
#ifndef KMTSHIM_BROKER_PROTOCOL_H
#define KMTSHIM_BROKER_PROTOCOL_H

#include <stdint.h>

#include "broker/broker.h"

/* The names carry the version, so that brokers of two library versions
 * (one still lingering after an upgrade) serve their own clients side by
 * side instead of refusing each other's hellos. */
#define KMT_BROKER_PROTOCOL_VERSION 2
#define KMT_BROKER_VERSION_STR_(v) #v
#define KMT_BROKER_VERSION_STR(v) KMT_BROKER_VERSION_STR_(v)
#define KMT_BROKER_SOCKET_NAME "socket-" KMT_BROKER_VERSION_STR(KMT_BROKER_PROTOCOL_VERSION)
#define KMT_BROKER_LOCK_NAME "lock-" KMT_BROKER_VERSION_STR(KMT_BROKER_PROTOCOL_VERSION)
#define KMT_BROKER_LOG_NAME "broker.log"     /* the spawned broker's stderr */

enum kmt_broker_op {
    KMT_BROKER_OP_HELLO = 1,
    KMT_BROKER_OP_CREATE,
    KMT_BROKER_OP_OPEN_GLOBAL,
    KMT_BROKER_OP_RELEASE,
    KMT_BROKER_OP_SET_BLOB,
    KMT_BROKER_OP_SHARE_NT,
    KMT_BROKER_OP_OPEN_NT,
    KMT_BROKER_OP_OPEN_NAME,
    KMT_BROKER_OP_STATS,
};

struct kmt_broker_head {
    uint32_t op;                         /* enum kmt_broker_op */
    uint32_t status;                     /* a reply's NTSTATUS; 0 in requests */
    uint32_t size;                       /* payload bytes after the head */
    uint32_t fd_count;                   /* fds sent with the message */
};

/* HELLO */
struct kmt_broker_hello_req { uint32_t version; };
struct kmt_broker_hello_reply { uint32_t version, client_id, broker_pid; };

/* CREATE: + blob; fds. */
struct kmt_broker_create_req {
    uint32_t kind, global;
    int32_t holder_offset;
    uint32_t blob_size;
};
struct kmt_broker_create_reply { uint64_t id; uint32_t global_handle, pad; };

/* OPEN_GLOBAL; reply: kmt_broker_objects_reply. */
struct kmt_broker_open_global_req { uint32_t global_handle, kind, take_ref; };

/* RELEASE */
struct kmt_broker_release_req { uint64_t id; };

/* SET_BLOB: + blob. */
struct kmt_broker_set_blob_req { uint64_t id; uint32_t blob_size, pad; };

/* SHARE_NT: + name (name_size bytes with its NUL, 0: none); reply: 1 fd. */
struct kmt_broker_share_nt_req {
    uint64_t ids[KMT_BROKER_MAX_NT_OBJECTS];
    uint32_t count, access, name_size, pad;
};

/* OPEN_NT: 1 fd (the NT handle); reply: kmt_broker_objects_reply, or
 * STATUS_BUFFER_TOO_SMALL (nothing taken) when the share has more than
 * max objects. */
struct kmt_broker_open_nt_req { uint32_t kind, take_ref, max, pad; };

/* OPEN_NAME: + name; reply: 1 fd. */
struct kmt_broker_open_name_req { uint32_t kind, access, name_size, pad; };

/* OPEN_GLOBAL / OPEN_NT reply: count descriptions, each followed by its
 * blob; the fds of every object, in order. */
struct kmt_broker_objects_reply { uint32_t count, pad; };
struct kmt_broker_object_desc {
    uint64_t id;
    uint32_t kind, global_handle, blob_size, fd_count;
};

/* STATS reply (struct kmt_broker_stats, padded alike on every ABI). */
struct kmt_broker_stats_reply {
    uint32_t broker_pid, clients, objects, global_handles, nt_shares, names, fds, pad;
    uint64_t objects_freed;
};

/* One layout for every ABI (an i386 process may talk to an x86_64
 * broker): sizes without implicit padding. */
_Static_assert(sizeof(struct kmt_broker_head) == 16, "head");
_Static_assert(sizeof(struct kmt_broker_create_req) == 16, "create");
_Static_assert(sizeof(struct kmt_broker_create_reply) == 16, "create reply");
_Static_assert(sizeof(struct kmt_broker_set_blob_req) == 16, "set_blob");
_Static_assert(sizeof(struct kmt_broker_share_nt_req) == 40, "share_nt");
_Static_assert(sizeof(struct kmt_broker_open_nt_req) == 16, "open_nt");
_Static_assert(sizeof(struct kmt_broker_open_name_req) == 16, "open_name");
_Static_assert(sizeof(struct kmt_broker_objects_reply) == 8, "objects");
_Static_assert(sizeof(struct kmt_broker_object_desc) == 24, "object");
_Static_assert(sizeof(struct kmt_broker_stats_reply) == 40, "stats");

/* The largest payloads either side accepts. */
#define KMT_BROKER_MAX_REQUEST (64u + KMT_BROKER_MAX_BLOB)
#define KMT_BROKER_MAX_REPLY \
    (64u + KMT_BROKER_MAX_NT_OBJECTS * (sizeof(struct kmt_broker_object_desc) + KMT_BROKER_MAX_BLOB))
#define KMT_BROKER_MAX_MSG_FDS (KMT_BROKER_MAX_NT_OBJECTS * KMT_BROKER_MAX_FDS)

#endif /* KMTSHIM_BROKER_PROTOCOL_H */
