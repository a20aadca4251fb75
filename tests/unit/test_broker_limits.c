/*
 * The session broker at its limits: a client or a broker out of file
 * descriptors (RLIMIT_NOFILE), and a broker whose replies break the
 * protocol (a fake one, a thread of this test).  Each fails the call that
 * met it and nothing else: the connection, and with it the process's
 * references and client id, stays.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/protocol.h"
#include "broker_util.h"

#define FILLERS 256

/* Opens fds until the soft limit (lowered to FILLERS first) is reached,
 * then closes `spare` of them; returns how many stay open. */
static unsigned fill_fds(int *fillers, unsigned spare)
{
    struct rlimit lim;
    unsigned n = 0;
    int fd;

    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &lim), 0);
    if (lim.rlim_cur > FILLERS) {
        lim.rlim_cur = FILLERS;
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &lim), 0);
    }
    while (n < FILLERS && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        fillers[n++] = fd;
    ck_assert_int_eq(errno, EMFILE);
    ck_assert_uint_ge(n, spare);
    while (spare--)
        close(fillers[--n]);
    return n;
}

/* How many fds this process can still open (at most `max`). */
static unsigned free_fds(unsigned max)
{
    int fds[8];
    unsigned n = 0;

    ck_assert_uint_le(max, 8);
    while (n < max && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        n++;
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
    return n;
}

START_TEST(client_out_of_fds_fails_only_the_call)
{
    int fds[2], fillers[FILLERS];
    struct kmt_broker_create c = { KMT_BROKER_RESOURCE, true, "two", 3, fds, 2, -1 };
    struct kmt_broker_object o = { 0 };
    D3DKMT_HANDLE global;
    unsigned n;
    uint32_t me;
    uint64_t id;

    kmt_test_private_broker();
    fds[0] = test_memfd("a");
    fds[1] = test_memfd("b");
    ck_assert_status(kmt_broker_create(&c, &id, &global), STATUS_SUCCESS);
    close(fds[0]);
    close(fds[1]);
    me = kmt_broker_client_id();
    ck_assert_uint_ne(me, 0);

    kmt_test_capture_begin();
    /* room for one of the object's two fds */
    n = fill_fds(fillers, 1);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &o), STATUS_INSUFFICIENT_RESOURCES);
    /* the fd that arrived was closed again */
    ck_assert_uint_eq(free_fds(2), 1);
    /* room for none */
    ck_assert_int_ge(fillers[n++] = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &o), STATUS_INSUFFICIENT_RESOURCES);
    ck_assert_uint_eq(free_fds(1), 0);
    for (unsigned i = 0; i < n; i++)
        close(fillers[i]);
    ck_assert_uint_ge(kmt_test_count_lines(kmt_test_capture_end(), "broker", "out of file descriptors"), 2);

    /* the same connection: nothing of ours was dropped */
    ck_assert_uint_eq(kmt_broker_client_id(), me);
    ck_assert_uint_eq(broker_stats().clients, 1);
    ck_assert_status(kmt_broker_open_global(global, KMT_BROKER_RESOURCE, true, &o), STATUS_SUCCESS);
    ck_assert_uint_eq(o.fd_count, 2);
    kmt_broker_object_free(&o);
    ck_assert_status(kmt_broker_release(o.id), STATUS_SUCCESS);
    /* the failed opens gave their references back: ours is the last */
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    broker_wait_objects(0);
}
END_TEST

/* A HELLO on sock; the head of the broker's answer, or op 0 on a hang-up. */
static struct kmt_broker_head raw_hello(int sock)
{
    struct kmt_broker_hello_req req = { KMT_BROKER_PROTOCOL_VERSION };
    struct kmt_broker_head head = { KMT_BROKER_OP_HELLO, 0, sizeof(req), 0 };
    struct pollfd p = { sock, POLLIN, 0 };

    /* a refusing broker may have hung up before the hello */
    if (send(sock, &head, sizeof(head), MSG_NOSIGNAL) == sizeof(head))
        send(sock, &req, sizeof(req), MSG_NOSIGNAL);
    memset(&head, 0, sizeof(head));
    ck_assert_int_eq(poll(&p, 1, 10000), 1);
    if (recv(sock, &head, sizeof(head), MSG_WAITALL) != sizeof(head))
        memset(&head, 0, sizeof(head));
    return head;
}

