/*
 * NT handles of the session broker (broker.h): one end of a socket pair
 * that inheritance and SCM_RIGHTS carry to another process, names in the
 * session's namespace, and the holder word of an object whose holder was
 * killed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "broker_util.h"
#include "fd_pass.h"

/* A resource with a memfd reading "test:nt", NT-only, shared once. */
static uint64_t shared_resource(const char *name, int *nt)
{
    int fd = test_memfd("test:nt");
    uint64_t id = broker_create(KMT_BROKER_RESOURCE, false, "ntres", fd, -1, NULL);

    close(fd);
    ck_assert_status(kmt_broker_share_nt(&id, 1, name, 1, nt), STATUS_SUCCESS);
    ck_assert_int_ge(*nt, 0);
    ck_assert_int_ne(fcntl(*nt, F_GETFD) & FD_CLOEXEC, 0);
    return id;
}

START_TEST(nt_handle_passed_by_inheritance)
{
    struct peer p;
    uint64_t id;
    int nt;

    kmt_test_private_broker();
    id = shared_resource(NULL, &nt);
    ck_assert_uint_eq(broker_stats().global_handles, 0);
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    ck_assert_uint_eq(broker_stats().objects, 1);    /* the NT handle keeps it */
    peer_start(&p, &nt, 1, (const char *[]){ "open-nt", "10", "1", "wait", NULL });
    ck_assert_str_eq(peer_line(&p, "open 0x00000000 "), "ntres test:nt");
    peer_line(&p, "ready");
    close(nt);                           /* the peer's inherited copy stays */
    ck_assert_uint_eq(broker_stats().nt_shares, 1);
    peer_finish(&p);
    {
        struct kmt_broker_stats s = broker_wait_objects(0);

        ck_assert_uint_eq(s.nt_shares, 0);
        ck_assert_uint_eq(s.fds, 0);
    }
}
END_TEST

START_TEST(nt_handle_passed_by_scm_rights)
{
    struct peer p;
    int nt, pair[2];

    kmt_test_private_broker();
    ck_assert_status(kmt_broker_release(shared_resource(NULL, &nt)), STATUS_SUCCESS);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    peer_start(&p, &pair[1], 1, (const char *[]){ "recv-nt", "10", "1", NULL });
    close(pair[1]);
    ck_assert(fd_pass_send(pair[0], nt));
    close(nt);                           /* in flight: the message holds it */
    ck_assert_str_eq(peer_line(&p, "open 0x00000000 "), "ntres test:nt");
    peer_finish(&p);
    close(pair[0]);
    ck_assert_uint_eq(broker_wait_objects(0).nt_shares, 0);
}
END_TEST

START_TEST(nt_handle_bad_inputs)
{
    struct kmt_broker_object o[KMT_BROKER_MAX_NT_OBJECTS];
    uint64_t ids[4], id;
    unsigned count;
    int nt, pipefd[2], closed;

    kmt_test_private_broker();
    id = shared_resource(NULL, &nt);
    ck_assert_status(kmt_broker_open_nt(-1, KMT_BROKER_RESOURCE, true, o, 3, &count), STATUS_INVALID_HANDLE);
    closed = dup(nt);
    close(closed);
    ck_assert_status(kmt_broker_open_nt(closed, KMT_BROKER_RESOURCE, true, o, 3, &count),
                     STATUS_INVALID_HANDLE);
    ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
    ck_assert_status(kmt_broker_open_nt(pipefd[0], KMT_BROKER_RESOURCE, true, o, 3, &count),
                     STATUS_OBJECT_TYPE_MISMATCH);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_SYNCOBJ, true, o, 3, &count),
                     STATUS_OBJECT_TYPE_MISMATCH);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_RESOURCE, true, NULL, 3, &count),
                     STATUS_INVALID_PARAMETER);
    /* a copy is the same handle */
    {
        int copy = dup(nt);

        ck_assert_status(kmt_broker_open_nt(copy, KMT_BROKER_RESOURCE, false, o, 3, &count), STATUS_SUCCESS);
        ck_assert_uint_eq(count, 1);
        ck_assert_uint_eq(o[0].id, 0);
        kmt_broker_object_free(&o[0]);
        close(copy);
    }
    ids[0] = id + 1;
    ck_assert_status(kmt_broker_share_nt(ids, 1, NULL, 1, &nt), STATUS_INVALID_PARAMETER);
    ids[0] = ids[1] = ids[2] = ids[3] = id;
    ck_assert_status(kmt_broker_share_nt(ids, 0, NULL, 1, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_share_nt(ids, 4, NULL, 1, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_status(kmt_broker_share_nt(NULL, 1, NULL, 1, &nt), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(broker_stats().nt_shares, 1);
    close(pipefd[0]);
    close(pipefd[1]);
}
END_TEST

START_TEST(three_objects_in_share_order)
{
    struct kmt_broker_object o[KMT_BROKER_MAX_NT_OBJECTS];
    static const uint32_t kinds[3] = { KMT_BROKER_RESOURCE, KMT_BROKER_KEYED_MUTEX, KMT_BROKER_SYNCOBJ };
    static const char *const blobs[3] = { "res", "mutex", "sync" };
    uint64_t ids[3];
    unsigned count;
    int nt;

    kmt_test_private_broker();
    for (int i = 0; i < 3; i++) {
        int fd = test_memfd(blobs[i]);

        ids[i] = broker_create(kinds[i], false, blobs[i], fd, -1, NULL);
        close(fd);
    }
    ck_assert_status(kmt_broker_share_nt(ids, 3, NULL, 1, &nt), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_RESOURCE, true, o, 2, &count), STATUS_BUFFER_TOO_SMALL);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_KEYED_MUTEX, true, o, 3, &count),
                     STATUS_OBJECT_TYPE_MISMATCH);
    ck_assert_status(kmt_broker_open_nt(nt, KMT_BROKER_RESOURCE, true, o, 3, &count), STATUS_SUCCESS);
    ck_assert_uint_eq(count, 3);
    for (int i = 0; i < 3; i++) {
        char text[8] = { 0 };

        ck_assert_uint_eq(o[i].kind, kinds[i]);
        ck_assert_uint_eq(o[i].blob_size, strlen(blobs[i]));
        ck_assert_mem_eq(o[i].blob, blobs[i], o[i].blob_size);
        ck_assert_uint_eq(o[i].fd_count, 1);
        ck_assert_int_gt(pread(o[i].fds[0], text, sizeof(text) - 1, 0), 0);
        ck_assert_str_eq(text, blobs[i]);
        ck_assert_uint_ne(o[i].id, 0);
        kmt_broker_object_free(&o[i]);
        ck_assert_status(kmt_broker_release(o[i].id), STATUS_SUCCESS);
        ck_assert_status(kmt_broker_release(ids[i]), STATUS_SUCCESS);
    }
    ck_assert_uint_eq(broker_stats().objects, 3);    /* the share holds them */
    close(nt);
    ck_assert_uint_eq(broker_stats().objects, 0);
    ck_assert_uint_eq(broker_stats().fds, 0);
}
END_TEST

