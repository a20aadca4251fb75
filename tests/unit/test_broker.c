/*
 * The session broker (dlls/kmtshim/broker/broker.h) across processes:
 * global handles, references and lifetimes, start and exit.  The test and
 * tests/unit/broker_peer, a separate program it starts, share objects
 * through a private broker (kmt_test_private_broker).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker_util.h"

START_TEST(create_open_release_across_processes)
{
    char handle[16], *line;
    D3DKMT_HANDLE global;
    struct peer p;
    uint64_t id;
    int fd;

    kmt_test_private_broker();
    fd = test_memfd("test:bytes");
    id = broker_create(KMT_BROKER_RESOURCE, true, "desc", fd, -1, &global);
    close(fd);
    ck_assert_uint_eq(global & 3, 2);
    ck_assert_uint_eq(global & 0xc0000000u, 0x40000000u);
    snprintf(handle, sizeof(handle), "0x%x", global);
    peer_start(&p, NULL, 0, (const char *[]){ "open-global", handle, "1", "stats", "release", "stats",
                                              "open-global", handle, "2", NULL });
    line = peer_line(&p, "open 0x00000000 ");
    ck_assert_str_eq(line, "desc test:bytes");
    line = peer_line(&p, "stats 0x00000000 ");
    ck_assert_int_eq(strtoul(line, &line, 10), broker_stats().broker_pid);
    ck_assert_int_eq(strtoul(line, &line, 10), 2);    /* clients */
    ck_assert_int_eq(strtoul(line, &line, 10), 1);    /* objects */
    peer_line(&p, "released 0x00000000");
    peer_line(&p, "stats 0x00000000 ");
    peer_line(&p, "open 0xc000000d");                   /* another kind */
    peer_finish(&p);
    ck_assert_uint_eq(broker_stats().objects, 1);
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    ck_assert_uint_eq(broker_stats().objects, 0);
    ck_assert_uint_eq(broker_stats().objects_freed, 1);
    ck_assert_uint_eq(broker_stats().fds, 0);
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
    s = broker_stats();
    ck_assert_uint_eq(s.objects, 1);
    ck_assert_uint_eq(s.fds, 1);
    ck_assert_uint_eq(count_memfds(s.broker_pid, "kmt-broker-peer"), 1);
    peer_kill(&p);
    s = broker_wait_objects(0);
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
    int pair[2];

    kmt_test_private_broker();
    id = broker_create(KMT_BROKER_SYNCOBJ, true, "s", -1, -1, &global);
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
    c.holder_offset = -1;                /* an object's fds are never sockets */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    c.fds = pair;
    c.fd_count = 1;
    ck_assert_status(kmt_broker_create(&c, &id, &global), STATUS_INVALID_PARAMETER);
    close(pair[0]);
    close(pair[1]);
    ck_assert_uint_eq(broker_stats().objects, 1);
}
END_TEST

START_TEST(set_blob_is_seen_by_the_next_open)
{
    struct kmt_broker_object o = { 0 };
    static char big[KMT_BROKER_MAX_BLOB];
    D3DKMT_HANDLE global;
    uint64_t id;

    kmt_test_private_broker();
    id = broker_create(KMT_BROKER_RESOURCE, true, "old", -1, -1, &global);
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
    ck_assert_uint_eq(broker_stats().clients, N + 1);
    for (int i = 0; i < N; i++)
        peer_finish(&p[i]);
}
END_TEST

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

/* A broker without linger exits as each client goes: the next one meets
 * it exiting (and retries) or finds none (and starts one). */
START_TEST(clients_meet_an_exiting_broker)
{
    kmt_test_private_broker();
    setenv("KMTSHIM_BROKER_LINGER_MS", "0", 1);
    for (int i = 0; i < 30; i++) {
        struct peer p;

        peer_start(&p, NULL, 0, (const char *[]){ "stats", "client-id", NULL });
        peer_line(&p, "stats 0x00000000 ");
        ck_assert_str_ne(peer_line(&p, "client "), "0");
        peer_finish(&p);
    }
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
    ck_assert_uint_eq(broker_stats().broker_pid, pid);
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
    tcase_add_test(tc, clients_meet_an_exiting_broker);
    tcase_add_test(tc, broker_lingers_for_the_next_client);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(broker_suite());
}
