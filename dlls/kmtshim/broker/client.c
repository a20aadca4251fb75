/*
 * The process's side of the session broker (broker.h): one connection,
 * made on the first call, every call one request and one reply under a
 * mutex, bounded by KMTSHIM_BROKER_TIMEOUT_MS.
 *
 * The connection is the library's own fd (fd_registry.h), so a fork()
 * child closes it: the child is another process with its own references
 * (kmt_broker_forget).  The fds handed to the caller (objects' fds, NT
 * handles) are the caller's and are not tracked here.
 *
 * Dropping the connection drops every reference the process holds, so
 * only a broken transport does: a reply that arrived whole fails its own
 * call alone.  Whole but without all its fds (this process is out of fds,
 * RLIMIT_NOFILE): STATUS_INSUFFICIENT_RESOURCES, the fds that came closed
 * and the references it took given back.  Whole but breaking the
 * protocol (a broker bug): STATUS_INTERNAL_ERROR; references it may have
 * taken stay until the connection ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fd_registry.h"
#include "base/kmt_debug.h"
#include "broker/dir.h"
#include "broker/protocol.h"
#include "broker/spawn.h"
#include "broker/wire.h"

#define DEFAULT_TIMEOUT_MS 5000

static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;
static int conn = -1;                    /* under call_lock */
static uint32_t my_client_id;            /* valid while conn >= 0 */
static uint64_t connections_made;        /* under call_lock */
_Atomic uint64_t kmt_broker_connection_now; /* written under call_lock; 0 while conn < 0 */
static __thread uint64_t call_connection; /* kmt_broker_call_connection() */

struct call {
    uint32_t op;
    struct iovec req[3];                 /* the head is added in front */
    int req_count;
    const int *fds;
    unsigned fd_count;
    /* the reply */
    NTSTATUS status;
    void *payload;                       /* malloc'd, size bytes */
    uint32_t size;
    int fds_in[KMT_BROKER_MAX_MSG_FDS];
    unsigned fds_in_count;
    bool fds_lost;                       /* the kernel dropped some (out of fds) */
    bool malformed;                      /* whole, but its fds do not match its head */
};

static unsigned timeout_ms(void)
{
    const char *env = getenv("KMTSHIM_BROKER_TIMEOUT_MS");
    long v = env ? strtol(env, NULL, 10) : 0;

    return v > 0 ? (unsigned)v : DEFAULT_TIMEOUT_MS;
}

static int wait_for(int sock, short events, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = kmt_broker_now_ms();
        struct pollfd p = { sock, events, 0 };
        int r;

        if (now >= deadline_ms)
            return -ETIMEDOUT;
        r = poll(&p, 1, (int)(deadline_ms - now));
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -errno;
    }
}

/* 0, -ETIMEDOUT or another -errno (the peer is gone). */
static int send_all(int sock, struct iovec *iov, int n, const int *fds, unsigned nfds, uint64_t deadline_ms)
{
    while (n) {
        ssize_t sent = kmt_wire_send(sock, iov, n, fds, nfds);

        if (sent < 0) {
            int r;

            if (errno != EAGAIN)
                return -errno;
            if ((r = wait_for(sock, POLLOUT, deadline_ms)))
                return r;
            continue;
        }
        nfds = 0;                        /* they went with the first byte */
        while (n && (size_t)sent >= iov->iov_len) {
            sent -= iov->iov_len;
            iov++;
            n--;
        }
        if (n) {
            iov->iov_base = (char *)iov->iov_base + sent;
            iov->iov_len -= sent;
        }
    }
    return 0;
}

static int recv_all(int sock, void *buf, size_t len, struct call *c, unsigned *trouble, uint64_t deadline_ms)
{
    while (len) {
        ssize_t got = kmt_wire_recv(sock, buf, len, c->fds_in, &c->fds_in_count,
                                    KMT_BROKER_MAX_MSG_FDS, trouble);
        int r;

        if (got > 0) {
            buf = (char *)buf + got;
            len -= got;
            continue;
        }
        if (!got)
            return -EPIPE;
        if (errno != EAGAIN)
            return -errno;
        if ((r = wait_for(sock, POLLIN, deadline_ms)))
            return r;
    }
    return 0;
}

static void call_free_reply(struct call *c)
{
    free(c->payload);
    c->payload = NULL;
    kmt_wire_close_fds(c->fds_in, c->fds_in_count);
    c->fds_in_count = 0;
}

