/*
 * The binary interface: what libkmtshim.so exports (every D3DKMT thunk and
 * the Kmt extras, nothing internal), Windows' numeric values (NTSTATUS,
 * KMTQAITYPE, driver versions) and the bit positions of the flag unions,
 * which the headers' size/offset assertions cannot see.  Struct sizes and
 * offsets are pinned at compile time by KMT_CHECK_SIZE/KMT_CHECK_OFFSET;
 * tests/unit/abi-mingw.sh checks the same headers with mingw-w64.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "test_util.h"

/* ---- the shared library's exports ------------------------------------------------------------ */

static const char *const exported[] = {
    "D3DKMTEnumAdapters", "D3DKMTEnumAdapters2", "D3DKMTEnumAdapters3",
    "D3DKMTOpenAdapterFromLuid", "D3DKMTOpenAdapterFromGdiDisplayName", "D3DKMTOpenAdapterFromHdc",
    "D3DKMTOpenAdapterFromDeviceName", "D3DKMTCloseAdapter", "D3DKMTQueryAdapterInfo",
    "D3DKMTQueryVideoMemoryInfo", "D3DKMTQueryStatistics", "D3DKMTQueryClockCalibration",
    "D3DKMTCreateDevice", "D3DKMTDestroyDevice",
    "D3DKMTCreateAllocation", "D3DKMTCreateAllocation2", "D3DKMTDestroyAllocation",
    "D3DKMTDestroyAllocation2", "D3DKMTLock", "D3DKMTUnlock", "D3DKMTLock2", "D3DKMTUnlock2",
    "D3DKMTEscape",
    "D3DKMTCreateContext", "D3DKMTCreateContextVirtual", "D3DKMTDestroyContext",
    "D3DKMTGetDeviceState", "D3DKMTSubmitCommand", "D3DKMTRender", "D3DKMTPresent",
    "D3DKMTCreateSynchronizationObject", "D3DKMTCreateSynchronizationObject2",
    "D3DKMTDestroySynchronizationObject", "D3DKMTSignalSynchronizationObject",
    "D3DKMTSignalSynchronizationObject2", "D3DKMTWaitForSynchronizationObject",
    "D3DKMTWaitForSynchronizationObject2", "D3DKMTSignalSynchronizationObjectFromCpu",
    "D3DKMTWaitForSynchronizationObjectFromCpu", "D3DKMTSignalSynchronizationObjectFromGpu",
    "D3DKMTSignalSynchronizationObjectFromGpu2", "D3DKMTWaitForSynchronizationObjectFromGpu",
    "D3DKMTOpenSynchronizationObject", "D3DKMTOpenSyncObjectFromNtHandle",
    "D3DKMTOpenSyncObjectFromNtHandle2", "D3DKMTOpenSyncObjectNtHandleFromName",
    "D3DKMTSetVidPnSourceOwner", "D3DKMTSetVidPnSourceOwner1", "D3DKMTSetVidPnSourceOwner2",
    "D3DKMTCheckVidPnExclusiveOwnership", "D3DKMTCheckExclusiveOwnership", "D3DKMTCheckOcclusion",
    "D3DKMTGetOverlayState", "D3DKMTSetQueuedLimit", "D3DKMTSetProcessSchedulingPriorityClass",
    "D3DKMTGetProcessSchedulingPriorityClass",
    "D3DKMTWaitForVerticalBlankEvent", "D3DKMTWaitForVerticalBlankEvent2", "D3DKMTGetScanLine",
    "D3DKMTPollDisplayChildren",
    "D3DKMTQueryResourceInfo", "D3DKMTOpenResource", "D3DKMTOpenResource2", "D3DKMTShareObjects",
    "D3DKMTQueryResourceInfoFromNtHandle", "D3DKMTOpenResourceFromNtHandle", "D3DKMTOpenNtHandleFromName",
    "D3DKMTCreateKeyedMutex", "D3DKMTCreateKeyedMutex2", "D3DKMTOpenKeyedMutex", "D3DKMTOpenKeyedMutex2",
    "D3DKMTOpenKeyedMutexFromNtHandle", "D3DKMTDestroyKeyedMutex", "D3DKMTAcquireKeyedMutex",
    "D3DKMTAcquireKeyedMutex2", "D3DKMTReleaseKeyedMutex", "D3DKMTReleaseKeyedMutex2",
    "KmtSetEventCallbacks", "KmtWaitForSynchronizationObjectFromCpuTimeout",
    "KmtGetVersion", "KmtRegisterMiniport", "KmtProcessShutdown", "KmtQueryAdapterDescription",
    "KmtLiveObjectCount", "KmtOwnsHandle", "KmtQueryAdapterDeviceName", "KmtOpenAdapterFromDevicePath",
    "KmtMiracastStartSession", "KmtMiracastStopSession", "KmtMiracastIoControl",
    "KmtMiracastQueryStatus", "KmtMiracastReportSessionStatus",
};
#define N_EXPORTED ((int)(sizeof(exported) / sizeof(exported[0])))