START_TEST(broker_out_of_fds_fails_the_request_and_serves_on)
{
    const char *dir = kmt_test_private_broker();
    struct rlimit lim = { 24, 24 };
    uint64_t ids[64];
    struct kmt_broker_head head;
    unsigned n = 0;
    NTSTATUS status = STATUS_SUCCESS;
    uint32_t me = kmt_broker_client_id();
    pid_t pid = broker_stats().broker_pid;
    int sock;

    ck_assert_int_eq(prlimit(pid, RLIMIT_NOFILE, &lim, NULL), 0);
    /* every object keeps its fd in the broker, until there is no room */
    while (n < 64) {
        int fd = test_memfd("fill");
        struct kmt_broker_create c = { KMT_BROKER_RESOURCE, false, "fill", 4, &fd, 1, -1 };

        status = kmt_broker_create(&c, &ids[n], NULL);
        close(fd);
        if (status != STATUS_SUCCESS)
            break;
        n++;
    }
    ck_assert_status(status, STATUS_INSUFFICIENT_RESOURCES);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(kmt_broker_client_id(), me);

    /* a new client is refused at once, with the reason */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_ge(sock = broker_raw_connect(dir), 0);
        head = raw_hello(sock);
        close(sock);
        ck_assert_uint_eq(head.op, KMT_BROKER_OP_HELLO);
        ck_assert_uint_eq(head.status, (uint32_t)STATUS_INSUFFICIENT_RESOURCES);
    }

    /* the clients it has are served; room comes back with a release */
    ck_assert_uint_eq(broker_stats().objects, n);
    ck_assert_status(kmt_broker_release(ids[--n]), STATUS_SUCCESS);
    {
        int fd = test_memfd("again");

        ids[n++] = broker_create(KMT_BROKER_RESOURCE, false, "again", fd, -1, NULL);
        close(fd);
    }
    ck_assert_uint_eq(kmt_broker_client_id(), me);
    while (n)
        ck_assert_status(kmt_broker_release(ids[--n]), STATUS_SUCCESS);
    ck_assert_uint_eq(broker_stats().objects, 0);
    ck_assert_int_ge(sock = broker_raw_connect(dir), 0);
    head = raw_hello(sock);
    close(sock);
    ck_assert_status((NTSTATUS)head.status, STATUS_SUCCESS);
}
END_TEST

/* A fake broker on the test's directory: answers HELLO with client id
 * 100 + its count of hellos, STATS with zeros, and OPEN_GLOBAL with a
 * reply that breaks the protocol: global handle 1, an object list cut
 * short; 2, a head announcing an fd that does not come. */
struct fake_broker {
    int listener;
    pthread_t thread;
    unsigned hellos;
};

static bool read_full(int sock, void *buf, size_t len)
{
    return !len || recv(sock, buf, len, MSG_WAITALL) == (ssize_t)len;
}

static void fake_reply(int sock, uint32_t op, const void *payload, uint32_t size, uint32_t fd_count)
{
    struct kmt_broker_head head = { op, 0, size, fd_count };

    send(sock, &head, sizeof(head), MSG_NOSIGNAL);
    if (size)
        send(sock, payload, size, MSG_NOSIGNAL);
}

static void fake_serve(struct fake_broker *f, int sock)
{
    struct kmt_broker_head head;
    char payload[256];

    while (read_full(sock, &head, sizeof(head)) && head.size <= sizeof(payload)
           && read_full(sock, payload, head.size)) {
        if (head.op == KMT_BROKER_OP_HELLO) {
            struct kmt_broker_hello_reply r = { KMT_BROKER_PROTOCOL_VERSION, 100 + ++f->hellos, getpid() };

            fake_reply(sock, head.op, &r, sizeof(r), 0);
        } else if (head.op == KMT_BROKER_OP_STATS) {
            struct kmt_broker_stats_reply r = { getpid() };

            fake_reply(sock, head.op, &r, sizeof(r), 0);
        } else if (head.op == KMT_BROKER_OP_OPEN_GLOBAL) {
            struct kmt_broker_open_global_req req;
            struct kmt_broker_objects_reply r = { 1, 0 };

            memcpy(&req, payload, sizeof(req));
            fake_reply(sock, head.op, &r, sizeof(r), req.global_handle == 2);
        } else
            break;
    }
    close(sock);
}