/* A broker that refused us (out of fds) said why, then hung up: its
 * failed reply may still wait on the socket. */
static bool read_refusal(int sock, struct call *c)
{
    struct kmt_broker_head head;
    unsigned trouble = 0;

    if (recv_all(sock, &head, sizeof(head), c, &trouble, 0) || head.op != c->op || !head.status || head.size
        || head.fd_count || c->fds_in_count)
        return false;
    c->status = head.status;
    c->size = 0;
    return true;
}

/* One request and its reply on sock.  The transport's status:
 * STATUS_SUCCESS (c->status is the broker's; c->fds_lost and c->malformed
 * tell what was wrong with a whole reply), STATUS_IO_TIMEOUT or
 * STATUS_PORT_DISCONNECTED (the connection is unusable). */
static NTSTATUS exchange(int sock, struct call *c, uint64_t deadline_ms)
{
    struct kmt_broker_head head = { c->op, 0, 0, c->fd_count };
    struct iovec iov[4];
    unsigned trouble = 0;
    int r;

    iov[0].iov_base = &head;
    iov[0].iov_len = sizeof(head);
    for (int i = 0; i < c->req_count; i++) {
        iov[i + 1] = c->req[i];
        head.size += c->req[i].iov_len;
    }
    c->payload = NULL;
    c->fds_in_count = 0;
    c->fds_lost = c->malformed = false;
    if ((r = send_all(sock, iov, c->req_count + 1, c->fds, c->fd_count, deadline_ms))) {
        if (r != -ETIMEDOUT && read_refusal(sock, c))
            return STATUS_SUCCESS;
        goto failed;
    }
    if ((r = recv_all(sock, &head, sizeof(head), c, &trouble, deadline_ms)))
        goto failed;
    /* a failed reply carries nothing: fds with one are closed here */
    if (head.op != c->op || head.size > KMT_BROKER_MAX_REPLY || (head.status && (head.size || head.fd_count))) {
        r = -EPROTO;
        goto failed;
    }
    if (head.size && !(c->payload = malloc(head.size))) {
        r = -ENOMEM;
        goto failed;
    }
    if ((r = recv_all(sock, c->payload, head.size, c, &trouble, deadline_ms)))
        goto failed;
    if ((trouble & KMT_WIRE_EXCESS) || c->fds_in_count > head.fd_count)
        c->malformed = true;
    else if (c->fds_in_count < head.fd_count)
        c->fds_lost = (trouble & KMT_WIRE_TRUNCATED) != 0;
    c->malformed |= !c->fds_lost && c->fds_in_count != head.fd_count;
    c->status = head.status;
    c->size = head.size;
    return STATUS_SUCCESS;

failed:
    call_free_reply(c);
    if (r == -ETIMEDOUT) {
        ERR_(broker, "the broker did not answer in %u ms; dropping the connection\n", timeout_ms());
        return STATUS_IO_TIMEOUT;
    }
    if (r == -ENOMEM)
        ERR_(broker, "no memory for the broker's reply; dropping the connection\n");
    else if (r == -EPROTO)
        ERR_(broker, "malformed reply from the broker; dropping the connection\n");
    else
        ERR_(broker, "the broker is gone (%s)\n", strerror(-r));
    return STATUS_PORT_DISCONNECTED;
}

static void drop_connection(void)
{
    /* first: a keyed mutex taken from now on sees the connection gone
     * before the broker can see its references go */
    atomic_store_explicit(&kmt_broker_connection_now, 0, memory_order_seq_cst);
    if (conn >= 0)
        kmt_fd_close(conn);
    conn = -1;
    my_client_id = 0;
}

/* Whether the broker hung up on sock (it died): it never writes unasked,
 * so a hang-up is all a poll of an idle connection can show. */