START_TEST(names)
{
    char long_name[KMT_BROKER_MAX_NAME + 1];
    struct peer p;
    int nt, nt2, other;
    uint64_t id;

    kmt_test_private_broker();
    id = shared_resource("Local\\KmtShared", &nt);
    ck_assert_uint_eq(broker_stats().names, 1);
    ck_assert_status(kmt_broker_share_nt(&id, 1, "local\\kmtshared", 1, &other), STATUS_OBJECT_NAME_COLLISION);
    ck_assert_status(kmt_broker_open_name("Local\\Unknown", KMT_BROKER_RESOURCE, 1, &other),
                     STATUS_OBJECT_NAME_NOT_FOUND);
    ck_assert_status(kmt_broker_open_name("LOCAL\\KMTSHARED", KMT_BROKER_RESOURCE, 0, &other),
                     STATUS_ACCESS_DENIED);
    ck_assert_status(kmt_broker_open_name("LOCAL\\KMTSHARED", KMT_BROKER_SYNCOBJ, 1, &other),
                     STATUS_OBJECT_TYPE_MISMATCH);
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = 0;
    ck_assert_status(kmt_broker_open_name(long_name, KMT_BROKER_RESOURCE, 1, &other), STATUS_NAME_TOO_LONG);
    ck_assert_status(kmt_broker_share_nt(&id, 1, long_name, 1, &other), STATUS_NAME_TOO_LONG);
    ck_assert_status(kmt_broker_open_name("", KMT_BROKER_RESOURCE, 1, &other), STATUS_INVALID_PARAMETER);
    /* another process finds it by name */
    peer_start(&p, NULL, 0, (const char *[]){ "open-name", "local\\KMTshared", "1", "1", NULL });
    peer_line(&p, "name 0x00000000");
    peer_finish(&p);
    /* a handle by name is a handle on the same share */
    ck_assert_status(kmt_broker_open_name("LOCAL\\KMTSHARED", KMT_BROKER_RESOURCE, 1, &nt2), STATUS_SUCCESS);
    close(nt);
    ck_assert_uint_eq(broker_stats().nt_shares, 1);
    close(nt2);
    ck_assert_uint_eq(broker_stats().names, 0);
    ck_assert_status(kmt_broker_open_name("Local\\KmtShared", KMT_BROKER_RESOURCE, 1, &other),
                     STATUS_OBJECT_NAME_NOT_FOUND);
    /* the object (still referenced) can be shared again under the name */
    ck_assert_status(kmt_broker_share_nt(&id, 1, "Local\\KmtShared", 1, &nt), STATUS_SUCCESS);
    close(nt);
}
END_TEST

