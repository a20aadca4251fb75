/*
 * Shared resources in tests: what test_share_resource and its peer program
 * (share_resource_peer, another process) both do.  No Check assertions:
 * the peer runs outside a Check runner and reports with its exit status.
 */
#ifndef KMTSHIM_SHARE_RESOURCE_UTIL_H
#define KMTSHIM_SHARE_RESOURCE_UTIL_H

#include <stdbool.h>

#include "kmtshim/kmtshim.h"

#define SHARE_TEST_SIZE 0x10000u          /* bytes of the test allocation */
#define SHARE_TEST_RUNTIME 0x52554e31u    /* the creator's 4 bytes of runtime data */

struct share_test_resource {
    D3DKMT_HANDLE resource, allocation, global;
};

/* A resource of one soft allocation made with CreateShared (and
 * NtSecuritySharing when `nt`); `sysmem`: over those pages instead
 * (ExistingSysMem, SHARE_TEST_SIZE bytes). */
NTSTATUS share_test_create(D3DKMT_HANDLE device, bool nt, void *sysmem, struct share_test_resource *out);
/* OpenResource by global handle with Windows' exact sizes. */
NTSTATUS share_test_open(D3DKMT_HANDLE device, D3DKMT_HANDLE global, struct share_test_resource *out);
/* OpenResourceFromNtHandle, resource only. */
NTSTATUS share_test_open_nt(D3DKMT_HANDLE device, HANDLE nt, struct share_test_resource *out);
/* Lock(allocation) -> its bytes; NULL on failure. */
unsigned char *share_test_map(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation);
void share_test_unmap(D3DKMT_HANDLE device, D3DKMT_HANDLE allocation);
NTSTATUS share_test_destroy(D3DKMT_HANDLE device, D3DKMT_HANDLE resource);
/* The first soft device without Check (peer). */
D3DKMT_HANDLE share_test_device(void);

#endif
