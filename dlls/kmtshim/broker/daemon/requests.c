/*
 * The requests of protocol.h, one function each.  A request whose sizes
 * do not match its op is malformed (the client is dropped); one that is
 * well formed but names what the client may not use gets a failed reply.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

static bool reply_status(struct client *c, NTSTATUS status)
{
    return conn_reply(c, status, NULL, 0, NULL, 0);
}

/* The status for a reply conn_reply could not queue. */
static NTSTATUS reply_failure(void)
{
    return errno == ENOMEM ? STATUS_NO_MEMORY : STATUS_INSUFFICIENT_RESOURCES;
}

/* Replies with a new NT handle (the program's end, closed here once
 * queued), or status when it is not STATUS_SUCCESS. */
static bool reply_nt_handle(struct client *c, NTSTATUS status, int end)
{
    bool ok;

    if (status != STATUS_SUCCESS)
        return reply_status(c, status);
    /* unsent, the closed end hangs up and the share goes with it */
    if (!(ok = conn_reply(c, STATUS_SUCCESS, NULL, 0, &end, 1)))
        ok = reply_status(c, reply_failure());
    close(end);
    return ok;
}

static bool valid_kind(uint32_t kind)
{
    return kind >= KMT_BROKER_RESOURCE && kind <= KMT_BROKER_KEYED_MUTEX;
}

/* A name of name_size bytes at p: its NUL last and only there. */
static bool valid_name(const char *p, uint32_t name_size)
{
    return name_size >= 2 && name_size <= KMT_BROKER_MAX_NAME && !p[name_size - 1]
        && strlen(p) == name_size - 1;
}

/* The name after a request's fixed part: false when the sizes do not add
 * up (malformed), else true with *status the result of its check; no name
 * when name_size is 0 and optional. */
static bool name_of(struct client *c, size_t fixed, uint32_t name_size, bool optional, const char **name,
                    NTSTATUS *status)
{
    if (c->head.size - fixed != name_size)
        return false;
    *name = NULL;
    *status = STATUS_SUCCESS;
    if (!name_size && optional)
        return true;
    *name = (const char *)c->payload + fixed;
    if (!valid_name(*name, name_size))
        *status = name_size > KMT_BROKER_MAX_NAME ? STATUS_NAME_TOO_LONG : STATUS_INVALID_PARAMETER;
    return true;
}

/* An object's fds are files, never sockets: a socket could be one end of
 * a connection to the broker itself and keep it alive. */
static bool valid_object_fds(const int *fds, unsigned count)
{
    struct stat st;

    for (unsigned i = 0; i < count; i++)
        if (fstat(fds[i], &st) || S_ISSOCK(st.st_mode))
            return false;
    return true;
}

static bool run_hello(struct client *c)
{
    struct kmt_broker_hello_req req;
    struct kmt_broker_hello_reply reply = { KMT_BROKER_PROTOCOL_VERSION, c->id, broker.stats.broker_pid };
    struct iovec part = { &reply, sizeof(reply) };

    if (c->head.size != sizeof(req) || c->hello_done)
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (req.version != KMT_BROKER_PROTOCOL_VERSION) {
        BROKER_ERR("client %u speaks protocol %u, not %u\n", c->id, req.version, KMT_BROKER_PROTOCOL_VERSION);
        c->closing = true;
        return reply_status(c, STATUS_REVISION_MISMATCH);
    }
    c->hello_done = true;
    return conn_reply(c, STATUS_SUCCESS, &part, 1, NULL, 0);
}

