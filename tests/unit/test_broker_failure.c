/*
 * The session broker when things go wrong: a broker that hangs or dies,
 * clients that send garbage, other users, a fork() child.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/protocol.h"
#include "broker/wire.h"
#include "broker_util.h"

START_TEST(hung_broker_times_out_then_works_again)
{
    struct kmt_broker_stats s;
    const char *log;
    UINT64 start;
    pid_t pid;

    kmt_test_private_broker();
    setenv("KMTSHIM_BROKER_TIMEOUT_MS", "300", 1);
    setenv("KMTSHIM_BROKER_LINGER_MS", "60000", 1);   /* the same broker after SIGCONT */
    pid = broker_stats().broker_pid;
    ck_assert_int_eq(kill(pid, SIGSTOP), 0);
    start = kmt_test_now_ms();
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_IO_TIMEOUT);
    log = kmt_test_capture_end();
    /* bounded: the timeout, with room for a loaded machine */
    ck_assert_uint_lt(kmt_test_now_ms() - start, 10000);
    ck_assert_uint_eq(kmt_test_count_lines(log, "broker", "did not answer"), 1);
    ck_assert_int_eq(kill(pid, SIGCONT), 0);
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    ck_assert_uint_eq(s.broker_pid, pid);
    kill(pid, SIGKILL);                  /* ours: do not leave it lingering */
}
END_TEST

START_TEST(dead_broker_is_replaced)
{
    struct kmt_broker_object o = { 0 };
    struct kmt_broker_stats s;
    D3DKMT_HANDLE global;
    pid_t pid;

    /* both brokers are told to start at one index (a test hook): the
     * second starts after the first one's block (DIR/globals) instead */
    setenv("KMTSHIM_BROKER_TEST_GLOBAL_FIRST", "100", 1);
    kmt_test_private_broker();
    broker_create(KMT_BROKER_RESOURCE, true, "gone", -1, -1, &global);
    pid = broker_stats().broker_pid;
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    for (int i = 0; i < 10000 && process_exists(pid); i++)
        usleep(1000);
    /* the hang-up is seen before the call: a new broker answers it */
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_test_count_lines(kmt_test_capture_end(), "broker", "gone"), 1);
    ck_assert_int_ne(s.broker_pid, pid);
    ck_assert_uint_eq(s.objects, 0);
    /* the old broker's objects went with it, and its handles stay dead */
    for (int i = 0; i < 4; i++) {
        D3DKMT_HANDLE fresh;

        broker_create(KMT_BROKER_RESOURCE, true, "new", -1, -1, &fresh);
        ck_assert_uint_ne(fresh, global);
    }
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, false, &o), STATUS_INVALID_PARAMETER);
}
END_TEST

/* Waits (at most 10 s) for the broker to hang up on sock. */
static bool hung_up(int sock)
{
    struct pollfd p = { sock, POLLIN, 0 };
    char buf[256];

    while (poll(&p, 1, 10000) > 0) {
        ssize_t r = read(sock, buf, sizeof(buf));

        if (r <= 0)
            return true;                 /* EOF or reset */
    }
    return false;
}

static void send_head(int sock, uint32_t op, uint32_t size, const void *payload, uint32_t payload_size)
{
    struct kmt_broker_head head = { op, 0, size, 0 };

    ck_assert_int_eq(write(sock, &head, sizeof(head)), sizeof(head));
    if (payload_size)
        ck_assert_int_eq(write(sock, payload, payload_size), payload_size);
}