static const char *const internal[] = {
    "hmgr_alloc", "hmgr_publish", "hmgr_remove", "dxgk_process", "dxgk_process_init_slow",
    "dxgk_create_allocation", "dxgk_lock", "dxgk_enum_adapters", "KmtSoftMiniportDriverEntry",
    "soft_create_allocation", "soft_lock", "kmt_debug_log", "kmt_debugstr_status",
};
#define N_INTERNAL ((int)(sizeof(internal) / sizeof(internal[0])))

/* Where make check built the library; by hand, next to this program. */
static void library_path(char *out, size_t size)
{
    const char *dir = getenv("KMTSHIM_TEST_BUILDDIR");
    char exe[PATH_MAX];
    ssize_t n;

    if (dir) {
        snprintf(out, size, "%s/.libs/libkmtshim.so", dir);
        return;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = 0;
    snprintf(out, size, "%s/../../.libs/libkmtshim.so", dirname(exe));
}

static void *open_library(void)
{
    char path[PATH_MAX];
    void *lib;

    library_path(path, sizeof(path));
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "dlopen(%s): %s", path, dlerror());
    return lib;
}

START_TEST(library_exports_thunk)
{
    void *lib = open_library();

    ck_assert_msg(dlsym(lib, exported[_i]) != NULL, "%s is not exported", exported[_i]);
    dlclose(lib);
}
END_TEST

START_TEST(library_hides_internal)
{
    void *lib = open_library();

    ck_assert_msg(dlsym(lib, internal[_i]) == NULL, "%s is exported", internal[_i]);
    dlclose(lib);
}
END_TEST

/* Every defined dynamic symbol of the .so, checked against the public
 * prefixes: nothing of the core's leaks into the ABI. */
START_TEST(library_exports_only_public_names)
{
    static const char *const internal_prefixes[] = {
        "hmgr_", "dxgk_", "soft_", "drm_", "kmt_", "list_", "KmtSoft", "KmtDrm",
    };
    char path[PATH_MAX];
    const ElfW(Ehdr) *eh;
    const ElfW(Shdr) *sh;
    unsigned public_count = 0;
    struct stat st;
    void *map;
    int fd;

    library_path(path, sizeof(path));
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fstat(fd, &st), 0);
    map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    eh = map;
    ck_assert_int_eq(memcmp(eh->e_ident, ELFMAG, SELFMAG), 0);
    /* the library's own word size: ELFCLASS64, or ELFCLASS32 in a 32-bit build */
    ck_assert_int_eq(eh->e_ident[EI_CLASS], sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
    sh = (const ElfW(Shdr) *)((const char *)map + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const ElfW(Sym) *sym;
        const char *strtab;
        size_t count;

        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        sym = (const ElfW(Sym) *)((const char *)map + sh[i].sh_offset);
        strtab = (const char *)map + sh[sh[i].sh_link].sh_offset;
        count = sh[i].sh_size / sizeof(*sym);
        for (size_t j = 1; j < count; j++) {
            const char *name = strtab + sym[j].st_name;

            if (sym[j].st_shndx == SHN_UNDEF || ELF32_ST_BIND(sym[j].st_info) == STB_LOCAL)
                continue;
            for (unsigned k = 0; k < sizeof(internal_prefixes) / sizeof(internal_prefixes[0]); k++)
                ck_assert_msg(strncmp(name, internal_prefixes[k], strlen(internal_prefixes[k])),
                              "internal symbol %s is exported", name);
            public_count += !strncmp(name, "D3DKMT", 6) || !strncmp(name, "Kmt", 3);
        }
    }
    ck_assert_uint_eq(public_count, N_EXPORTED);
    munmap(map, st.st_size);
    close(fd);
}
END_TEST

