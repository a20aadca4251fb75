/*
 * kmtshim-broker's state, shared by its files: the objects and their
 * references (books.c), global handle values (globals.c), the NT shares
 * and names (nt.c), the holder-word
 * rule (holder.c), the clients' connections (conn.c) and their requests
 * (requests.c), and the main loop (main.c).
 *
 * The broker is one thread: every request runs to completion, so nothing
 * here is locked.  It never blocks on a client: sockets are non-blocking,
 * a request is buffered until complete, a reply waits in its client's
 * queue until the socket takes it.
 */
#ifndef KMTSHIM_BROKER_DAEMON_H
#define KMTSHIM_BROKER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "broker/protocol.h"

#define BROKER_ERR(...) do { fprintf(stderr, "err:kmtshim-broker: " __VA_ARGS__); } while (0)

struct object {
    struct object *prev, *next;
    uint64_t id;
    uint32_t kind;                       /* enum kmt_broker_kind */
    uint32_t global_handle;              /* 0: NT-only */
    void *blob;
    uint32_t blob_size;
    int fds[KMT_BROKER_MAX_FDS];
    unsigned fd_count;
    int32_t holder_offset;               /* -1: no holder word */
    uint32_t refs;                       /* clients' references + NT shares naming it */
};

struct client_ref {
    struct object *obj;
    uint32_t count;
};

struct client {
    struct client *prev, *next;
    int sock;
    uint32_t id;
    uint64_t salt;                       /* see client_ref_id */
    bool hello_done;
    bool closing;                        /* drop once the queued reply is out */
    /* the request being received */
    struct kmt_broker_head head;
    uint32_t head_got;
    uint8_t *payload;
    uint32_t payload_got;
    int fds[KMT_BROKER_MAX_FDS];
    unsigned fd_count;
    bool fds_truncated;                  /* the kernel dropped some of its fds */
    /* the reply being sent */
    uint8_t *out;
    size_t out_len, out_sent;
    int out_fds[KMT_BROKER_MAX_MSG_FDS];
    unsigned out_fd_count;
    /* references */
    struct client_ref *refs;
    unsigned ref_count, ref_cap;
};

struct nt_handle {
    struct nt_handle *next;
    int end;                             /* the broker's end of the pair */
    dev_t dev;                           /* identify the program's end */
    ino_t ino;
    uint64_t cookie;                     /* SO_COOKIE; 0 where the kernel has none */
};

struct share {
    struct share *prev, *next;
    struct object *objects[KMT_BROKER_MAX_NT_OBJECTS];
    unsigned count;
    char *name;                          /* NULL: unnamed */
    uint32_t access;
    struct nt_handle *handles;           /* never empty while the share lives */
};

struct broker {
    struct object *objects;
    struct client *clients;
    struct share *shares;
    uint64_t next_object_id;
    uint32_t next_client_id;
    uint64_t salt_seed;
    struct kmt_broker_stats stats;
};
extern struct broker broker;

/* books.c */
void books_init(void);
/* global_handle: from globals_take, or 0 for none. */
struct object *books_create(uint32_t kind, uint32_t global_handle, const void *blob, uint32_t blob_size,
                            const int *fds, unsigned fd_count, int32_t holder_offset);
struct object *books_find_global(uint32_t global_handle);
void books_ref(struct object *obj);
void books_unref(struct object *obj);
bool books_set_blob(struct object *obj, const void *blob, uint32_t blob_size);
struct client *client_new(int sock);
bool client_add_ref(struct client *c, struct object *obj);
/* The id c knows its reference to obj by: the object's id salted with
 * the connection's, so that an id of an ended connection (the process
 * reconnected and opened the object again) names nothing on this one;
 * never 0. */
uint64_t client_ref_id(const struct client *c, const struct object *obj);
struct object *client_find_ref(struct client *c, uint64_t id);
bool client_drop_ref(struct client *c, uint64_t id);
/* The client's connection is gone: abandon what it held, drop its
 * references, free it. */
void client_free(struct client *c);

/* globals.c */
void globals_init(const char *dir);
/* A global handle no live object holds; 0 when every index is live. */
uint32_t globals_take(void);

/* holder.c */
bool holder_valid(int fd, int32_t offset);
void holder_abandon(struct object *obj, uint32_t client_id);

/* nt.c */
NTSTATUS nt_share(struct object *const *objects, unsigned count, const char *name, uint32_t access,
                  int *program_end);
struct share *nt_find_fd(int fd);
NTSTATUS nt_open_name(const char *name, uint32_t kind, uint32_t access, int *program_end);
/* The program's end of h closed everywhere: forget it, and the share
 * with its last handle. */
void nt_hangup(struct share *s, struct nt_handle *h);
/* Forgets every handle whose program end is closed: a request sees the
 * closes its client made before sending it. */
void nt_reap_hangups(void);

/* conn.c */
/* Reads what the socket has; complete requests go to requests_run.
 * false: the client is to be dropped. */
bool conn_read(struct client *c);
/* Sends what the queue holds; false: the client is to be dropped. */
bool conn_write(struct client *c);
/* Queues a reply: the parts copied, the fds duplicated.  false with
 * errno ENOMEM, or EMFILE / ENFILE when the fds could not be. */
bool conn_reply(struct client *c, NTSTATUS status, const struct iovec *parts, unsigned part_count,
                const int *fds, unsigned fd_count);

/* requests.c */
/* Runs the client's complete request; false: it was malformed, drop the
 * client.  One whose fds were truncated fails with
 * STATUS_INSUFFICIENT_RESOURCES. */
bool requests_run(struct client *c);

#endif /* KMTSHIM_BROKER_DAEMON_H */
