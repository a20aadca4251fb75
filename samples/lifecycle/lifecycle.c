/*
 * lifecycle: the life of GPU memory through the D3DKMT calls, natively.
 *
 * Enumerates adapters, opens the best one (a GPU before the software
 * adapter), creates a device, a resource with two allocations, locks one,
 * writes a pattern and reads it back through a second mapping, then
 * destroys everything and prints what happened at each step.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtsoft.h"

#define ALLOCATION_SIZE (64u * 1024u)

static int failures;

static NTSTATUS step(const char *what, NTSTATUS status)
{
    printf("  %-44s %s\n", what, status ? "FAILED" : "ok");
    if (status) {
        printf("      NTSTATUS 0x%08x\n", (unsigned)status);
        failures++;
    }
    return status;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: lifecycle [--adapter N]\n"
            "Walk one resource through its life on a kmtshim adapter: create device,\n"
            "resource with two allocations, lock, write, read back, destroy.\n"
            "\n"
            "  -a, --adapter N   use adapter N of D3DKMTEnumAdapters2 (default: the best)\n"
            "  -h, --help        show this help and exit\n");
}

/* A GPU beats the software adapter; otherwise the first one. */
static ULONG pick_adapter(const D3DKMT_ADAPTERINFO *infos, ULONG count)
{
    for (ULONG i = 0; i < count; i++) {
        D3DKMT_ADAPTERTYPE type = { 0 };
        D3DKMT_QUERYADAPTERINFO q = { infos[i].hAdapter, KMTQAITYPE_ADAPTERTYPE, &type, sizeof(type) };
        if (!D3DKMTQueryAdapterInfo(&q) && !type.SoftwareDevice)
            return i;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        { "adapter", required_argument, NULL, 'a' },
        { "help", no_argument, NULL, 'h' },
        { 0 },
    };
    D3DKMT_ADAPTERINFO infos[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, infos };
    KMT_ADAPTER_DESCRIPTION desc;
    KMT_SOFT_ALLOCATION_DESC private_data[2];
    D3DDDI_ALLOCATIONINFO2 alloc_info[2];
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_UNLOCK2 unlock = { 0 };
    D3DKMT_DESTROYALLOCATION2 da = { 0 };
    D3DKMT_DESTROYDEVICE dd = { 0 };
    D3DKMT_QUERYVIDEOMEMORYINFO mem = { 0 };
    long chosen = -1;
    int opt;
    ULONG pick;

    while ((opt = getopt_long(argc, argv, "a:h", options, NULL)) != -1) {
        switch (opt) {
        case 'a': chosen = strtol(optarg, NULL, 0); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }

    printf("kmtshim %s: resource lifecycle\n", KmtGetVersion());
    if (step("D3DKMTEnumAdapters2", D3DKMTEnumAdapters2(&e)) || !e.NumAdapters) {
        printf("  no adapter\n");
        return 1;
    }
    pick = chosen >= 0 && (ULONG)chosen < e.NumAdapters ? (ULONG)chosen : pick_adapter(infos, e.NumAdapters);
    KmtQueryAdapterDescription(infos[pick].hAdapter, &desc);
    printf("  adapter %lu of %lu: %s [%s]\n", (unsigned long)pick, (unsigned long)e.NumAdapters,
           desc.Description, desc.Miniport);

    cd.hAdapter = infos[pick].hAdapter;
    if (step("D3DKMTCreateDevice", D3DKMTCreateDevice(&cd)))
        return 1;
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { infos[i].hAdapter };
        if (i != pick)
            D3DKMTCloseAdapter(&c);
    }

    memset(alloc_info, 0, sizeof(alloc_info));
    for (int i = 0; i < 2; i++) {
        private_data[i] = (KMT_SOFT_ALLOCATION_DESC){ .Magic = KMT_SOFT_ALLOCATION_MAGIC,
                                                      .Version = KMT_SOFT_ALLOCATION_VERSION,
                                                      .Size = ALLOCATION_SIZE };
        alloc_info[i].pPrivateDriverData = &private_data[i];
        alloc_info[i].PrivateDriverDataSize = sizeof(private_data[i]);
    }
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 2;
    ca.pAllocationInfo2 = alloc_info;
    ca.Flags.CreateResource = 1;
    if (step("D3DKMTCreateAllocation2 (resource, 2 x 64 KiB)", D3DKMTCreateAllocation2(&ca)))
        goto destroy_device;
    printf("      hResource 0x%08x, hAllocation 0x%08x 0x%08x\n", ca.hResource,
           alloc_info[0].hAllocation, alloc_info[1].hAllocation);

    mem.hAdapter = cd.hAdapter;
    mem.MemorySegmentGroup = D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL;
    if (!step("D3DKMTQueryVideoMemoryInfo (local)", D3DKMTQueryVideoMemoryInfo(&mem)))
        printf("      budget %llu MiB, this process uses %llu KiB\n",
               (unsigned long long)(mem.Budget >> 20), (unsigned long long)(mem.CurrentUsage >> 10));

    lock.hDevice = unlock.hDevice = cd.hDevice;
    lock.hAllocation = unlock.hAllocation = alloc_info[1].hAllocation;
    if (!step("D3DKMTLock2", D3DKMTLock2(&lock))) {
        unsigned *words = lock.pData;
        for (unsigned i = 0; i < ALLOCATION_SIZE / 4; i++)
            words[i] = i * 2654435761u;
        step("D3DKMTUnlock2", D3DKMTUnlock2(&unlock));
        if (!step("D3DKMTLock2 again (fresh mapping)", D3DKMTLock2(&lock))) {
            unsigned bad = 0;
            words = lock.pData;
            for (unsigned i = 0; i < ALLOCATION_SIZE / 4; i++)
                bad += words[i] != i * 2654435761u;
            step("read back 64 KiB pattern", bad ? STATUS_UNSUCCESSFUL : STATUS_SUCCESS);
            step("D3DKMTUnlock2", D3DKMTUnlock2(&unlock));
        }
    }

    da.hDevice = cd.hDevice;
    da.hResource = ca.hResource;
    da.Flags.SynchronousDestroy = 1;
    step("D3DKMTDestroyAllocation2 (resource, synchronous)", D3DKMTDestroyAllocation2(&da));
    if (!D3DKMTQueryVideoMemoryInfo(&mem))
        printf("      this process now uses %llu KiB\n", (unsigned long long)(mem.CurrentUsage >> 10));

destroy_device:
    dd.hDevice = cd.hDevice;
    step("D3DKMTDestroyDevice", D3DKMTDestroyDevice(&dd));
    {
        D3DKMT_CLOSEADAPTER c = { infos[pick].hAdapter };
        step("D3DKMTCloseAdapter", D3DKMTCloseAdapter(&c));
    }
    KmtProcessShutdown();
    printf("  live kernel objects after teardown: %u\n", KmtLiveObjectCount());
    if (KmtLiveObjectCount())
        failures++;
    printf("%s\n", failures ? "lifecycle: FAILED" : "lifecycle: all steps succeeded");
    return failures ? 1 : 0;
}