static bool run_create(struct client *c)
{
    struct kmt_broker_create_req req;
    struct kmt_broker_create_reply reply = { 0 };
    struct iovec part = { &reply, sizeof(reply) };
    uint32_t global_handle = 0;
    struct object *obj;

    if (c->head.size < sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (c->head.size - sizeof(req) != req.blob_size || req.blob_size > KMT_BROKER_MAX_BLOB)
        return false;
    if (!valid_kind(req.kind) || req.holder_offset < -1 || !valid_object_fds(c->fds, c->fd_count)
        || (req.holder_offset >= 0 && (!c->fd_count || !holder_valid(c->fds[0], req.holder_offset))))
        return reply_status(c, STATUS_INVALID_PARAMETER);
    if (req.global && !(global_handle = globals_take()))
        return reply_status(c, STATUS_INSUFFICIENT_RESOURCES);
    obj = books_create(req.kind, global_handle, c->payload + sizeof(req), req.blob_size, c->fds, c->fd_count,
                       req.holder_offset);
    if (!obj)
        return reply_status(c, STATUS_NO_MEMORY);
    c->fd_count = 0;                     /* the object's now */
    if (!client_add_ref(c, obj)) {
        books_ref(obj);
        books_unref(obj);
        return reply_status(c, STATUS_NO_MEMORY);
    }
    reply.id = client_ref_id(c, obj);
    reply.global_handle = obj->global_handle;
    return conn_reply(c, STATUS_SUCCESS, &part, 1, NULL, 0);
}

/* Replies with objects[0..count-1], taking a reference to each first
 * when take_ref. */
static bool reply_objects(struct client *c, struct object *const *objects, unsigned count, bool take_ref)
{
    struct kmt_broker_objects_reply head = { count, 0 };
    struct kmt_broker_object_desc descs[KMT_BROKER_MAX_NT_OBJECTS];
    struct iovec parts[1 + 2 * KMT_BROKER_MAX_NT_OBJECTS];
    int fds[KMT_BROKER_MAX_MSG_FDS] = { 0 };   /* GCC cannot see that only fd_count are read */
    unsigned fd_count = 0, n = 0, taken = 0;

    parts[n++] = (struct iovec){ &head, sizeof(head) };
    for (unsigned i = 0; i < count; i++) {
        const struct object *obj = objects[i];

        descs[i] = (struct kmt_broker_object_desc){ take_ref ? client_ref_id(c, obj) : 0, obj->kind,
                                                    obj->global_handle, obj->blob_size,
                                                    take_ref ? obj->fd_count : 0 };
        parts[n++] = (struct iovec){ &descs[i], sizeof(descs[i]) };
        parts[n++] = (struct iovec){ obj->blob, obj->blob_size };
        if (take_ref) {
            memcpy(fds + fd_count, obj->fds, obj->fd_count * sizeof(int));
            fd_count += obj->fd_count;
        }
    }
    for (; take_ref && taken < count; taken++)
        if (!client_add_ref(c, objects[taken]))
            break;
    if ((take_ref && taken < count) || !conn_reply(c, STATUS_SUCCESS, parts, n, fds, fd_count)) {
        NTSTATUS status = take_ref && taken < count ? STATUS_NO_MEMORY : reply_failure();

        for (unsigned i = 0; take_ref && i < taken; i++)
            client_drop_ref(c, client_ref_id(c, objects[i]));
        return reply_status(c, status);
    }
    return true;
}

static bool run_open_global(struct client *c)
{
    struct kmt_broker_open_global_req req;
    struct object *obj;

    if (c->head.size != sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    obj = books_find_global(req.global_handle);
    if (!obj || obj->kind != req.kind)
        return reply_status(c, STATUS_INVALID_PARAMETER);
    return reply_objects(c, &obj, 1, req.take_ref);
}

static bool run_release(struct client *c)
{
    struct kmt_broker_release_req req;

    if (c->head.size != sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    return reply_status(c, client_drop_ref(c, req.id) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER);
}

static bool run_set_blob(struct client *c)
{
    struct kmt_broker_set_blob_req req;
    struct object *obj;

    if (c->head.size < sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (c->head.size - sizeof(req) != req.blob_size || req.blob_size > KMT_BROKER_MAX_BLOB)
        return false;
    if (!(obj = client_find_ref(c, req.id)))
        return reply_status(c, STATUS_INVALID_PARAMETER);
    if (!books_set_blob(obj, c->payload + sizeof(req), req.blob_size))
        return reply_status(c, STATUS_NO_MEMORY);
    return reply_status(c, STATUS_SUCCESS);
}

static bool run_share_nt(struct client *c)
{
    struct kmt_broker_share_nt_req req;
    struct object *objects[KMT_BROKER_MAX_NT_OBJECTS];
    const char *name;
    NTSTATUS status;
    int end = -1;

    if (c->head.size < sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (!name_of(c, sizeof(req), req.name_size, true, &name, &status))
        return false;
    if (status != STATUS_SUCCESS)
        return reply_status(c, status);
    if (!req.count || req.count > KMT_BROKER_MAX_NT_OBJECTS)
        return reply_status(c, STATUS_INVALID_PARAMETER);
    for (unsigned i = 0; i < req.count; i++)
        if (!(objects[i] = client_find_ref(c, req.ids[i])))
            return reply_status(c, STATUS_INVALID_PARAMETER);
    status = nt_share(objects, req.count, name, req.access, &end);
    return reply_nt_handle(c, status, end);
}

static bool run_open_nt(struct client *c)
{
    struct kmt_broker_open_nt_req req;
    struct share *s;

    if (c->head.size != sizeof(req) || c->fd_count != 1)
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (!(s = nt_find_fd(c->fds[0])) || s->objects[0]->kind != req.kind)
        return reply_status(c, STATUS_OBJECT_TYPE_MISMATCH);
    if (s->count > req.max)
        return reply_status(c, STATUS_BUFFER_TOO_SMALL);
    return reply_objects(c, s->objects, s->count, req.take_ref);
}

static bool run_open_name(struct client *c)
{
    struct kmt_broker_open_name_req req;
    const char *name;
    NTSTATUS status;
    int end = -1;

    if (c->head.size < sizeof(req))
        return false;
    memcpy(&req, c->payload, sizeof(req));
    if (!name_of(c, sizeof(req), req.name_size, false, &name, &status))
        return false;
    if (status != STATUS_SUCCESS)
        return reply_status(c, status);
    status = nt_open_name(name, req.kind, req.access, &end);
    return reply_nt_handle(c, status, end);
}

static bool run_stats(struct client *c)
{
    const struct kmt_broker_stats *s = &broker.stats;
    struct kmt_broker_stats_reply reply = { s->broker_pid, s->clients, s->objects, s->global_handles,
                                            s->nt_shares, s->names, s->fds, 0, s->objects_freed };
    struct iovec part = { &reply, sizeof(reply) };

    if (c->head.size)
        return false;
    return conn_reply(c, STATUS_SUCCESS, &part, 1, NULL, 0);
}

bool requests_run(struct client *c)
{
    if (!c->hello_done && c->head.op != KMT_BROKER_OP_HELLO)
        return false;
    if (c->fds_truncated) {
        BROKER_ERR("out of file descriptors: client %u's request %u failed\n", c->id, c->head.op);
        return reply_status(c, STATUS_INSUFFICIENT_RESOURCES);
    }
    nt_reap_hangups();
    switch (c->head.op) {
    case KMT_BROKER_OP_HELLO: return run_hello(c);
    case KMT_BROKER_OP_CREATE: return run_create(c);
    case KMT_BROKER_OP_OPEN_GLOBAL: return run_open_global(c);
    case KMT_BROKER_OP_RELEASE: return run_release(c);
    case KMT_BROKER_OP_SET_BLOB: return run_set_blob(c);
    case KMT_BROKER_OP_SHARE_NT: return run_share_nt(c);
    case KMT_BROKER_OP_OPEN_NT: return run_open_nt(c);
    case KMT_BROKER_OP_OPEN_NAME: return run_open_name(c);
    case KMT_BROKER_OP_STATS: return run_stats(c);
    default: return false;
    }
}