/* The peer writes its id into the word and dies holding it; `bits` is
 * what this process then adds (a sleeper's waiter flag).  The broker must
 * mark it abandoned and wake its futex. */
static void kill_holder_of_word(uint32_t *word, const char *handle, uint32_t bits)
{
    struct peer p;
    uint32_t peer_id;
    char *line;

    __atomic_store_n(&word[16], 0, __ATOMIC_SEQ_CST);
    peer_start(&p, NULL, 0, (const char *[]){ "open-global", handle, "3", "hold-word", "wait", NULL });
    peer_line(&p, "open 0x00000000 ");
    line = peer_line(&p, "holding ");
    peer_id = strtoul(line, NULL, 10);
    ck_assert_uint_ne(peer_id, 0);
    ck_assert_uint_lt(peer_id, KMT_BROKER_HOLDER_WAITERS - 1);
    peer_line(&p, "ready");
    ck_assert_uint_eq(__atomic_load_n(&word[16], __ATOMIC_SEQ_CST), peer_id);
    __atomic_fetch_or(&word[16], bits, __ATOMIC_SEQ_CST);
    peer_kill(&p);
    for (int i = 0; i < 100; i++) {
        struct timespec ts = { 0, 100 * 1000000 };
        uint32_t v = __atomic_load_n(&word[16], __ATOMIC_SEQ_CST);

        if (v != (peer_id | bits))
            break;
        syscall(SYS_futex, &word[16], FUTEX_WAIT, v, &ts, NULL, 0);
    }
    ck_assert_uint_eq(word[16], KMT_BROKER_HOLDER_ABANDONED);
}

START_TEST(killed_holder_abandons_its_word)
{
    D3DKMT_HANDLE global;
    char handle[16];
    uint32_t *word;
    struct peer p;
    int fd;

    kmt_test_private_broker();
    fd = test_memfd("mutex");
    word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert_ptr_ne(word, MAP_FAILED);
    broker_create(KMT_BROKER_KEYED_MUTEX, true, "km", fd, 64, &global);
    snprintf(handle, sizeof(handle), "0x%x", global);
    kill_holder_of_word(word, handle, 0);
    kill_holder_of_word(word, handle, KMT_BROKER_HOLDER_WAITERS);
    ck_assert_uint_eq(broker_stats().objects, 1);

    /* a word naming someone else (waiter flag or not) stays as it is when
     * a reference holder dies */
    word[16] = kmt_broker_client_id() | KMT_BROKER_HOLDER_WAITERS;
    peer_start(&p, NULL, 0, (const char *[]){ "open-global", handle, "3", "wait", NULL });
    peer_line(&p, "open 0x00000000 ");
    peer_line(&p, "ready");
    peer_kill(&p);
    ck_assert_uint_eq(broker_wait_clients(1).objects, 1);
    ck_assert_uint_eq(word[16], kmt_broker_client_id() | KMT_BROKER_HOLDER_WAITERS);
    munmap(word, 4096);
    close(fd);
}
END_TEST

START_TEST(holder_word_must_fit_its_fd)
{
    struct kmt_broker_create c = { KMT_BROKER_KEYED_MUTEX, true, "k", 1, NULL, 1, 4096 };
    char path[64];
    uint64_t id;
    int fd, ro, pipefd[2];

    kmt_test_private_broker();
    fd = test_memfd("m");
    c.fds = &fd;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* past the end */
    c.holder_offset = 2;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* unaligned */
    ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
    c.fds = pipefd;
    c.holder_offset = 0;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* not mappable */
    close(fd);
    fd = memfd_create("kmt-broker-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ck_assert_int_eq(ftruncate(fd, 4096), 0);
    c.fds = &fd;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* could shrink */
    ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_WRITE), 0);
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* not writable */
    close(fd);
    fd = test_memfd("m");
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ck_assert_int_ge(ro = open(path, O_RDONLY | O_CLOEXEC), 0);
    c.fds = &ro;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_INVALID_PARAMETER);   /* read-only */
    c.fds = &fd;
    ck_assert_status(kmt_broker_create(&c, &id, NULL), STATUS_SUCCESS);
    ck_assert_status(kmt_broker_release(id), STATUS_SUCCESS);
    ck_assert_uint_eq(broker_stats().fds, 0);
    close(ro);
    close(pipefd[0]);
    close(pipefd[1]);
    close(fd);
}
END_TEST

static Suite *broker_nt_suite(void)
{
    Suite *s = suite_create("broker_nt");
    TCase *tc = tcase_create("nt");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, nt_handle_passed_by_inheritance);
    tcase_add_test(tc, nt_handle_passed_by_scm_rights);
    tcase_add_test(tc, nt_handle_bad_inputs);
    tcase_add_test(tc, three_objects_in_share_order);
    tcase_add_test(tc, names);
    tcase_add_test(tc, killed_holder_abandons_its_word);
    tcase_add_test(tc, holder_word_must_fit_its_fd);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kmt_test_run(broker_nt_suite());
}
