/*
 * The session broker (dlls/kmtshim/broker/broker.h) across processes: the
 * test and tests/unit/broker_peer, a separate program it starts, share
 * objects through a private broker (kmt_test_private_broker).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/protocol.h"
#include "test_util.h"

extern char **environ;

struct peer {
    pid_t pid;
    FILE *out;
    int in;                              /* its stdin: closing it ends "wait" */
};

/* Starts broker_peer with argv's steps; inherit: fds the peer gets as
 * fd 10, 11... (their numbers on its command line are the test's job). */
static void peer_start(struct peer *p, const int *inherit, unsigned inherit_count, const char *const *steps)
{
    const char *builddir = getenv("KMTSHIM_TEST_BUILDDIR");
    char path[PATH_MAX];
    const char *argv[32];
    posix_spawn_file_actions_t fa;
    int out[2], in[2];
    unsigned n = 0;

    ck_assert_ptr_nonnull(builddir);
    snprintf(path, sizeof(path), "%s/tests/unit/broker_peer", builddir);
    argv[n++] = path;
    while (*steps && n < 31)
        argv[n++] = *steps++;
    argv[n] = NULL;
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    for (unsigned i = 0; i < inherit_count; i++)
        posix_spawn_file_actions_adddup2(&fa, inherit[i], 10 + i);
    ck_assert_int_eq(posix_spawn(&p->pid, path, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(in[0]);
    p->out = fdopen(out[0], "r");
    p->in = in[1];
}

/* The peer's next line, which must start with `prefix`. */
static char *peer_line(struct peer *p, const char *prefix)
{
    static char line[256];

    ck_assert_msg(fgets(line, sizeof(line), p->out), "the peer ended before printing \"%s\"", prefix);
    line[strcspn(line, "\n")] = 0;
    ck_assert_msg(!strncmp(line, prefix, strlen(prefix)), "peer printed \"%s\", expected \"%s...\"", line,
                  prefix);
    return line + strlen(prefix);
}

static void peer_finish(struct peer *p)
{
    int status;

    close(p->in);
    ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
    ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "peer status 0x%x", status);
    fclose(p->out);
}

static void peer_kill(struct peer *p)
{
    int status;

    kill(p->pid, SIGKILL);
    ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
    close(p->in);
    fclose(p->out);
}

static struct kmt_broker_stats stats(void)
{
    struct kmt_broker_stats s;

    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    return s;
}

/* Waits (at most 10 s) until the broker's live object count is `objects`. */
static struct kmt_broker_stats wait_objects(uint32_t objects)
{
    struct kmt_broker_stats s = stats();

    for (int i = 0; i < 10000 && s.objects != objects; i++) {
        usleep(1000);
        s = stats();
    }
    ck_assert_uint_eq(s.objects, objects);
    return s;
}

static int test_memfd(const char *text)
{
    int fd = memfd_create("kmt-broker-test", MFD_CLOEXEC);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    ck_assert_int_eq(pwrite(fd, text, strlen(text), 0), (ssize_t)strlen(text));
    return fd;
}

static uint64_t create(uint32_t kind, bool global, const char *blob, int fd, int32_t holder,
                       D3DKMT_HANDLE *handle)
{
    struct kmt_broker_create c = { kind, global, blob, (uint32_t)strlen(blob), &fd, fd >= 0, holder };
    uint64_t id = 0;

    ck_assert_status(kmt_broker_create(&c, &id, handle), STATUS_SUCCESS);
    ck_assert_uint_ne(id, 0);
    return id;
}

/* How many of pid's fds are memfds named `name`. */
static unsigned count_memfds(pid_t pid, const char *name)
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

START_TEST(create_open_release_across_processes)
{
    char handle[16], *line;
    D3DKMT_HANDLE global;
    struct peer p;
    uint64_t id;
    int fd;

    kmt_test_private_broker();
    fd = test_memfd("test:bytes");
    id = create(KMT_BROKER_RESOURCE, true, "desc", fd, -1, &global);
    close(fd);
    ck_assert_uint_eq(global & 3, 2);
    ck_assert_uint_eq(global & 0xc0000000u, 0x40000000u);
    snprintf(handle, sizeof(handle), "0x%x", global);
    peer_start(&p, NULL, 0, (const char *[]){ "open-global", handle, "1", "stats", "release", "stats",
                                              "open-global", handle, "2", NULL });
    line = peer_line(&p, "open 0x00000000 ");
    ck_assert_str_eq(line, "desc test:bytes");
    line = peer_line(&p, "stats 0x00000000 ");
    ck_assert_int_eq(strtoul(line, &line, 10), stats().broker_pid);
    ck_assert_int_eq(strtoul(line, &line, 10), 2);    /* clients */
    ck_assert_int_eq(strtoul(line, &line, 10), 1);    /* objects */
    peer_line(&p, "released 0x00000000");
    peer_line(&p, "stats 0x00000000 ");
    peer_line(&p, "open 0xc000000d");                   /* another kind */
    peer_finish(&p);
    ck_assert_uint_eq(stats().objects, 1);
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    ck_assert_uint_eq(stats().objects, 0);
    ck_assert_uint_eq(stats().objects_freed, 1);
    ck_assert_uint_eq(stats().fds, 0);
}
END_TEST

START_TEST(global_handle_lives_while_a_holder_lives)
{
    struct kmt_broker_object o = { 0 };
    D3DKMT_HANDLE global;
    struct peer p;
    char *line;

    kmt_test_private_broker();
    peer_start(&p, NULL, 0, (const char *[]){ "create", "3", "1", "mutex", "wait", NULL });
    line = peer_line(&p, "created 0x00000000 ");
    strtoull(line, &line, 10);
    global = strtoul(line, NULL, 0);
    peer_line(&p, "ready");
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_KEYED_MUTEX, true, &o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.global_handle, global);
    ck_assert_uint_eq(o.kind, KMT_BROKER_KEYED_MUTEX);
    ck_assert_uint_eq(o.fd_count, 1);
    ck_assert_uint_eq(o.blob_size, 5);
    ck_assert_mem_eq(o.blob, "mutex", 5);
    kmt_broker_object_free(&o);
    peer_finish(&p);                     /* the creator is gone; we hold it */
    {
        struct kmt_broker_object q = { 0 };

        ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_KEYED_MUTEX, false, &q), STATUS_SUCCESS);
        ck_assert_uint_eq(q.id, 0);
        ck_assert_uint_eq(q.fd_count, 0);
        kmt_broker_object_free(&q);
    }
    ck_assert_status(kmt_broker_release(o.id), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_KEYED_MUTEX, false, &o),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_release(o.id), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(killed_last_holder_frees_the_object_and_its_fds)
{
    struct kmt_broker_object o = { 0 };
    struct kmt_broker_stats s;
    D3DKMT_HANDLE global;
    struct peer p;
    char *line;

    kmt_test_private_broker();
    peer_start(&p, NULL, 0, (const char *[]){ "create", "1", "1", "x", "wait", NULL });
    line = peer_line(&p, "created 0x00000000 ");
    strtoull(line, &line, 10);
    global = strtoul(line, NULL, 0);
    peer_line(&p, "ready");
    s = stats();
    ck_assert_uint_eq(s.objects, 1);
    ck_assert_uint_eq(s.fds, 1);
    ck_assert_uint_eq(count_memfds(s.broker_pid, "kmt-broker-peer"), 1);
    peer_kill(&p);
    s = wait_objects(0);
    ck_assert_uint_eq(s.fds, 0);
    ck_assert_uint_eq(s.global_handles, 0);
    ck_assert_uint_eq(s.objects_freed, 1);
    ck_assert_uint_eq(s.clients, 1);
    ck_assert_uint_eq(count_memfds(s.broker_pid, "kmt-broker-peer"), 0);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &o), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(bad_handles_and_ids)
{
    struct kmt_broker_object o = { 0 };
    struct kmt_broker_create c = { KMT_BROKER_RESOURCE, true, NULL, 0, NULL, 0, -1 };
    D3DKMT_HANDLE global;
    uint64_t id;

    kmt_test_private_broker();
    id = create(KMT_BROKER_SYNCOBJ, true, "s", -1, -1, &global);
    ck_assert_status(kmt_broker_open_global(0, KMT_BROKER_SYNCOBJ, true, &o), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_open_global(global & ~3u, KMT_BROKER_SYNCOBJ, true, &o),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_open_global(global + 0x40, KMT_BROKER_SYNCOBJ, true, &o),
                     STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &o), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_release(id + 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_release(0), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_set_blob(id + 1, "a", 1), STATUS_INVALID_PARAMETER);
    c.kind = 0;
    ck_assert_status(kmt_broker_create(&c, &id, &global), STATUS_INVALID_PARAMETER);
    c.kind = KMT_BROKER_RESOURCE;
    c.blob_size = KMT_BROKER_MAX_BLOB + 1;
    c.blob = "";
    ck_assert_status(kmt_broker_create(&c, &id, &global), STATUS_INVALID_PARAMETER);
    c.blob_size = 0;
    c.holder_offset = 0;                 /* a holder word needs fds[0] */
    ck_assert_status(kmt_broker_create(&c, &id, &global), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_create(NULL, &id, &global), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(stats().objects, 1);
}
END_TEST

START_TEST(set_blob_is_seen_by_the_next_open)
{
    struct kmt_broker_object o = { 0 };
    static char big[KMT_BROKER_MAX_BLOB];
    D3DKMT_HANDLE global;
    uint64_t id;

    kmt_test_private_broker();
    id = create(KMT_BROKER_RESOURCE, true, "old", -1, -1, &global);
    memset(big, 0x5a, sizeof(big));
    ck_assert_status(kmt_broker_set_blob(id, big, sizeof(big)), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, false, &o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.blob_size, sizeof(big));
    ck_assert_mem_eq(o.blob, big, sizeof(big));
    kmt_broker_object_free(&o);
}
END_TEST

START_TEST(client_ids_differ_between_processes)
{
    uint32_t mine;
    struct peer p;
    char *line;

    kmt_test_private_broker();
    mine = kmt_broker_client_id();
    ck_assert_uint_ne(mine, 0);
    ck_assert_uint_ne(mine, KMT_BROKER_HOLDER_ABANDONED);
    ck_assert_uint_eq(kmt_broker_client_id(), mine);
    peer_start(&p, NULL, 0, (const char *[]){ "client-id", NULL });
    line = peer_line(&p, "client ");
    ck_assert_uint_ne(strtoul(line, NULL, 10), 0);
    ck_assert_uint_ne(strtoul(line, NULL, 10), mine);
    peer_finish(&p);
}
END_TEST

/* N processes that start at once start one broker between them. */
START_TEST(simultaneous_starts_make_one_broker)
{
    enum { N = 8 };
    struct peer p[N];
    unsigned long pid = 0;

    kmt_test_private_broker();
    for (int i = 0; i < N; i++)
        peer_start(&p[i], NULL, 0, (const char *[]){ "stats", "wait", NULL });
    for (int i = 0; i < N; i++) {
        char *line = peer_line(&p[i], "stats 0x00000000 ");
        unsigned long got = strtoul(line, NULL, 10);

        if (!pid)
            pid = got;
        ck_assert_uint_eq(got, pid);
        peer_line(&p[i], "ready");
    }
    ck_assert_uint_eq(stats().clients, N + 1);
    for (int i = 0; i < N; i++)
        peer_finish(&p[i]);
}
END_TEST

static bool process_exists(pid_t pid)
{
    return !kill(pid, 0) || errno != ESRCH;
}

START_TEST(broker_exits_after_its_last_client)
{
    struct peer p;
    pid_t pid;

    kmt_test_private_broker();
    setenv("KMTSHIM_BROKER_LINGER_MS", "0", 1);
    peer_start(&p, NULL, 0, (const char *[]){ "stats", NULL });
    pid = strtoul(peer_line(&p, "stats 0x00000000 "), NULL, 10);
    peer_finish(&p);
    for (int i = 0; i < 10000 && process_exists(pid); i++)
        usleep(1000);
    ck_assert_msg(!process_exists(pid), "broker %d still runs without clients", (int)pid);
}
END_TEST

START_TEST(broker_lingers_for_the_next_client)
{
    struct peer p;
    pid_t pid;

    kmt_test_private_broker();
    setenv("KMTSHIM_BROKER_LINGER_MS", "60000", 1);
    peer_start(&p, NULL, 0, (const char *[]){ "stats", NULL });
    pid = strtoul(peer_line(&p, "stats 0x00000000 "), NULL, 10);
    peer_finish(&p);
    ck_assert_uint_eq(stats().broker_pid, pid);
    kill(pid, SIGKILL);                  /* ours: do not leave it lingering */
}
END_TEST

static Suite *broker_suite(void)
{
    Suite *s = suite_create("broker");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, create_open_release_across_processes);
    tcase_add_test(tc, global_handle_lives_while_a_holder_lives);
    tcase_add_test(tc, killed_last_holder_frees_the_object_and_its_fds);
    tcase_add_test(tc, bad_handles_and_ids);
    tcase_add_test(tc, set_blob_is_seen_by_the_next_open);
    tcase_add_test(tc, client_ids_differ_between_processes);
    tcase_add_test(tc, simultaneous_starts_make_one_broker);
    tcase_add_test(tc, broker_exits_after_its_last_client);
    tcase_add_test(tc, broker_lingers_for_the_next_client);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(broker_suite());
}
