/*
 * What the broker tests share (broker_util.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/protocol.h"
#include "broker_util.h"


void peer_start(struct peer *p, const int *inherit, unsigned inherit_count, const char *const *steps)
{
    kmt_test_peer_start(&p->peer, "broker_peer", inherit, inherit_count, steps);
}

char *peer_line(struct peer *p, const char *prefix)
{
    return kmt_test_peer_line(&p->peer, prefix);
}

void peer_finish(struct peer *p)
{
    int status = kmt_test_peer_end(&p->peer);

    ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "peer status 0x%x", status);
}

void peer_kill(struct peer *p)
{
    int status;

    kill(p->peer.pid, SIGKILL);
    ck_assert_int_eq(waitpid(p->peer.pid, &status, 0), p->peer.pid);
    close(p->peer.in);
    fclose(p->peer.out);
}

struct kmt_broker_stats broker_stats(void)
{
    struct kmt_broker_stats s;

    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    return s;
}

/* Waits (at most 10 s) until the count at `field` is `want`. */
static struct kmt_broker_stats wait_count(size_t field, uint32_t want)
{
    struct kmt_broker_stats s = broker_stats();

    for (int i = 0; i < 10000 && *(uint32_t *)((char *)&s + field) != want; i++) {
        usleep(1000);
        s = broker_stats();
    }
    ck_assert_uint_eq(*(uint32_t *)((char *)&s + field), want);
    return s;
}

struct kmt_broker_stats broker_wait_objects(uint32_t objects)
{
    return wait_count(offsetof(struct kmt_broker_stats, objects), objects);
}

struct kmt_broker_stats broker_wait_clients(uint32_t clients)
{
    return wait_count(offsetof(struct kmt_broker_stats, clients), clients);
}

int test_memfd(const char *text)
{
    int fd = memfd_create("kmt-broker-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    ck_assert_int_eq(pwrite(fd, text, strlen(text), 0), (ssize_t)strlen(text));
    /* as a holder word's file must be (broker.h) */
    ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    return fd;
}

uint64_t broker_create(uint32_t kind, bool global, const char *blob, int fd, int32_t holder,
                       D3DKMT_HANDLE *handle)
{
    struct kmt_broker_create c = { kind, global, blob, (uint32_t)strlen(blob), &fd, fd >= 0, holder };
    uint64_t id = 0;

    ck_assert_status(kmt_broker_create(&c, &id, handle), STATUS_SUCCESS);
    ck_assert_uint_ne(id, 0);
    return id;
}

unsigned count_memfds(pid_t pid, const char *name)
{
    char dir[64], path[PATH_MAX], target[PATH_MAX], want[128];
    struct dirent *e;
    unsigned n = 0;
    DIR *d;

    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    snprintf(want, sizeof(want), "/memfd:%s ", name);
    ck_assert_ptr_nonnull(d = opendir(dir));
    while ((e = readdir(d))) {
        ssize_t len;

        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if ((len = readlink(path, target, sizeof(target) - 1)) <= 0)
            continue;
        target[len] = 0;
        n += !strncmp(target, want, strlen(want));
    }
    closedir(d);
    return n;
}

bool process_exists(pid_t pid)
{
    char path[64], stat[256], *paren;
    FILE *f;
    size_t len;

    /* a zombie has exited: whether its parent reaped it is not our business */
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return false;
    len = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[len] = 0;
    paren = strrchr(stat, ')');
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

int broker_raw_connect(const char *dir)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/" KMT_BROKER_SOCKET_NAME, dir);
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr))) {
        int err = errno;

        close(sock);
        errno = err;
        return -1;
    }
    return sock;
}