START_TEST(library_works_through_dlopen)
{
    NTSTATUS (APIENTRY *enum2)(D3DKMT_ENUMADAPTERS2 *);
    void (*shutdown)(void);
    unsigned (*live)(void);
    const char *(*version)(void);
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    void *lib;

    kmt_test_use_miniport("soft");
    lib = open_library();
    *(void **)&enum2 = dlsym(lib, "D3DKMTEnumAdapters2");
    *(void **)&shutdown = dlsym(lib, "KmtProcessShutdown");
    *(void **)&live = dlsym(lib, "KmtLiveObjectCount");
    *(void **)&version = dlsym(lib, "KmtGetVersion");
    ck_assert_status(enum2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 1);
    ck_assert_uint_eq(info[0].hAdapter, KMT_FIRST_HANDLE);
    ck_assert_uint_eq(live(), 2);
    ck_assert_str_eq(version(), PACKAGE_VERSION);
    shutdown();
    ck_assert_uint_eq(live(), 0);
    /* the library's state is its own: this program's copy never started */
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    dlclose(lib);
}
END_TEST

/* The library's threads (scheduler, engine, watchers) run its code until
 * the process shuts it down: a dlclose() before that must not unmap it
 * under them (it is linked -z nodelete).  Here the engine is inside a
 * 200 ms DELAY command when the program lets the library go. */
START_TEST(library_stays_loaded_while_its_threads_run)
{
    NTSTATUS (APIENTRY *enum2)(D3DKMT_ENUMADAPTERS2 *);
    NTSTATUS (APIENTRY *create_device)(D3DKMT_CREATEDEVICE *);
    NTSTATUS (APIENTRY *create_context)(D3DKMT_CREATECONTEXTVIRTUAL *);
    NTSTATUS (APIENTRY *create_alloc)(D3DKMT_CREATEALLOCATION *);
    NTSTATUS (APIENTRY *lock2)(D3DKMT_LOCK2 *);
    NTSTATUS (APIENTRY *submit)(const D3DKMT_SUBMITCOMMAND *);
    void (*shutdown)(void);
    KMT_SOFT_ALLOCATION_DESC desc = kmt_test_soft_desc(4096);
    KMT_SOFT_CMD_DELAY delay = { { KMT_SOFT_OP_DELAY, sizeof(delay) }, 200000, 0 };
    D3DKMT_ADAPTERINFO info[4];
    D3DKMT_ENUMADAPTERS2 e = { 4, info };
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cc = { 0 };
    D3DDDI_ALLOCATIONINFO2 ai = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    D3DKMT_SUBMITCOMMAND sc = { 0 };
    char path[PATH_MAX];
    void *lib;

    kmt_test_use_miniport("soft");
    lib = open_library();
    *(void **)&enum2 = dlsym(lib, "D3DKMTEnumAdapters2");
    *(void **)&create_device = dlsym(lib, "D3DKMTCreateDevice");
    *(void **)&create_context = dlsym(lib, "D3DKMTCreateContextVirtual");
    *(void **)&create_alloc = dlsym(lib, "D3DKMTCreateAllocation2");
    *(void **)&lock2 = dlsym(lib, "D3DKMTLock2");
    *(void **)&submit = dlsym(lib, "D3DKMTSubmitCommand");
    ck_assert_status(enum2(&e), STATUS_SUCCESS);
    cd.hAdapter = info[0].hAdapter;
    ck_assert_status(create_device(&cd), STATUS_SUCCESS);
    cc.hDevice = cd.hDevice;
    ck_assert_status(create_context(&cc), STATUS_SUCCESS);
    ai.pPrivateDriverData = &desc;
    ai.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &ai;
    ck_assert_status(create_alloc(&ca), STATUS_SUCCESS);
    lock.hDevice = cd.hDevice;
    lock.hAllocation = ai.hAllocation;
    ck_assert_status(lock2(&lock), STATUS_SUCCESS);
    memcpy(lock.pData, &delay, sizeof(delay));
    sc.Commands = ai.GpuVirtualAddress;
    sc.CommandLength = sizeof(delay);
    sc.BroadcastContextCount = 1;
    sc.BroadcastContext[0] = cc.hContext;
    ck_assert_status(submit(&sc), STATUS_SUCCESS);

    ck_assert_int_eq(dlclose(lib), 0);
    library_path(path, sizeof(path));
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    ck_assert_msg(lib != NULL, "dlclose() unloaded the library while its threads ran");
    usleep(400000);                      /* the engine ends its DELAY, back in the library's code */
    *(void **)&shutdown = dlsym(lib, "KmtProcessShutdown");
    shutdown();
    dlclose(lib);
}
END_TEST