START_TEST(malformed_requests_drop_only_their_client)
{
    struct kmt_broker_hello_req hello = { KMT_BROKER_PROTOCOL_VERSION };
    const char *dir = kmt_test_private_broker();
    pid_t pid = broker_stats().broker_pid;
    int sock, stalled;

    /* an oversized message */
    sock = broker_raw_connect(dir);
    send_head(sock, KMT_BROKER_OP_HELLO, 0xffffffffu, NULL, 0);
    ck_assert(hung_up(sock));
    close(sock);
    /* a request before the hello */
    sock = broker_raw_connect(dir);
    send_head(sock, KMT_BROKER_OP_STATS, 0, NULL, 0);
    ck_assert(hung_up(sock));
    close(sock);
    /* an unknown op, after a good hello */
    sock = broker_raw_connect(dir);
    send_head(sock, KMT_BROKER_OP_HELLO, sizeof(hello), &hello, sizeof(hello));
    send_head(sock, 0x7777, 0, NULL, 0);
    ck_assert(hung_up(sock));
    close(sock);
    /* fds the head does not announce */
    sock = broker_raw_connect(dir);
    {
        struct kmt_broker_head head = { KMT_BROKER_OP_HELLO, 0, sizeof(hello), 0 };
        struct iovec iov[2] = { { &head, sizeof(head) }, { &hello, sizeof(hello) } };
        int fd = 0;

        ck_assert_int_eq(kmt_wire_send(sock, iov, 2, &fd, 1), sizeof(head) + sizeof(hello));
    }
    ck_assert(hung_up(sock));
    close(sock);
    /* another protocol version: refused with a reply, then hung up */
    sock = broker_raw_connect(dir);
    hello.version = 999;
    send_head(sock, KMT_BROKER_OP_HELLO, sizeof(hello), &hello, sizeof(hello));
    {
        struct kmt_broker_head head;

        ck_assert_int_eq(read(sock, &head, sizeof(head)), sizeof(head));
        ck_assert_status((NTSTATUS)head.status, STATUS_REVISION_MISMATCH);
    }
    ck_assert(hung_up(sock));
    close(sock);
    /* half a message, then silence: the broker does not wait for the rest */
    stalled = broker_raw_connect(dir);
    send_head(stalled, KMT_BROKER_OP_HELLO, 100, "abc", 3);
    ck_assert_uint_eq(broker_wait_clients(2).broker_pid, pid);
    ck_assert_uint_eq(broker_stats().broker_pid, pid);
    close(stalled);
    ck_assert_uint_eq(broker_wait_clients(1).broker_pid, pid);
}
END_TEST

/* Writes all of buf (the broker reads as it goes). */
static void send_all(int sock, const void *buf, size_t len)
{
    const char *p = buf;

    while (len) {
        ssize_t sent = send(sock, p, len, MSG_NOSIGNAL);

        ck_assert_int_gt(sent, 0);
        p += sent;
        len -= sent;
    }
}

/* A raw connection that has said hello. */
static int raw_hello(const char *dir)
{
    struct kmt_broker_hello_req hello = { KMT_BROKER_PROTOCOL_VERSION };
    struct kmt_broker_head head;
    int sock = broker_raw_connect(dir);
    char reply[64];

    ck_assert_int_ge(sock, 0);
    send_head(sock, KMT_BROKER_OP_HELLO, sizeof(hello), &hello, sizeof(hello));
    ck_assert_int_eq(read(sock, &head, sizeof(head)), sizeof(head));
    ck_assert_status((NTSTATUS)head.status, STATUS_SUCCESS);
    ck_assert_uint_le(head.size, sizeof(reply));
    ck_assert_int_eq(read(sock, reply, head.size), head.size);
    return sock;
}

START_TEST(oversized_blob_drops_its_client)
{
    struct kmt_broker_set_blob_req req = { 1, KMT_BROKER_MAX_BLOB + 1, 0 };
    const char *dir = kmt_test_private_broker();
    pid_t pid = broker_stats().broker_pid;
    size_t size = sizeof(req) + req.blob_size;
    char *blob = calloc(1, req.blob_size);
    int sock = raw_hello(dir);

    ck_assert_ptr_nonnull(blob);
    ck_assert_uint_le(size, KMT_BROKER_MAX_REQUEST);
    send_head(sock, KMT_BROKER_OP_SET_BLOB, size, &req, sizeof(req));
    send_all(sock, blob, req.blob_size);
    ck_assert(hung_up(sock));
    close(sock);
    free(blob);
    ck_assert_uint_eq(broker_stats().broker_pid, pid);
}
END_TEST

START_TEST(bad_name_gets_a_failed_reply)
{
    struct kmt_broker_open_name_req req = { KMT_BROKER_RESOURCE, 0, KMT_BROKER_MAX_NAME + 1, 0 };
    char name[KMT_BROKER_MAX_NAME + 1];
    struct kmt_broker_head head;
    const char *dir = kmt_test_private_broker();
    int sock;

    broker_stats();                      /* starts the broker */
    sock = raw_hello(dir);

    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = 0;
    send_head(sock, KMT_BROKER_OP_OPEN_NAME, sizeof(req) + sizeof(name), &req, sizeof(req));
    send_all(sock, name, sizeof(name));
    ck_assert_int_eq(read(sock, &head, sizeof(head)), sizeof(head));
    ck_assert_status((NTSTATUS)head.status, STATUS_NAME_TOO_LONG);
    /* still connected */
    send_head(sock, KMT_BROKER_OP_STATS, 0, NULL, 0);
    ck_assert_int_eq(read(sock, &head, sizeof(head)), sizeof(head));
    ck_assert_status((NTSTATUS)head.status, STATUS_SUCCESS);
    close(sock);
}
END_TEST

