/*
 * install_client: a Linux program built by tests/install/install.sh against
 * the INSTALLED headers and libkmtshim (pkg-config --cflags --libs kmtshim),
 * never the source tree.  It prints where libkmtshim was loaded from, so the
 * script can tell the installed copy from the build tree's, then walks the
 * software adapter: enumerate, device, one allocation, destroy.  Exit 0 and a
 * last line "install_client: OK" when every step gave what Windows gives.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <kmtshim/kmtshim.h>
#include <kmtshim/kmtsoft.h>
#include <kmtshim/kmtdrm.h>         /* a UMD builds its DRM formats from here too */

static int failures;

static void expect(const char *what, NTSTATUS got, NTSTATUS want)
{
    if (got != want) {
        printf("FAIL: %s: NTSTATUS 0x%08x, expected 0x%08x\n", what, (unsigned)got, (unsigned)want);
        failures++;
    }
}

int main(void)
{
    D3DKMT_ADAPTERINFO infos[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, infos };
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    KMT_SOFT_ALLOCATION_DESC priv = { .Magic = KMT_SOFT_ALLOCATION_MAGIC,
                                      .Version = KMT_SOFT_ALLOCATION_VERSION, .Size = 4096 };
    D3DDDI_ALLOCATIONINFO2 info = { .pPrivateDriverData = &priv, .PrivateDriverDataSize = sizeof(priv) };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_DESTROYALLOCATION2 da = { 0 };
    KMT_ADAPTER_DESCRIPTION desc;
    Dl_info where;
    long soft = -1;

    if (dladdr((void *)D3DKMTCreateDevice, &where) && where.dli_fname)
        printf("library: %s\n", where.dli_fname);
    printf("version: %s\n", KmtGetVersion());

    expect("D3DKMTEnumAdapters2", D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    for (ULONG i = 0; i < e.NumAdapters; i++)
        if (!KmtQueryAdapterDescription(infos[i].hAdapter, &desc) && !strcmp(desc.Miniport, "soft"))
            soft = (long)i;
    printf("adapters: %lu, software adapter at %ld\n", (unsigned long)e.NumAdapters, soft);
    if (soft < 0) {
        printf("FAIL: no software adapter\n");
        return 1;
    }

    cd.hAdapter = infos[soft].hAdapter;
    expect("D3DKMTCreateDevice", D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    expect("D3DKMTCreateAllocation (4 KiB)", D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    if (!info.hAllocation)
        printf("FAIL: no hAllocation\n"), failures++;
    da.hDevice = cd.hDevice;
    da.phAllocationList = &info.hAllocation;
    da.AllocationCount = 1;
    expect("D3DKMTDestroyAllocation2", D3DKMTDestroyAllocation2(&da), STATUS_SUCCESS);
    /* a second destroy must be refused: the handle is gone */
    expect("D3DKMTDestroyAllocation2 again", D3DKMTDestroyAllocation2(&da), STATUS_INVALID_PARAMETER);
    dd.hDevice = cd.hDevice;
    expect("D3DKMTDestroyDevice", D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { infos[i].hAdapter };
        expect("D3DKMTCloseAdapter", D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }

    printf("install_client: %s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