START_TEST(version_string)
{
    char expect[32];

    snprintf(expect, sizeof(expect), "%d.%d.", KMTSHIM_VERSION_MAJOR, KMTSHIM_VERSION_MINOR);
    ck_assert_str_eq(KmtGetVersion(), PACKAGE_VERSION);
    ck_assert_int_eq(strncmp(KmtGetVersion(), expect, strlen(expect)), 0);
}
END_TEST

/* ---- Windows' numbers ----------------------------------------------------------------------- */

static const struct {
    const char *name;
    NTSTATUS value;
    uint32_t windows;
} statuses[] = {
    { "SUCCESS", STATUS_SUCCESS, 0x00000000 },
    { "WAIT_0", STATUS_WAIT_0, 0x00000000 },
    { "ABANDONED", STATUS_ABANDONED, 0x00000080 },
    { "TIMEOUT", STATUS_TIMEOUT, 0x00000102 },
    { "PENDING", STATUS_PENDING, 0x00000103 },
    { "UNSUCCESSFUL", STATUS_UNSUCCESSFUL, 0xC0000001 },
    { "NOT_IMPLEMENTED", STATUS_NOT_IMPLEMENTED, 0xC0000002 },
    { "INVALID_HANDLE", STATUS_INVALID_HANDLE, 0xC0000008 },
    { "INVALID_PARAMETER", STATUS_INVALID_PARAMETER, 0xC000000D },
    { "NO_MEMORY", STATUS_NO_MEMORY, 0xC0000017 },
    { "BUFFER_TOO_SMALL", STATUS_BUFFER_TOO_SMALL, 0xC0000023 },
    { "OBJECT_TYPE_MISMATCH", STATUS_OBJECT_TYPE_MISMATCH, 0xC0000024 },
    { "OBJECT_NAME_NOT_FOUND", STATUS_OBJECT_NAME_NOT_FOUND, 0xC0000034 },
    { "REVISION_MISMATCH", STATUS_REVISION_MISMATCH, 0xC0000059 },
    { "PROCEDURE_NOT_FOUND", STATUS_PROCEDURE_NOT_FOUND, 0xC000007A },
    { "INSUFFICIENT_RESOURCES", STATUS_INSUFFICIENT_RESOURCES, 0xC000009A },
    { "NOT_SUPPORTED", STATUS_NOT_SUPPORTED, 0xC00000BB },
    { "DLL_NOT_FOUND", STATUS_DLL_NOT_FOUND, 0xC0000135 },
    { "DEVICE_REMOVED", STATUS_DEVICE_REMOVED, 0xC00002B6 },
    { "GRAPHICS_NO_VIDEO_MEMORY", STATUS_GRAPHICS_NO_VIDEO_MEMORY, 0xC01E0100 },
    { "GRAPHICS_ALLOCATION_BUSY", STATUS_GRAPHICS_ALLOCATION_BUSY, 0xC01E0102 },
    { "GRAPHICS_TOO_MANY_REFERENCES", STATUS_GRAPHICS_TOO_MANY_REFERENCES, 0xC01E0103 },
    { "GRAPHICS_DRIVER_MISMATCH", STATUS_GRAPHICS_DRIVER_MISMATCH, 0x401E0117 },
    { "PRIVILEGE_NOT_HELD", STATUS_PRIVILEGE_NOT_HELD, 0xC0000061 },
    { "GRAPHICS_PRESENT_OCCLUDED", STATUS_GRAPHICS_PRESENT_OCCLUDED, 0xC01E0006 },
    { "GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE", STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE, 0xC01E0304 },
    { "GRAPHICS_VIDPN_SOURCE_IN_USE", STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE, 0xC01E0342 },
};