START_TEST(relative_directory_is_refused)
{
    struct kmt_broker_stats s;

    ck_assert_int_eq(setenv("KMTSHIM_BROKER_DIR", "relative/kmtshim", 1), 0);
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(kmt_test_count_lines(kmt_test_capture_end(), "broker", "absolute"), 1);
}
END_TEST

START_TEST(directory_open_to_others_is_refused)
{
    const char *dir = kmt_test_private_broker();
    struct kmt_broker_stats s;

    ck_assert_int_eq(chmod(dir, 0750), 0);
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_ACCESS_DENIED);
    ck_assert_uint_eq(kmt_test_count_lines(kmt_test_capture_end(), "broker", "0700"), 1);
    ck_assert_uint_eq(kmt_broker_client_id(), 0);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
}
END_TEST

/* In a child running as nobody: 0 when it could not talk to the broker. */
static int nobody_child(const char *dir, uid_t uid, gid_t gid)
{
    struct kmt_broker_hello_req hello = { KMT_BROKER_PROTOCOL_VERSION };
    struct kmt_broker_head head = { KMT_BROKER_OP_HELLO, 0, sizeof(hello), 0 };
    int sock;

    signal(SIGPIPE, SIG_IGN);            /* a broker that hangs up is an answer */
    if (setgid(gid) || setuid(uid))
        return 2;
    if ((sock = broker_raw_connect(dir)) < 0)
        return 0;                        /* the directory's mode keeps it out */
    if (write(sock, &head, sizeof(head)) != sizeof(head) || write(sock, &hello, sizeof(hello)) != sizeof(hello))
        return 0;
    return read(sock, &head, sizeof(head)) == sizeof(head) ? 1 : 0;
}