static void *fake_broker_main(void *arg)
{
    struct fake_broker *f = arg;
    int sock;

    while ((sock = accept4(f->listener, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        fake_serve(f, sock);
    return NULL;
}

static void fake_broker_start(struct fake_broker *f, const char *dir)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };

    f->hellos = 0;
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/" KMT_BROKER_SOCKET_NAME, dir);
    ck_assert_int_ge(f->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
    ck_assert_int_eq(bind(f->listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
    ck_assert_int_eq(listen(f->listener, 8), 0);
    ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_broker_main, f), 0);
}

static void fake_broker_stop(struct fake_broker *f)
{
    kmt_broker_forget();                 /* the fake sees its client go */
    shutdown(f->listener, SHUT_RDWR);
    pthread_join(f->thread, NULL);
    close(f->listener);
}

START_TEST(malformed_reply_fails_only_its_call)
{
    struct fake_broker f;
    struct kmt_broker_object o = { 0 };
    struct kmt_broker_stats s;

    fake_broker_start(&f, kmt_test_private_broker());
    ck_assert_uint_eq(kmt_broker_client_id(), 101);
    kmt_test_capture_begin();
    ck_assert_status(kmt_broker_open_global(1, KMT_BROKER_RESOURCE, true, &o), STATUS_INTERNAL_ERROR);
    ck_assert_status(kmt_broker_open_global(2, KMT_BROKER_RESOURCE, true, &o), STATUS_INTERNAL_ERROR);
    ck_assert_uint_eq(kmt_test_count_lines(kmt_test_capture_end(), "broker", "malformed"), 2);
    /* the connection, and the client id, stayed */
    ck_assert_status(kmt_broker_query_stats(&s), STATUS_SUCCESS);
    ck_assert_uint_eq(kmt_broker_client_id(), 101);
    ck_assert_uint_eq(f.hellos, 1);
    fake_broker_stop(&f);
}
END_TEST

/* Four global indices (a test hook), starting two before the wrap: the
 * wrapped counter skips the live ones, and with all four live a global
 * create fails. */
START_TEST(wrapped_global_index_skips_live_handles)
{
    struct kmt_broker_object o = { 0 };
    D3DKMT_HANDLE g[4], again;
    const char *blob[4] = { "a", "b", "c", "d" };
    uint64_t ids[4];
    uint64_t id;
    int fd = test_memfd("plain");
    struct kmt_broker_create c = { KMT_BROKER_RESOURCE, true, "e", 1, NULL, 0, -1 };

    setenv("KMTSHIM_BROKER_TEST_GLOBAL_COUNT", "4", 1);
    setenv("KMTSHIM_BROKER_TEST_GLOBAL_FIRST", "2", 1);
    kmt_test_private_broker();
    for (int i = 0; i < 4; i++) {
        ids[i] = broker_create(KMT_BROKER_RESOURCE, true, blob[i], -1, -1, &g[i]);
        for (int j = 0; j < i; j++)
            ck_assert_uint_ne(g[i], g[j]);
    }
    /* b goes; the counter is back at a (live), then takes b's */
    ck_assert_status(kmt_broker_release(ids[1]), STATUS_SUCCESS);
    ids[1] = broker_create(KMT_BROKER_RESOURCE, true, "e", -1, -1, &again);
    ck_assert_uint_eq(again, g[1]);
    for (int i = 0; i < 4; i++) {
        ck_assert_status(kmt_broker_open_global(g[i], KMT_BROKER_RESOURCE, false, &o), STATUS_SUCCESS);
        ck_assert_mem_eq(o.blob, i == 1 ? "e" : blob[i], 1);
        kmt_broker_object_free(&o);
    }
    /* every index live: no global handle, but objects without one */
    ck_assert_status(kmt_broker_create(&c, &id, &again), STATUS_INSUFFICIENT_RESOURCES);
    c.global = false;
    c.fds = &fd;
    c.fd_count = 1;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_SUCCESS);
    close(fd);
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    for (int i = 0; i < 4; i++)
        ck_assert_status(kmt_broker_release(ids[i]), STATUS_SUCCESS);
    broker_wait_objects(0);
}
END_TEST

static Suite *broker_limits_suite(void)
{
    Suite *s = suite_create("broker_limits");
    TCase *tc = tcase_create("limits");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, client_out_of_fds_fails_only_the_call);
    tcase_add_test(tc, broker_out_of_fds_fails_the_request_and_serves_on);
    tcase_add_test(tc, malformed_reply_fails_only_its_call);
    tcase_add_test(tc, wrapped_global_index_skips_live_handles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(broker_limits_suite());
}