static bool hung_up(int sock)
{
    struct pollfd p = { sock, POLLRDHUP, 0 };

    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/* Connects and says hello; under call_lock.  A broker that was exiting
 * as we connected hangs up on the hello: then once more, which finds
 * (or starts) its successor. */
static NTSTATUS connect_locked(uint64_t deadline_ms)
{
    char dir[4096];
    int r;

    if ((r = kmt_broker_dir_path(dir, sizeof(dir))) == -2) {
        ERR_(broker, "KMTSHIM_BROKER_DIR must be an absolute path\n");
        return STATUS_INVALID_PARAMETER;
    }
    if (r) {
        ERR_(broker, "broker directory path too long\n");
        return STATUS_NAME_TOO_LONG;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        struct kmt_broker_hello_req req = { KMT_BROKER_PROTOCOL_VERSION };
        struct call c = { .op = KMT_BROKER_OP_HELLO, .req = { { &req, sizeof(req) } }, .req_count = 1 };
        struct kmt_broker_hello_reply reply;
        NTSTATUS status;
        int sock = kmt_broker_connect(dir, deadline_ms, &status);

        if (sock < 0)
            return status;
        kmt_fd_track(sock);
        kmt_broker_connect_done(sock);
        status = exchange(sock, &c, deadline_ms);
        if (status == STATUS_SUCCESS && c.status == STATUS_SUCCESS && c.size == sizeof(reply)
            && !c.fds_in_count && !c.fds_lost && !c.malformed) {
            memcpy(&reply, c.payload, sizeof(reply));
            call_free_reply(&c);
            conn = sock;
            my_client_id = reply.client_id;
            atomic_store_explicit(&kmt_broker_connection_now, ++connections_made, memory_order_relaxed);
            TRACE_(broker, "connected to broker %u as client %u\n", reply.broker_pid, reply.client_id);
            return STATUS_SUCCESS;
        }
        kmt_fd_close(sock);
        if (status == STATUS_SUCCESS && c.status == STATUS_INSUFFICIENT_RESOURCES) {
            ERR_(broker, "the broker is out of file descriptors\n");
            call_free_reply(&c);
            return STATUS_INSUFFICIENT_RESOURCES;
        }
        if (status == STATUS_SUCCESS) {
            ERR_(broker, "the broker refused the hello (%s): another protocol version?\n",
                 kmt_debugstr_status(c.status));
            call_free_reply(&c);
            return STATUS_PORT_DISCONNECTED;
        }
        if (status != STATUS_PORT_DISCONNECTED)
            return status;
    }
    return STATUS_PORT_DISCONNECTED;
}

/* Releases the references a well-formed OPEN_GLOBAL / OPEN_NT reply
 * took, which the caller will not get. */
static void give_back_refs(const struct call *c)
{
    const char *p = c->payload, *end = p + c->size;
    struct kmt_broker_objects_reply head;

    if ((c->op != KMT_BROKER_OP_OPEN_GLOBAL && c->op != KMT_BROKER_OP_OPEN_NT) || c->status
        || c->size < sizeof(head))
        return;
    memcpy(&head, p, sizeof(head));
    p += sizeof(head);
    for (unsigned i = 0; i < head.count && (size_t)(end - p) >= sizeof(struct kmt_broker_object_desc); i++) {
        struct kmt_broker_object_desc d;

        memcpy(&d, p, sizeof(d));
        p += sizeof(d);
        if (d.id)
            kmt_broker_release(d.id);
        if ((size_t)(end - p) < d.blob_size)
            break;
        p += d.blob_size;
    }
}

/* The call on the process's connection, connecting first if needed.
 * Returns the broker's status, or the transport's on failure. */
static NTSTATUS broker_call(struct call *c)
{
    uint64_t deadline_ms;
    NTSTATUS status = STATUS_SUCCESS;

    /* the time waited for the lock is another call's, not this one's */
    pthread_mutex_lock(&call_lock);
    deadline_ms = kmt_broker_now_ms() + timeout_ms();
    /* a broker that died between calls: its successor serves this call */
    if (conn >= 0 && hung_up(conn)) {
        ERR_(broker, "the broker is gone (it hung up); connecting again\n");
        drop_connection();
    }
    if (conn < 0)
        status = connect_locked(deadline_ms);
    if (status == STATUS_SUCCESS && (status = exchange(conn, c, deadline_ms)) != STATUS_SUCCESS)
        drop_connection();
    call_connection = status == STATUS_SUCCESS
                      ? atomic_load_explicit(&kmt_broker_connection_now, memory_order_relaxed) : 0;
    pthread_mutex_unlock(&call_lock);
    if (status != STATUS_SUCCESS)
        return status;
    if (c->fds_lost) {
        ERR_(broker, "out of file descriptors: a reply of the broker lost its fds\n");
        give_back_refs(c);
        call_free_reply(c);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    if (c->malformed) {
        ERR_(broker, "malformed reply from the broker (op %u): its fds do not match\n", c->op);
        call_free_reply(c);
        return STATUS_INTERNAL_ERROR;
    }
    if (c->status != STATUS_SUCCESS)
        TRACE_(broker, "op %u: %s\n", c->op, kmt_debugstr_status(c->status));
    return c->status;
}

void kmt_broker_forget(void)
{
    /* the parent's lock may have been held by one of its other threads */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

    memcpy(&call_lock, &fresh, sizeof(fresh));
    drop_connection();
}

uint64_t kmt_broker_call_connection(void)
{
    return call_connection;
}

/* At the entry of every call: one refused before broker_call ran leaves
 * no connection of an earlier call behind (broker.h). */
static void call_begins(void)
{
    call_connection = KMT_BROKER_NOT_SENT;
}

bool kmt_broker_connection_lost(uint64_t taken_on)
{
    bool lost;

    if (taken_on != atomic_load_explicit(&kmt_broker_connection_now, memory_order_relaxed))
        return true;
    /* a call in flight on another thread notices for itself */
    if (pthread_mutex_trylock(&call_lock))
        return false;
    if ((lost = conn >= 0 && hung_up(conn))) {
        ERR_(broker, "the broker is gone (it hung up)\n");
        drop_connection();
    }
    lost |= taken_on != atomic_load_explicit(&kmt_broker_connection_now, memory_order_relaxed);
    pthread_mutex_unlock(&call_lock);
    return lost;
}

uint32_t kmt_broker_client_id_on(uint64_t *connection)
{
    uint64_t deadline_ms;
    uint32_t id = 0;

    *connection = 0;
    pthread_mutex_lock(&call_lock);
    deadline_ms = kmt_broker_now_ms() + timeout_ms();
    if (conn >= 0 || connect_locked(deadline_ms) == STATUS_SUCCESS) {
        id = my_client_id;
        *connection = atomic_load_explicit(&kmt_broker_connection_now, memory_order_relaxed);
    }
    pthread_mutex_unlock(&call_lock);
    return id;
}

uint32_t kmt_broker_client_id(void)
{
    uint64_t connection;

    return kmt_broker_client_id_on(&connection);
}

void kmt_broker_object_free(struct kmt_broker_object *obj)
{
    free(obj->blob);
    obj->blob = NULL;
    kmt_wire_close_fds(obj->fds, obj->fd_count);
    obj->fd_count = 0;
}

static bool valid_kind(uint32_t kind)
{
    return kind >= KMT_BROKER_RESOURCE && kind <= KMT_BROKER_KEYED_MUTEX;
}

NTSTATUS kmt_broker_create(const struct kmt_broker_create *c, uint64_t *id, D3DKMT_HANDLE *global_handle)
{
    struct kmt_broker_create_req req;
    struct kmt_broker_create_reply reply;
    struct call call = { .op = KMT_BROKER_OP_CREATE, .req_count = 2 };
    NTSTATUS status;

    call_begins();
    if (!c || !id || !valid_kind(c->kind) || c->blob_size > KMT_BROKER_MAX_BLOB
        || (c->blob_size && !c->blob) || c->fd_count > KMT_BROKER_MAX_FDS || (c->fd_count && !c->fds)
        || (c->holder_offset >= 0 && !c->fd_count) || c->holder_offset < -1)
        return STATUS_INVALID_PARAMETER;
    req.kind = c->kind;
    req.global = c->global;
    req.holder_offset = c->holder_offset;
    req.blob_size = c->blob_size;
    call.req[0] = (struct iovec){ &req, sizeof(req) };
    call.req[1] = (struct iovec){ (void *)c->blob, c->blob_size };
    call.fds = c->fds;
    call.fd_count = c->fd_count;
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    if (call.size != sizeof(reply) || call.fds_in_count) {
        call_free_reply(&call);
        return STATUS_INTERNAL_ERROR;    /* malformed */
    }
    memcpy(&reply, call.payload, sizeof(reply));
    call_free_reply(&call);
    *id = reply.id;
    if (global_handle)
        *global_handle = reply.global_handle;
    return STATUS_SUCCESS;
}

/* Undoes parse_objects' work on out[0..n-1]: their fds are still the
 * reply's. */
static void forget_parsed(struct kmt_broker_object *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(out[i].blob);
        out[i].blob = NULL;
        out[i].fd_count = 0;
    }
}

/* The objects of an OPEN_GLOBAL / OPEN_NT reply into out[0..max-1]. */
static NTSTATUS parse_objects(struct call *call, struct kmt_broker_object *out, unsigned max, unsigned *count)
{
    const char *p = call->payload, *end = p + call->size;
    struct kmt_broker_objects_reply head;
    unsigned fd_next = 0, done = 0;

    if (call->size < sizeof(head))
        goto malformed;
    memcpy(&head, p, sizeof(head));
    p += sizeof(head);
    if (!head.count || head.count > KMT_BROKER_MAX_NT_OBJECTS || head.count > max)
        goto malformed;
    for (; done < head.count; done++) {
        struct kmt_broker_object_desc d;
        struct kmt_broker_object *o = &out[done];

        if ((size_t)(end - p) < sizeof(d))
            goto malformed;
        memcpy(&d, p, sizeof(d));
        p += sizeof(d);
        if (d.blob_size > KMT_BROKER_MAX_BLOB || (size_t)(end - p) < d.blob_size
            || d.fd_count > KMT_BROKER_MAX_FDS || d.fd_count > call->fds_in_count - fd_next)
            goto malformed;
        memset(o, 0, sizeof(*o));
        o->id = d.id;
        o->connection = call_connection;
        o->kind = d.kind;
        o->global_handle = d.global_handle;
        o->blob_size = d.blob_size;
        if (!(o->blob = malloc(d.blob_size ? d.blob_size : 1)))
            goto no_memory;
        memcpy(o->blob, p, d.blob_size);
        p += d.blob_size;
        memcpy(o->fds, call->fds_in + fd_next, d.fd_count * sizeof(int));
        o->fd_count = d.fd_count;
        fd_next += d.fd_count;
    }
    if (p != end || fd_next != call->fds_in_count)
        goto malformed;
    call->fds_in_count = 0;              /* now the caller's */
    call_free_reply(call);
    *count = done;
    return STATUS_SUCCESS;

no_memory:
    forget_parsed(out, done);
    give_back_refs(call);
    call_free_reply(call);
    return STATUS_NO_MEMORY;

malformed:
    /* the connection stays: it is the other threads' too, and its framing held */
    forget_parsed(out, done);
    call_free_reply(call);
    ERR_(broker, "malformed object list from the broker\n");
    return STATUS_INTERNAL_ERROR;
}

NTSTATUS kmt_broker_open_global(D3DKMT_HANDLE global, uint32_t kind, bool take_ref,
                                struct kmt_broker_object *out)
{
    struct kmt_broker_open_global_req req = { global, kind, take_ref };
    struct call call = { .op = KMT_BROKER_OP_OPEN_GLOBAL, .req = { { &req, sizeof(req) } }, .req_count = 1 };
    NTSTATUS status;
    unsigned count;

    call_begins();
    if (!out)
        return STATUS_INVALID_PARAMETER;
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    return parse_objects(&call, out, 1, &count);
}

NTSTATUS kmt_broker_release(uint64_t id)
{
    struct kmt_broker_release_req req = { id };
    struct call call = { .op = KMT_BROKER_OP_RELEASE, .req = { { &req, sizeof(req) } }, .req_count = 1 };
    NTSTATUS status = broker_call(&call);

    call_free_reply(&call);
    return status;
}

NTSTATUS kmt_broker_set_blob(uint64_t id, const void *blob, uint32_t blob_size)
{
    struct kmt_broker_set_blob_req req = { id, blob_size, 0 };
    struct call call = { .op = KMT_BROKER_OP_SET_BLOB, .req_count = 2 };
    NTSTATUS status;

    call_begins();
    if (blob_size > KMT_BROKER_MAX_BLOB || (blob_size && !blob))
        return STATUS_INVALID_PARAMETER;
    call.req[0] = (struct iovec){ &req, sizeof(req) };
    call.req[1] = (struct iovec){ (void *)blob, blob_size };
    status = broker_call(&call);
    call_free_reply(&call);
    return status;
}

/* A reply that is one fd (an NT handle). */
static NTSTATUS take_nt_fd(struct call *call, int *nt_fd)
{
    if (call->size || call->fds_in_count != 1) {
        call_free_reply(call);
        return STATUS_INTERNAL_ERROR;    /* malformed */
    }
    *nt_fd = call->fds_in[0];
    call->fds_in_count = 0;
    call_free_reply(call);
    return STATUS_SUCCESS;
}

static NTSTATUS check_name(const char *name, uint32_t *size)
{
    size_t len = strlen(name);

    if (!len)
        return STATUS_INVALID_PARAMETER;
    if (len >= KMT_BROKER_MAX_NAME)
        return STATUS_NAME_TOO_LONG;
    *size = len + 1;
    return STATUS_SUCCESS;
}

NTSTATUS kmt_broker_share_nt(const uint64_t *ids, unsigned count, const char *name, uint32_t access, int *nt_fd)
{
    struct kmt_broker_share_nt_req req = { .count = count, .access = access };
    struct call call = { .op = KMT_BROKER_OP_SHARE_NT, .req_count = 2 };
    NTSTATUS status;

    call_begins();
    if (!ids || !nt_fd || !count || count > KMT_BROKER_MAX_NT_OBJECTS)
        return STATUS_INVALID_PARAMETER;
    if (name && (status = check_name(name, &req.name_size)) != STATUS_SUCCESS)
        return status;
    memcpy(req.ids, ids, count * sizeof(*ids));
    call.req[0] = (struct iovec){ &req, sizeof(req) };
    call.req[1] = (struct iovec){ (void *)name, req.name_size };
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    return take_nt_fd(&call, nt_fd);
}

/* An NT handle (a Unix stream socket) whose other end is closed: the
 * broker that kept that end is gone (it keeps it while any copy of the
 * handle is open), and the objects it named went with it. */
static bool nt_handle_orphaned(int nt_fd)
{
    int domain, type;
    socklen_t len = sizeof(int);

    if (getsockopt(nt_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) || domain != AF_UNIX)
        return false;
    len = sizeof(int);
    if (getsockopt(nt_fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
        return false;
    return hung_up(nt_fd);
}

NTSTATUS kmt_broker_open_nt(int nt_fd, uint32_t kind, bool take_ref,
                            struct kmt_broker_object *out, unsigned max, unsigned *count)
{
    struct kmt_broker_open_nt_req req = { kind, take_ref, max, 0 };
    struct call call = { .op = KMT_BROKER_OP_OPEN_NT, .req = { { &req, sizeof(req) } }, .req_count = 1,
                         .fds = &nt_fd, .fd_count = 1 };
    NTSTATUS status;

    call_begins();
    if (nt_fd < 0 || fcntl(nt_fd, F_GETFD) < 0)
        return STATUS_INVALID_HANDLE;
    if (!out || !count || !max)
        return STATUS_INVALID_PARAMETER;
    if (nt_handle_orphaned(nt_fd))
        return STATUS_DEVICE_REMOVED;
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    return parse_objects(&call, out, max, count);
}

NTSTATUS kmt_broker_open_name(const char *name, uint32_t kind, uint32_t access, int *nt_fd)
{
    struct kmt_broker_open_name_req req = { kind, access, 0, 0 };
    struct call call = { .op = KMT_BROKER_OP_OPEN_NAME, .req_count = 2 };
    NTSTATUS status;

    call_begins();
    if (!name || !nt_fd)
        return STATUS_INVALID_PARAMETER;
    if ((status = check_name(name, &req.name_size)) != STATUS_SUCCESS)
        return status;
    call.req[0] = (struct iovec){ &req, sizeof(req) };
    call.req[1] = (struct iovec){ (void *)name, req.name_size };
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    return take_nt_fd(&call, nt_fd);
}

NTSTATUS kmt_broker_query_stats(struct kmt_broker_stats *stats)
{
    struct call call = { .op = KMT_BROKER_OP_STATS };
    struct kmt_broker_stats_reply reply;
    NTSTATUS status;

    call_begins();
    if (!stats)
        return STATUS_INVALID_PARAMETER;
    if ((status = broker_call(&call)) != STATUS_SUCCESS)
        return status;
    if (call.size != sizeof(reply) || call.fds_in_count) {
        call_free_reply(&call);
        return STATUS_INTERNAL_ERROR;    /* malformed */
    }
    memcpy(&reply, call.payload, sizeof(reply));
    call_free_reply(&call);
    *stats = (struct kmt_broker_stats){ reply.broker_pid, reply.clients, reply.objects, reply.global_handles,
                                        reply.nt_shares, reply.names, reply.fds, reply.objects_freed };
    return STATUS_SUCCESS;
}