static int run_as_nobody(const char *dir)
{
    struct passwd *pw = getpwnam("nobody");
    int status;
    pid_t pid;

    ck_assert_ptr_nonnull(pw);
    pid = fork();
    if (!pid)
        _exit(nobody_child(dir, pw->pw_uid, pw->pw_gid));
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(other_users_cannot_reach_the_broker)
{
    const char *dir;
    char sock_path[256];
    struct kmt_broker_stats s;

    if (geteuid()) {
        fprintf(stderr, "# SKIP: needs root to become another user\n");
        return;
    }
    dir = kmt_test_private_broker();
    s = broker_stats();
    ck_assert_int_eq(run_as_nobody(dir), 0);
    /* opened up: the peer-credential check still refuses it */
    snprintf(sock_path, sizeof(sock_path), "%s/" KMT_BROKER_SOCKET_NAME, dir);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(chmod(sock_path, 0777), 0);
    kmt_test_capture_begin();
    ck_assert_int_eq(run_as_nobody(dir), 0);
    kmt_test_capture_end();
    ck_assert_uint_eq(broker_stats().clients, 1);
    ck_assert_uint_eq(broker_stats().broker_pid, s.broker_pid);
    ck_assert_int_eq(chmod(dir, 0700), 0);
}
END_TEST

START_TEST(fork_child_has_its_own_connection)
{
    uint32_t parent_id;
    int status;
    pid_t pid;

    kmt_test_private_broker();
    kmt_test_use_miniport("soft");
    kmt_test_open_adapter();             /* the library runs, with its fork handler */
    parent_id = kmt_broker_client_id();
    ck_assert_uint_ne(parent_id, 0);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    return;                              /* the library's threads run in this process */
#endif
    pid = fork();
    if (!pid) {
        uint32_t id = kmt_broker_client_id();

        _exit(id && id != parent_id ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && !WEXITSTATUS(status));
    ck_assert_uint_eq(kmt_broker_client_id(), parent_id);
    ck_assert_uint_eq(broker_wait_clients(1).clients, 1);
}
END_TEST

/* An fd of this process opened on path. */
static bool holds_file(const char *path)
{
    char link[320], target[PATH_MAX];
    bool found = false;
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");

    while (d && (e = readdir(d))) {
        ssize_t len;

        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        if ((len = readlink(link, target, sizeof(target) - 1)) > 0) {
            target[len] = 0;
            found |= !strcmp(target, path);
        }
    }
    if (d)
        closedir(d);
    return found;
}

static void *client_id_thread(void *arg)
{
    *(uint32_t *)arg = kmt_broker_client_id();
    return NULL;
}

/* A fork() while another thread starts the broker (it holds the start
 * lock meanwhile): the child must not keep the lock, or the parent's
 * connection. */
START_TEST(fork_child_never_keeps_the_start_lock)
{
    const char *dir = kmt_test_private_broker();
    char script[PATH_MAX + 32], mark[PATH_MAX + 32], lock[PATH_MAX + 32], real[PATH_MAX];
    uint32_t id = 0;
    pthread_t thread;
    FILE *f;
    int status;
    pid_t pid;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    return;                              /* a fork() with a thread of ours running */
#endif
    snprintf(script, sizeof(script), "%s/slow-broker", dir);
    snprintf(mark, sizeof(mark), "%s/slow-broker.started", dir);
    ck_assert_ptr_nonnull(realpath(dir, real));     /* as /proc shows it */
    snprintf(lock, sizeof(lock), "%s/" KMT_BROKER_LOCK_NAME, real);
    ck_assert_ptr_nonnull(f = fopen(script, "w"));
    fprintf(f, "#!/bin/sh\n: > '%s'\nsleep 1\nexec '%s' \"$@\"\n", mark, getenv("KMTSHIM_BROKER"));
    fclose(f);
    ck_assert_int_eq(chmod(script, 0700), 0);
    setenv("KMTSHIM_BROKER", script, 1);
    ck_assert_int_eq(pthread_create(&thread, NULL, client_id_thread, &id), 0);
    for (int i = 0; i < 10000 && access(mark, F_OK); i++)
        usleep(1000);
    ck_assert_int_eq(access(mark, F_OK), 0);
    ck_assert(holds_file(lock));         /* the starter holds it now */
    pid = fork();
    if (!pid)
        _exit(holds_file(lock) ? 1 : 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "the child kept the start lock");
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_uint_ne(id, 0);
    unlink(script);
    unlink(mark);
}
END_TEST

/* A reference id belongs to the connection that took it: after a
 * reconnect, the process's stale ids name nothing, even for an object it
 * opened again (an NT handle kept it alive). */
START_TEST(reference_ids_of_an_ended_connection_name_nothing)
{
    struct kmt_broker_object o = { 0 };
    unsigned count;
    uint32_t first;
    uint64_t old;
    int nt;

    kmt_test_private_broker();
    old = broker_create(KMT_BROKER_RESOURCE, false, "kept", -1, -1, NULL);
    ck_assert_status(kmt_broker_share_nt(&old, 1, NULL, 0, &nt), STATUS_SUCCESS);
    first = kmt_broker_client_id();
    kmt_broker_forget();                 /* the connection ends, as on a timeout */
    ck_assert_uint_ne(kmt_broker_client_id(), first);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_RESOURCE, true, &o, 1, &count), STATUS_SUCCESS);
    kmt_broker_object_free(&o);
    ck_assert_uint_ne(o.id, old);
    ck_assert_status(kmt_broker_release(old), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_set_blob(old, "x", 1), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_release(o.id), STATUS_SUCCESS);
    close(nt);
    broker_wait_objects(0);
}
END_TEST

static Suite *broker_failure_suite(void)
{
    Suite *s = suite_create("broker_failure");
    TCase *tc = tcase_create("failure");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hung_broker_times_out_then_works_again);
    tcase_add_test(tc, dead_broker_is_replaced);
    tcase_add_test(tc, malformed_requests_drop_only_their_client);
    tcase_add_test(tc, oversized_blob_drops_its_client);
    tcase_add_test(tc, bad_name_gets_a_failed_reply);
    tcase_add_test(tc, relative_directory_is_refused);
    tcase_add_test(tc, directory_open_to_others_is_refused);
    tcase_add_test(tc, other_users_cannot_reach_the_broker);
    tcase_add_test(tc, fork_child_has_its_own_connection);
    tcase_add_test(tc, fork_child_never_keeps_the_start_lock);
    tcase_add_test(tc, reference_ids_of_an_ended_connection_name_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(broker_failure_suite());
}