START_TEST(ntstatus_values)
{
    ck_assert_msg((uint32_t)statuses[_i].value == statuses[_i].windows, "STATUS_%s is 0x%08x, not 0x%08x",
                  statuses[_i].name, (unsigned)statuses[_i].value, statuses[_i].windows);
    ck_assert_int_eq(NT_SUCCESS(statuses[_i].value), !(statuses[_i].windows & 0x80000000u));
    ck_assert_uint_eq(sizeof(statuses[_i].value), 4);
}
END_TEST

START_TEST(query_type_values)
{
    static const struct { int value, windows; } t[] = {
        { KMTQAITYPE_UMDRIVERPRIVATE, 0 }, { KMTQAITYPE_UMDRIVERNAME, 1 },
        { KMTQAITYPE_UMOPENGLINFO, 2 }, { KMTQAITYPE_GETSEGMENTSIZE, 3 },
        { KMTQAITYPE_ADAPTERGUID, 4 }, { KMTQAITYPE_ADAPTERADDRESS, 6 },
        { KMTQAITYPE_ADAPTERREGISTRYINFO, 8 }, { KMTQAITYPE_CHECKDRIVERUPDATESTATUS, 11 },
        { KMTQAITYPE_DRIVERVERSION, 13 }, { KMTQAITYPE_ADAPTERTYPE, 15 },
        { KMTQAITYPE_WDDM_1_2_CAPS, 17 }, { KMTQAITYPE_UMD_DRIVER_VERSION, 18 },
        { KMTQAITYPE_WDDM_1_3_CAPS, 22 }, { KMTQAITYPE_WDDM_2_0_CAPS, 24 },
        { KMTQAITYPE_NODEMETADATA, 25 }, { KMTQAITYPE_PHYSICALADAPTERCOUNT, 30 },
        { KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, 31 }, { KMTQAITYPE_DRIVERCAPS_EXT, 32 },
        { KMTQAITYPE_QUERY_GPUMMU_CAPS, 34 }, { KMTQAITYPE_GETSEGMENTGROUPSIZE, 42 },
        { KMTQAITYPE_QUERYREGISTRY, 48 }, { KMTQAITYPE_KMD_DRIVER_VERSION, 49 },
        { KMTQAITYPE_ADAPTERTYPE_RENDER, 57 }, { KMTQAITYPE_QUERY_ADAPTER_UNIQUE_GUID, 60 },
        { KMTQAITYPE_ADAPTERPERFDATA, 62 }, { KMTQAITYPE_DRIVER_DESCRIPTION, 65 },
        { KMTQAITYPE_PARAVIRTUALIZATION_RENDER, 68 }, { KMTQAITYPE_SERVICENAME, 69 },
        { KMTQAITYPE_WDDM_2_7_CAPS, 70 }, { KMTQAITYPE_DISPLAY_UMDRIVERNAME, 71 },
        { KMTQAITYPE_WDDM_2_9_CAPS, 75 }, { KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT, 76 },
        { KMTQAITYPE_WDDM_3_0_CAPS, 77 }, { KMTQAITYPE_WSAUMDIMAGENAME, 78 },
        { KMTQAITYPE_VGPUINTERFACEID, 79 }, { KMTQAITYPE_WDDM_3_1_CAPS, 80 },
        { KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER, 54 }, { KMTQAITYPE_NODEPERFDATA, 61 },
        { KMTQAITYPE_ADAPTERPERFDATA_CAPS, 63 },
    };

    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        ck_assert_msg(t[i].value == t[i].windows, "entry %u: %d, Windows %d", i, t[i].value, t[i].windows);
    ck_assert_uint_eq(sizeof(KMTQUERYADAPTERINFOTYPE), 4);
}
END_TEST

