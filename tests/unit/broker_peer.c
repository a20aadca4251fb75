/*
 * The other process of tests/unit/test_broker: runs the broker calls its
 * arguments name, in order, and prints one line per step on stdout for
 * the test to read.  Steps:
 *   create KIND GLOBAL BLOB [holder]  a 4 KiB memfd reading "peer:BLOB",
 *                                     registered; prints "created ID GLOBALHANDLE"
 *   open-global HANDLE KIND           prints "open STATUS BLOB MEMFD-TEXT"
 *   open-nt FD KIND                   an inherited NT handle; as open-global
 *   recv-nt SOCK KIND                 an NT handle received by SCM_RIGHTS on
 *                                     an inherited socket; as open-global
 *   open-name NAME KIND ACCESS        prints "name STATUS"; keeps the NT handle
 *   share-nt NAME                     the last created object; prints "shared STATUS"
 *   hold-word                         writes its client id into the holder word
 *                                     (offset 0) of the last opened object
 *   release                           releases the last object; prints "released STATUS"
 *   stats                             prints "stats PID CLIENTS OBJECTS GLOBALS SHARES NAMES FDS FREED"
 *   client-id                         prints "client ID"
 *   wait                              prints "ready", then waits for stdin's EOF
 * Handles and kinds in hex or decimal.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/broker.h"
#include "fd_pass.h"

static uint64_t last_id;
static int last_fd = -1;

static unsigned long num(const char *s)
{
    return strtoul(s, NULL, 0);
}

static void print_object(const char *what, NTSTATUS status, struct kmt_broker_object *o)
{
    char text[64] = "-";

    if (status == STATUS_SUCCESS && o->fd_count && pread(o->fds[0], text, sizeof(text) - 1, 0) > 0)
        text[strcspn(text, "\n")] = 0;
    printf("%s 0x%08x %.*s %s\n", what, (unsigned)status, status ? 1 : (int)o->blob_size,
           status ? "-" : (const char *)o->blob, text);
    if (status == STATUS_SUCCESS) {
        last_id = o->id;
        if (o->fd_count)
            last_fd = dup(o->fds[0]);
        kmt_broker_object_free(o);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *step = argv[i];
        struct kmt_broker_object o = { 0 };
        NTSTATUS status;

        if (!strcmp(step, "create") && i + 3 < argc) {
            struct kmt_broker_create c = { 0 };
            D3DKMT_HANDLE global = 0;
            char text[64];
            int fd = memfd_create("kmt-broker-peer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
            bool holder = i + 4 < argc && !strcmp(argv[i + 4], "holder");

            snprintf(text, sizeof(text), "peer:%s", argv[i + 3]);
            if (ftruncate(fd, 4096) || pwrite(fd, text, strlen(text), 0) < 0
                || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
                return 1;
            c.kind = num(argv[i + 1]);
            c.global = num(argv[i + 2]);
            c.blob = argv[i + 3];
            c.blob_size = strlen(argv[i + 3]);
            c.fds = &fd;
            c.fd_count = 1;
            c.holder_offset = holder ? 64 : -1;
            status = kmt_broker_create(&c, &last_id, &global);
            printf("created 0x%08x %llu 0x%08x\n", (unsigned)status, (unsigned long long)last_id, global);
            last_fd = fd;
            i += 3 + holder;
        } else if (!strcmp(step, "open-global") && i + 2 < argc) {
            status = kmt_broker_open_global(num(argv[i + 1]), num(argv[i + 2]), true, &o);
            print_object("open", status, &o);
            i += 2;
        } else if ((!strcmp(step, "open-nt") || !strcmp(step, "recv-nt")) && i + 2 < argc) {
            int fd = step[0] == 'r' ? fd_pass_recv(num(argv[i + 1])) : (int)num(argv[i + 1]);
            unsigned count = 0;

            status = kmt_broker_open_nt(fd, num(argv[i + 2]), true, &o, 1, &count);
            print_object("open", status, &o);
            i += 2;
        } else if (!strcmp(step, "open-name") && i + 3 < argc) {
            int nt = -1;

            status = kmt_broker_open_name(argv[i + 1], num(argv[i + 2]), num(argv[i + 3]), &nt);
            printf("name 0x%08x\n", (unsigned)status);
            i += 3;
        } else if (!strcmp(step, "share-nt") && i + 1 < argc) {
            int nt = -1;

            status = kmt_broker_share_nt(&last_id, 1, argv[i + 1], 1, &nt);
            printf("shared 0x%08x\n", (unsigned)status);
            i += 1;
        } else if (!strcmp(step, "hold-word")) {
            uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, last_fd, 0);

            if (word == MAP_FAILED)
                return 1;
            __atomic_store_n(&word[16], kmt_broker_client_id(), __ATOMIC_SEQ_CST);
            printf("holding %u\n", word[16]);
        } else if (!strcmp(step, "release")) {
            printf("released 0x%08x\n", (unsigned)kmt_broker_release(last_id));
        } else if (!strcmp(step, "stats")) {
            struct kmt_broker_stats s = { 0 };

            status = kmt_broker_query_stats(&s);
            printf("stats 0x%08x %u %u %u %u %u %u %u %llu\n", (unsigned)status, s.broker_pid, s.clients,
                   s.objects, s.global_handles, s.nt_shares, s.names, s.fds,
                   (unsigned long long)s.objects_freed);
        } else if (!strcmp(step, "client-id")) {
            printf("client %u\n", kmt_broker_client_id());
        } else if (!strcmp(step, "wait")) {
            char buf[64];

            printf("ready\n");
            while (read(0, buf, sizeof(buf)) > 0)
                ;
        } else {
            fprintf(stderr, "broker_peer: bad step '%s'\n", step);
            return 2;
        }
    }
    return 0;
}
