/*
 * The other process of test_share_resource: opens a shared resource (by
 * global handle, by an inherited NT handle, or by one received with
 * SCM_RIGHTS), checks its bytes and writes others, or creates one and
 * waits to be killed.  Answers with its exit status (0: as expected).
 *
 *   share_resource_peer open-global HANDLE EXPECT WRITE
 *   share_resource_peer open-nt FD EXPECT WRITE
 *   share_resource_peer open-scm SOCKET EXPECT WRITE
 *   share_resource_peer open-status HANDLE STATUS     open gives STATUS (hex)
 *   share_resource_peer create FILL                   prints the global handle, then waits
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "share_resource_util.h"
#include "fd_pass.h"

enum { PEER_OK, PEER_USAGE, PEER_DEVICE, PEER_OPEN, PEER_MAP, PEER_BYTES, PEER_DESTROY, PEER_STATUS, PEER_FD };

/* The opened allocation holds EXPECT everywhere; it then holds WRITE. */
static int check_and_write(D3DKMT_HANDLE device, struct share_test_resource *r, int expect, int write)
{
    unsigned char *p = share_test_map(device, r->allocation);

    if (!p)
        return PEER_MAP;
    for (unsigned i = 0; i < SHARE_TEST_SIZE; i++)
        if (p[i] != expect)
            return PEER_BYTES;
    memset(p, write, SHARE_TEST_SIZE);
    share_test_unmap(device, r->allocation);
    return share_test_destroy(device, r->resource) ? PEER_DESTROY : PEER_OK;
}

int main(int argc, char **argv)
{
    struct share_test_resource r;
    D3DKMT_HANDLE device;

    if (argc < 3)
        return PEER_USAGE;
    if (!(device = share_test_device()))
        return PEER_DEVICE;
    if (!strcmp(argv[1], "create")) {
        unsigned char *p;

        if (share_test_create(device, false, NULL, &r) || !(p = share_test_map(device, r.allocation)))
            return PEER_OPEN;
        memset(p, (int)strtol(argv[2], NULL, 0), SHARE_TEST_SIZE);
        share_test_unmap(device, r.allocation);
        printf("%#x\n", r.global);
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(argv[1], "open-status") && argc == 4) {
        NTSTATUS status = share_test_open(device, (D3DKMT_HANDLE)strtoul(argv[2], NULL, 0), &r);

        return (unsigned)status == strtoul(argv[3], NULL, 0) ? PEER_OK : PEER_STATUS;
    }
    if (argc != 5)
        return PEER_USAGE;
    if (!strcmp(argv[1], "open-global")) {
        if (share_test_open(device, (D3DKMT_HANDLE)strtoul(argv[2], NULL, 0), &r))
            return PEER_OPEN;
    } else {
        int fd = atoi(argv[2]);

        if (!strcmp(argv[1], "open-scm") && (fd = fd_pass_recv(fd)) < 0)
            return PEER_FD;
        if (share_test_open_nt(device, (HANDLE)(intptr_t)fd, &r))
            return PEER_OPEN;
        close(fd);
    }
    return check_and_write(device, &r, (int)strtol(argv[3], NULL, 0), (int)strtol(argv[4], NULL, 0));
}
