/*
 * The broker's books: objects, their global handles, and each client's
 * counted references.  An object lives while a client holds a reference
 * or an NT share names it; it dies with the last one, closing its fds.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

struct broker broker;

void books_init(void)
{
    struct timespec ts;
    uint64_t seed;

    clock_gettime(CLOCK_REALTIME, &ts);
    seed = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
    broker.next_object_id = (seed << 16 | 1) & ~(1ull << 63);
    broker.salt_seed = seed;
    broker.next_client_id = 1;
    broker.stats.broker_pid = getpid();
}

struct object *books_create(uint32_t kind, uint32_t global_handle, const void *blob, uint32_t blob_size,
                            const int *fds, unsigned fd_count, int32_t holder_offset)
{
    struct object *obj = calloc(1, sizeof(*obj));

    if (!obj || !(obj->blob = malloc(blob_size ? blob_size : 1))) {
        free(obj);
        return NULL;
    }
    memcpy(obj->blob, blob, blob_size);
    obj->blob_size = blob_size;
    obj->id = broker.next_object_id++;
    obj->kind = kind;
    obj->global_handle = global_handle;
    memcpy(obj->fds, fds, fd_count * sizeof(int));
    obj->fd_count = fd_count;
    obj->holder_offset = holder_offset;
    obj->next = broker.objects;
    if (obj->next)
        obj->next->prev = obj;
    broker.objects = obj;
    broker.stats.objects++;
    broker.stats.global_handles += !!obj->global_handle;
    broker.stats.fds += fd_count;
    return obj;
}

struct object *books_find_global(uint32_t global_handle)
{
    if (!global_handle)
        return NULL;
    for (struct object *obj = broker.objects; obj; obj = obj->next)
        if (obj->global_handle == global_handle)
            return obj;
    return NULL;
}

void books_ref(struct object *obj)
{
    obj->refs++;
}

void books_unref(struct object *obj)
{
    if (--obj->refs)
        return;
    if (obj->prev)
        obj->prev->next = obj->next;
    else
        broker.objects = obj->next;
    if (obj->next)
        obj->next->prev = obj->prev;
    for (unsigned i = 0; i < obj->fd_count; i++)
        close(obj->fds[i]);
    broker.stats.objects--;
    broker.stats.global_handles -= !!obj->global_handle;
    broker.stats.fds -= obj->fd_count;
    broker.stats.objects_freed++;
    free(obj->blob);
    free(obj);
}

bool books_set_blob(struct object *obj, const void *blob, uint32_t blob_size)
{
    void *copy = malloc(blob_size ? blob_size : 1);

    if (!copy)
        return false;
    memcpy(copy, blob, blob_size);
    free(obj->blob);
    obj->blob = copy;
    obj->blob_size = blob_size;
    return true;
}

/* splitmix64's finalizer: distinct connections get unrelated salts */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t client_ref_id(const struct client *c, const struct object *obj)
{
    return obj->id ^ c->salt;
}

struct client *client_new(int sock)
{
    struct client *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->sock = sock;
    c->id = broker.next_client_id++;
    c->salt = mix(broker.salt_seed + c->id) | 1ull << 63;
    /* the holder word's waiter bit stays clear, and id | bit never reads
     * as KMT_BROKER_HOLDER_ABANDONED */
    if (broker.next_client_id >= KMT_BROKER_HOLDER_WAITERS - 1)
        broker.next_client_id = 1;
    c->next = broker.clients;
    if (c->next)
        c->next->prev = c;
    broker.clients = c;
    broker.stats.clients++;
    return c;
}

bool client_add_ref(struct client *c, struct object *obj)
{
    for (unsigned i = 0; i < c->ref_count; i++) {
        if (c->refs[i].obj == obj) {
            if (c->refs[i].count == UINT32_MAX)
                return false;
            c->refs[i].count++;
            books_ref(obj);
            return true;
        }
    }
    if (c->ref_count == c->ref_cap) {
        unsigned cap = c->ref_cap ? c->ref_cap * 2 : 8;
        struct client_ref *refs = realloc(c->refs, cap * sizeof(*refs));

        if (!refs)
            return false;
        c->refs = refs;
        c->ref_cap = cap;
    }
    c->refs[c->ref_count++] = (struct client_ref){ obj, 1 };
    books_ref(obj);
    return true;
}

struct object *client_find_ref(struct client *c, uint64_t id)
{
    for (unsigned i = 0; i < c->ref_count; i++)
        if (client_ref_id(c, c->refs[i].obj) == id)
            return c->refs[i].obj;
    return NULL;
}

bool client_drop_ref(struct client *c, uint64_t id)
{
    for (unsigned i = 0; i < c->ref_count; i++) {
        struct object *obj = c->refs[i].obj;

        if (client_ref_id(c, obj) != id)
            continue;
        if (!--c->refs[i].count)
            c->refs[i] = c->refs[--c->ref_count];
        books_unref(obj);
        return true;
    }
    return false;
}

void client_free(struct client *c)
{
    /* every holder word first: a waiter woken by it may open the object
     * again, which needs it alive */
    for (unsigned i = 0; i < c->ref_count; i++)
        holder_abandon(c->refs[i].obj, c->id);
    for (unsigned i = 0; i < c->ref_count; i++)
        for (uint32_t n = c->refs[i].count; n; n--)
            books_unref(c->refs[i].obj);
    if (c->prev)
        c->prev->next = c->next;
    else
        broker.clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    close(c->sock);
    for (unsigned i = 0; i < c->fd_count; i++)
        close(c->fds[i]);
    for (unsigned i = 0; i < c->out_fd_count; i++)
        close(c->out_fds[i]);
    broker.stats.clients--;
    free(c->payload);
    free(c->out);
    free(c->refs);
    free(c);
}