START_TEST(other_enum_values)
{
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_1_0, 1000);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_1_1, 1105);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_1_2, 1200);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_1_3, 1300);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_2_0, 2000);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_2_7, 2700);
    ck_assert_int_eq(KMT_DRIVERVERSION_WDDM_3_1, 3100);
    ck_assert_int_eq(KMTUMDVERSION_DX9, 0);
    ck_assert_int_eq(KMTUMDVERSION_DX12, 3);
    ck_assert_int_eq(NUM_KMTUMDVERSIONS, 4);
    ck_assert_int_eq(D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP, 1);
    ck_assert_int_eq(D3DKMT_STANDARDALLOCATIONTYPE_INTERNALBACKINGSTORE, 2);
    ck_assert_int_eq(D3DKMT_MEMORY_SEGMENT_GROUP_LOCAL, 0);
    ck_assert_int_eq(D3DKMT_MEMORY_SEGMENT_GROUP_NON_LOCAL, 1);
    ck_assert_int_eq(D3DKMT_ESCAPE_DRIVERPRIVATE, 0);
    ck_assert_int_eq(D3DKMT_ESCAPE_DEBUG_SNAPSHOT, 6);
    ck_assert_int_eq(MAX_ENUM_ADAPTERS, 16);
    ck_assert_int_eq(D3DKMT_CREATEALLOCATION_MAX, 1024);
    ck_assert_int_eq(MAX_PATH, 260);
    ck_assert_uint_eq(sizeof(D3DKMT_HANDLE), 4);
    ck_assert_uint_eq(sizeof(WCHAR), 2);
    ck_assert_uint_eq(sizeof(LONG), 4);
    ck_assert_uint_eq(sizeof(LUID), 8);
    ck_assert_uint_eq(_Alignof(LUID), 4);
}
END_TEST

/* ---- flag bits --------------------------------------------------------------------------------- */

/* Sets one bit-field and checks which bit of the word it is. */
#define ASSERT_BIT(type, field, bit) do {                                             \
        type _v;                                                                      \
        uint64_t _raw = 0;                                                            \
        memset(&_v, 0, sizeof(_v));                                                   \
        _v.field = 1;                                                                 \
        memcpy(&_raw, &_v, sizeof(_v));                                               \
        ck_assert_msg(_raw == 1ull << (bit), #type "." #field " is 0x%llx, not bit %d", \
                      (unsigned long long)_raw, bit);                                 \
    } while (0)

START_TEST(create_allocation_flag_bits)
{
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CreateResource, 0);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CreateShared, 1);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, NonSecure, 2);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CreateProtected, 3);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, RestrictSharedAccess, 4);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, ExistingSysMem, 5);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, NtSecuritySharing, 6);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, ReadOnly, 7);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CreateWriteCombined, 8);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CreateCached, 9);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, SwapChainBackBuffer, 10);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, CrossAdapter, 11);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, OpenCrossAdapter, 12);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, PartialSharedCreation, 13);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, Zeroed, 14);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, WriteWatch, 15);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, StandardAllocation, 16);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, ExistingSection, 17);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, AllowNotZeroed, 18);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, PhysicallyContiguous, 19);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, NoKmdAccess, 20);
    ASSERT_BIT(D3DKMT_CREATEALLOCATIONFLAGS, SharedDisplayable, 21);
}
END_TEST

START_TEST(lock_flag_bits)
{
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, ReadOnly, 0);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, WriteOnly, 1);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, DonotWait, 2);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, IgnoreSync, 3);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, LockEntire, 4);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, DonotEvict, 5);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, AcquireAperture, 6);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, Discard, 7);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, NoExistingReference, 8);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, UseAlternateVA, 9);
    ASSERT_BIT(D3DDDICB_LOCKFLAGS, IgnoreReadSync, 10);
}
END_TEST

START_TEST(destroy_flag_bits)
{
    ASSERT_BIT(D3DDDICB_DESTROYALLOCATION2FLAGS, AssumeNotInUse, 0);
    ASSERT_BIT(D3DDDICB_DESTROYALLOCATION2FLAGS, SynchronousDestroy, 1);
    ASSERT_BIT(D3DDDICB_DESTROYALLOCATION2FLAGS, SystemUseOnly, 31);
}
END_TEST

