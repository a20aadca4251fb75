/*
 * The second process of test_drm_share_lane: imports what the first one
 * exported (the fd it inherited as fd 3) on its own start of the same
 * device, through the miniport's DDIs.
 *
 *   drm_share_peer alloc LOCATION SIZE SEED NEWSEED
 *       imports the dma-buf, checks it holds SEED's pattern, writes
 *       NEWSEED's, destroys its allocation
 *   drm_share_peer fence LOCATION VALUE
 *       imports the syncobj fd, checks the fence reads VALUE, signals
 *       VALUE + 1 and waits (up to 20 s) until the first process signals
 *       VALUE + 2
 *   drm_share_peer open-global LUIDHIGH LUIDLOW GLOBAL SIZE SEED NEWSEED
 *       through D3DKMT (the core and the session broker): opens the shared
 *       resource GLOBAL on the adapter with that LUID, checks SEED's
 *       pattern, writes NEWSEED's, destroys what it opened
 * Exit status 0 when every check held; the failed step is printed.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddi_direct.h"
#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtdrm.h"
#include "share_pattern.h"
#include "share_resource_util.h"

#define SHARED_FD 3

static int fail(const char *what, NTSTATUS status)
{
    fprintf(stderr, "drm_share_peer: %s failed (%#x)\n", what, (unsigned)status);
    return 1;
}

static int alloc_peer(PVOID a, UINT64 size, unsigned seed, unsigned new_seed)
{
    KMT_DRM_ALLOCATION_DESC desc = { .Magic = KMT_DRM_MAGIC, .Version = KMT_DRM_VERSION, .Size = size };
    KMTARG_IMPORTALLOCATION args = { .Fd = SHARED_FD, .pPrivateDriverData = &desc,
                                     .PrivateDriverDataSize = sizeof(desc) };
    DXGKARG_LOCK lock = { 0 };
    DXGKARG_UNLOCK unlock = { 0 };
    DXGKARG_DESTROYALLOCATION da = { .NumAllocations = 1 };
    NTSTATUS s;
    bool same;

    if ((s = ddi_direct.KmtDdiImportAllocation(a, &args)))
        return fail("KmtDdiImportAllocation", s);
    lock.hAllocation = unlock.hAllocation = args.hAllocation;
    if ((s = ddi_direct.DxgkDdiLock(a, &lock)))
        return fail("DxgkDdiLock", s);
    same = share_pattern_holds(lock.pData, size, seed);
    share_pattern_fill(lock.pData, size, new_seed);
    unlock.pData = lock.pData;
    ddi_direct.DxgkDdiUnlock(a, &unlock);
    da.pAllocationList = &args.hAllocation;
    ddi_direct.DxgkDdiDestroyAllocation(a, &da);
    return same ? 0 : fail("reading the exporter's bytes", 0);
}

static int fence_peer(PVOID a, UINT64 value)
{
    _Atomic UINT64 mine = 0;
    KMTARG_IMPORTFENCE args = { .Fd = SHARED_FD, .pValue = &mine };
    NTSTATUS s;
    int rc = 0;

    if ((s = ddi_direct.KmtDdiImportFence(a, &args)))
        return fail("KmtDdiImportFence", s);
    if (atomic_load(&mine) != value)
        rc = fail("reading the value at import", 0);
    atomic_store(&mine, value + 1);      /* a CPU signal: the core's value, then the DDI */
    if (!rc && (s = ddi_direct.KmtDdiSignalFence(a, args.hDriverFence, value + 1)))
        rc = fail("KmtDdiSignalFence", s);
    for (int i = 0; !rc && i < 20000 && atomic_load(&mine) < value + 2; i++)
        usleep(1000);                    /* the watcher raises it when the other side signals */
    if (!rc && atomic_load(&mine) < value + 2)
        rc = fail("waiting for the exporter's signal", 0);
    ddi_direct.KmtDdiDestroyFence(a, args.hDriverFence);
    return rc;
}

/* The resource, opened on a new device of the adapter (share_resource_util.c). */
static int open_global_peer(char **argv)
{
    D3DKMT_OPENADAPTERFROMLUID oa = { .AdapterLuid = { (DWORD)strtoul(argv[3], NULL, 0),
                                                       (LONG)strtol(argv[2], NULL, 0) } };
    D3DKMT_CREATEDEVICE cd = { 0 };
    struct share_test_resource r;
    UINT64 size = strtoull(argv[5], NULL, 0);
    unsigned char *p;
    NTSTATUS s;
    bool same;

    if ((s = D3DKMTOpenAdapterFromLuid(&oa)))
        return fail("D3DKMTOpenAdapterFromLuid", s);
    cd.hAdapter = oa.hAdapter;
    if ((s = D3DKMTCreateDevice(&cd)))
        return fail("D3DKMTCreateDevice", s);
    if ((s = share_test_open(cd.hDevice, (D3DKMT_HANDLE)strtoul(argv[4], NULL, 0), &r)))
        return fail("D3DKMTOpenResource", s);
    if (!(p = share_test_map(cd.hDevice, r.allocation)))
        return fail("D3DKMTLock", 0);
    same = share_pattern_holds(p, size, (unsigned)strtoul(argv[6], NULL, 0));
    share_pattern_fill(p, size, (unsigned)strtoul(argv[7], NULL, 0));
    share_test_unmap(cd.hDevice, r.allocation);
    if ((s = share_test_destroy(cd.hDevice, r.resource)))
        return fail("D3DKMTDestroyAllocation", s);
    return same ? 0 : fail("reading the creator's bytes", 0);
}

int main(int argc, char **argv)
{
    PVOID a;
    int rc;

    if (argc == 8 && !strcmp(argv[1], "open-global"))
        return open_global_peer(argv);
    if (argc < 4 || (strcmp(argv[1], "alloc") && strcmp(argv[1], "fence")) ||
        (!strcmp(argv[1], "alloc") && argc != 6)) {
        fprintf(stderr, "usage: drm_share_peer alloc LOCATION SIZE SEED NEWSEED | fence LOCATION VALUE |\n"
                        "       open-global LUIDHIGH LUIDLOW GLOBAL SIZE SEED NEWSEED\n");
        return 2;
    }
    if (!(a = ddi_direct_start(argv[2])))
        return fail("starting the device", 0);
    if (!strcmp(argv[1], "alloc"))
        rc = alloc_peer(a, strtoull(argv[3], NULL, 0), (unsigned)strtoul(argv[4], NULL, 0),
                        (unsigned)strtoul(argv[5], NULL, 0));
    else
        rc = fence_peer(a, strtoull(argv[3], NULL, 0));
    ddi_direct_stop(a);
    return rc;
}
