/*
 * NT shares, their handles and names.
 *
 * An NT handle is one end of a socket pair; the broker keeps the other
 * and polls it: when every copy of the program's end is closed (in every
 * process), it hangs up.  A handle a program sends back is recognised by
 * its end's socket cookie (SO_COOKIE, Linux 4.14: never reused while the
 * system runs) and inode; where the kernel has no cookies, by the inode
 * alone, which a socket made after the end's last close may reuse.  A share is the objects one ShareObjects named;
 * it holds a reference to each and lives while any of its handles does
 * (open_name adds a handle to a share).  A name is the share's: compared
 * without regard to ASCII case, gone with the share.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

#ifndef SO_COOKIE
# define SO_COOKIE 57
#endif

/* The socket's cookie; 0 when the kernel has none. */
static uint64_t cookie_of(int fd)
{
    uint64_t cookie = 0;
    socklen_t len = sizeof(cookie);

    if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) || len != sizeof(cookie))
        return 0;
    return cookie;
}

static struct share *find_name(const char *name)
{
    for (struct share *s = broker.shares; s; s = s->next)
        if (s->name && !strcasecmp(s->name, name))
            return s;
    return NULL;
}

/* A new handle on s: the program's end in *program_end. */
static NTSTATUS add_handle(struct share *s, int *program_end)
{
    struct nt_handle *h = calloc(1, sizeof(*h));
    struct stat st;
    int pair[2];

    if (!h)
        return STATUS_NO_MEMORY;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair)) {
        free(h);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    /* the program's end never talks: it is only a handle */
    shutdown(pair[0], SHUT_WR);
    fstat(pair[0], &st);
    h->end = pair[1];
    h->dev = st.st_dev;
    h->ino = st.st_ino;
    h->cookie = cookie_of(pair[0]);
    h->next = s->handles;
    s->handles = h;
    *program_end = pair[0];
    return STATUS_SUCCESS;
}

NTSTATUS nt_share(struct object *const *objects, unsigned count, const char *name, uint32_t access,
                  int *program_end)
{
    struct share *s;
    NTSTATUS status;

    if (name && find_name(name))
        return STATUS_OBJECT_NAME_COLLISION;
    if (!(s = calloc(1, sizeof(*s))) || (name && !(s->name = strdup(name)))) {
        free(s);
        return STATUS_NO_MEMORY;
    }
    if ((status = add_handle(s, program_end)) != STATUS_SUCCESS) {
        free(s->name);
        free(s);
        return status;
    }
    for (unsigned i = 0; i < count; i++) {
        s->objects[i] = objects[i];
        books_ref(objects[i]);
    }
    s->count = count;
    s->access = access;
    s->next = broker.shares;
    if (s->next)
        s->next->prev = s;
    broker.shares = s;
    broker.stats.nt_shares++;
    broker.stats.names += !!name;
    return STATUS_SUCCESS;
}

struct share *nt_find_fd(int fd)
{
    struct stat st;
    uint64_t cookie;

    if (fstat(fd, &st) || !S_ISSOCK(st.st_mode))
        return NULL;
    cookie = cookie_of(fd);
    for (struct share *s = broker.shares; s; s = s->next)
        for (struct nt_handle *h = s->handles; h; h = h->next)
            if (h->dev == st.st_dev && h->ino == st.st_ino && h->cookie == cookie)
                return s;
    return NULL;
}

NTSTATUS nt_open_name(const char *name, uint32_t kind, uint32_t access, int *program_end)
{
    struct share *s = find_name(name);

    if (!s)
        return STATUS_OBJECT_NAME_NOT_FOUND;
    if (!access)
        return STATUS_ACCESS_DENIED;
    if (s->objects[0]->kind != kind)
        return STATUS_OBJECT_TYPE_MISMATCH;
    return add_handle(s, program_end);
}

void nt_hangup(struct share *s, struct nt_handle *h)
{
    struct nt_handle **p = &s->handles;

    while (*p != h)
        p = &(*p)->next;
    *p = h->next;
    close(h->end);
    free(h);
    if (s->handles)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        broker.shares = s->next;
    if (s->next)
        s->next->prev = s->prev;
    broker.stats.nt_shares--;
    broker.stats.names -= !!s->name;
    for (unsigned i = 0; i < s->count; i++)
        books_unref(s->objects[i]);
    free(s->name);
    free(s);
}

void nt_reap_hangups(void)
{
    struct pollfd *fds;
    size_t n = 0;

    for (struct share *s = broker.shares; s; s = s->next)
        for (struct nt_handle *h = s->handles; h; h = h->next)
            n++;
    if (!n || !(fds = malloc(n * sizeof(*fds))))
        return;
    n = 0;
    for (struct share *s = broker.shares; s; s = s->next)
        for (struct nt_handle *h = s->handles; h; h = h->next)
            fds[n++] = (struct pollfd){ h->end, 0, 0 };  /* hang-ups only */
    if (poll(fds, n, 0) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (!fds[i].revents)
                continue;
            /* found again by its fd: freeing a share frees its other handles */
            for (struct share *s = broker.shares; s; s = s->next)
                for (struct nt_handle *h = s->handles; h; h = h->next)
                    if (h->end == fds[i].fd) {
                        nt_hangup(s, h);
                        goto next;
                    }
        next:;
        }
    }
    free(fds);
}