START_TEST(adapter_type_bits)
{
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, RenderSupported, 0);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, DisplaySupported, 1);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, SoftwareDevice, 2);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, PostDevice, 3);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, HybridDiscrete, 4);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, HybridIntegrated, 5);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, IndirectDisplayDevice, 6);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, Paravirtualized, 7);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, ACGSupported, 8);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, SupportSetTimingsFromVidPn, 9);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, Detachable, 10);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, ComputeOnly, 11);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, Prototype, 12);
    ASSERT_BIT(D3DKMT_ADAPTERTYPE, RuntimePowerManagement, 13);
    ASSERT_BIT(D3DKMT_WDDM_2_7_CAPS, HwSchSupported, 0);
    ASSERT_BIT(D3DKMT_WDDM_2_7_CAPS, HwSchEnabled, 1);
    ASSERT_BIT(D3DKMT_WDDM_2_7_CAPS, HwSchEnabledByDefault, 2);
    ASSERT_BIT(D3DKMT_WDDM_2_7_CAPS, IndependentVidPnVSyncControl, 3);
    ASSERT_BIT(D3DKMT_WDDM_2_9_CAPS, HwSchEnabled, 2);
    ASSERT_BIT(D3DKMT_WDDM_2_9_CAPS, SelfRefreshMemorySupported, 3);
    ASSERT_BIT(D3DKMT_WDDM_3_0_CAPS, HwFlipQueueEnabled, 2);
    ASSERT_BIT(D3DKMT_WDDM_3_0_CAPS, DisplayableSupported, 3);
    ASSERT_BIT(D3DKMT_DRIVERCAPS_EXT, VirtualModeSupport, 0);
    ASSERT_BIT(D3DKMT_DRIVERCAPS_EXT, Usb4MonitorSupport, 1);
}
END_TEST

START_TEST(misc_flag_bits)
{
    ASSERT_BIT(D3DKMT_ENUMADAPTERS_FILTER, IncludeComputeOnly, 0);
    ASSERT_BIT(D3DKMT_ENUMADAPTERS_FILTER, IncludeDisplayOnly, 1);
    ASSERT_BIT(D3DKMT_CREATEDEVICEFLAGS, LegacyMode, 0);
    ASSERT_BIT(D3DKMT_CREATEDEVICEFLAGS, RequestVSync, 1);
    ASSERT_BIT(D3DKMT_CREATEDEVICEFLAGS, DisableGpuTimeout, 2);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, HardwareAccess, 0);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, DeviceStatusQuery, 1);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, ChangeFrameLatency, 2);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, NoAdapterSynchronization, 3);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, VirtualMachineData, 5);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, DriverKnownEscape, 6);
    ASSERT_BIT(D3DDDI_ESCAPEFLAGS, DriverCommonEscape, 7);
    ASSERT_BIT(D3DDDI_ALLOCATIONINFOFLAGS, Primary, 0);
    ASSERT_BIT(D3DDDI_ALLOCATIONINFOFLAGS, Stereo, 1);
    ASSERT_BIT(D3DDDI_ALLOCATIONINFOFLAGS_WDDM2_0, OverridePriority, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("abi");
    TCase *lib = tcase_create("library");
    TCase *numbers = tcase_create("numbers");
    TCase *bits = tcase_create("bits");

    tcase_add_loop_test(lib, library_exports_thunk, 0, N_EXPORTED);
    tcase_add_loop_test(lib, library_hides_internal, 0, N_INTERNAL);
    tcase_add_test(lib, library_exports_only_public_names);
    tcase_add_test(lib, library_works_through_dlopen);
    tcase_add_test(lib, library_stays_loaded_while_its_threads_run);
    tcase_add_test(lib, version_string);
    suite_add_tcase(s, lib);

    tcase_add_loop_test(numbers, ntstatus_values, 0, (int)(sizeof(statuses) / sizeof(statuses[0])));
    tcase_add_test(numbers, query_type_values);
    tcase_add_test(numbers, other_enum_values);
    suite_add_tcase(s, numbers);

    tcase_add_test(bits, create_allocation_flag_bits);
    tcase_add_test(bits, lock_flag_bits);
    tcase_add_test(bits, destroy_flag_bits);
    tcase_add_test(bits, adapter_type_bits);
    tcase_add_test(bits, misc_flag_bits);
    suite_add_tcase(s, bits);
    return kmt_test_run(s);
}
