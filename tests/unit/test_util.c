/*
 * Helpers shared by the Check unit tests.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "test_util.h"
#include "miniports/builtin.h"

void kmt_test_use_miniport(const char *selection)
{
    setenv("KMTSHIM_MINIPORT", selection, 1);
}

D3DKMT_HANDLE kmt_test_open_adapter(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };

    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_ge(e.NumAdapters, 1);
    for (ULONG i = 1; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { info[i].hAdapter };
        ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
    }
    return info[0].hAdapter;
}

D3DKMT_HANDLE kmt_test_create_device(D3DKMT_HANDLE *adapter_out)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    cd.hAdapter = kmt_test_open_adapter();
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    ck_assert_local_handle(cd.hDevice);
    if (adapter_out)
        *adapter_out = cd.hAdapter;
    return cd.hDevice;
}

KMT_SOFT_ALLOCATION_DESC kmt_test_soft_desc(UINT64 size)
{
    KMT_SOFT_ALLOCATION_DESC d = { 0 };

    d.Magic = KMT_SOFT_ALLOCATION_MAGIC;
    d.Version = KMT_SOFT_ALLOCATION_VERSION;
    d.Size = size;
    return d;
}

NTSTATUS kmt_test_create_allocations(D3DKMT_HANDLE device, UINT count, UINT64 size,
                                     D3DKMT_HANDLE *allocations, D3DKMT_HANDLE *resource)
{
    D3DDDI_ALLOCATIONINFO *info = calloc(count, sizeof(*info));
    KMT_SOFT_ALLOCATION_DESC *desc = calloc(count, sizeof(*desc));
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    ck_assert_ptr_nonnull(info);
    ck_assert_ptr_nonnull(desc);
    for (UINT i = 0; i < count; i++) {
        desc[i] = kmt_test_soft_desc(size);
        info[i].pPrivateDriverData = &desc[i];
        info[i].PrivateDriverDataSize = sizeof(desc[i]);
    }
    ca.hDevice = device;
    ca.NumAllocations = count;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = resource != NULL;
    status = D3DKMTCreateAllocation(&ca);
    if (!status) {
        for (UINT i = 0; i < count; i++)
            allocations[i] = info[i].hAllocation;
        if (resource)
            *resource = ca.hResource;
    }
    free(info);
    free(desc);
    return status;
}

NTSTATUS kmt_test_create_existing_heap(D3DKMT_HANDLE device, void *mem, SIZE_T size, D3DKMT_HANDLE *alloc)
{
    D3DKMT_CREATESTANDARDALLOCATION std = { 0 };
    D3DDDI_ALLOCATIONINFO info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    NTSTATUS status;

    std.Type = D3DKMT_STANDARDALLOCATIONTYPE_EXISTINGHEAP;
    std.ExistingHeapData.Size = size;
    info.pSystemMem = mem;
    ca.hDevice = device;
    ca.pStandardAllocation = &std;
    ca.NumAllocations = 1;
    ca.pAllocationInfo = &info;
    ca.Flags.StandardAllocation = 1;
    ca.Flags.ExistingSysMem = 1;
    status = D3DKMTCreateAllocation(&ca);
    if (!status)
        *alloc = info.hAllocation;
    return status;
}

KMT_SOFT_ESCAPE kmt_test_soft_stats(D3DKMT_HANDLE adapter)
{
    return kmt_test_soft_escape(adapter, KMT_SOFT_ESCAPE_GET_STATS);
}

KMT_SOFT_ESCAPE kmt_test_soft_escape(D3DKMT_HANDLE adapter, UINT code)
{
    KMT_SOFT_ESCAPE e = { .Code = code };
    D3DKMT_ESCAPE esc = { 0 };

    esc.hAdapter = adapter;
    esc.Type = D3DKMT_ESCAPE_DRIVERPRIVATE;
    esc.pPrivateDriverData = &e;
    esc.PrivateDriverDataSize = sizeof(e);
    ck_assert_status(D3DKMTEscape(&esc), STATUS_SUCCESS);
    return e;
}

static struct {
    const char *name;
    void (*patch)(DRIVER_INITIALIZATION_DATA *ddi);
    DRIVER_INITIALIZATION_DATA *soft;
    const KMT_DXGKRNL_EXPORTS *core;
} variant;

static NTSTATUS APIENTRY variant_initialize(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *init)
{
    DRIVER_INITIALIZATION_DATA mine = *init;

    *variant.soft = *init;
    mine.DriverName = variant.name;
    variant.patch(&mine);
    return variant.core->DxgkInitialize(driver, &mine);
}

/* The soft miniport's entry, handed a core whose DxgkInitialize patches
 * the table it registers. */
static NTSTATUS APIENTRY variant_entry(KMT_DRIVER_OBJECT *driver, const KMT_DXGKRNL_EXPORTS *dxgkrnl)
{
    KMT_DXGKRNL_EXPORTS wrapped = *dxgkrnl;

    variant.core = dxgkrnl;
    wrapped.DxgkInitialize = variant_initialize;
    return KmtSoftMiniportDriverEntry(driver, &wrapped);
}

void kmt_test_register_soft_variant(const char *name, void (*patch)(DRIVER_INITIALIZATION_DATA *ddi),
                                    DRIVER_INITIALIZATION_DATA *soft)
{
    variant.name = name;
    variant.patch = patch;
    variant.soft = soft;
    ck_assert_status(KmtRegisterMiniport(name, variant_entry), STATUS_SUCCESS);
}

UINT64 kmt_test_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (UINT64)ts.tv_sec * 1000 + (UINT64)ts.tv_nsec / 1000000;
}

void kmt_test_shutdown_no_leaks(void)
{
    KmtProcessShutdown();
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
}

/* The runner's directory for its cases' private brokers (made by the
 * first case that asks): a case that fails or is killed cannot remove its
 * own, so the runner removes them all at its end. */
static char runner_broker_root[64];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    remove(path);
    return 0;
}

int kmt_test_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    int failed;

    snprintf(runner_broker_root, sizeof(runner_broker_root), "/tmp/kmtshim-test-%d", (int)getpid());
    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (!access(runner_broker_root, F_OK))
        nftw(runner_broker_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Whether /proc/self/task/<tid> is one of the library's threads ("kmt-..."). */
static bool library_thread(const char *tid)
{
    char path[300], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
    if (!(f = fopen(path, "re")))
        return false;
    if (!fgets(comm, sizeof(comm), f))
        comm[0] = 0;
    fclose(f);
    return !strncmp(comm, "kmt-", 4);
}

/* SigBlk of /proc/self/task/<tid>/status. */
static unsigned long long blocked_signals_of(const char *tid)
{
    char path[300], line[256];
    unsigned long long mask = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
    f = fopen(path, "re");
    if (!f)
        return ~0ull;                    /* the thread is gone */
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "SigBlk: %llx", &mask) == 1)
            break;
    fclose(f);
    return mask;
}

unsigned kmt_test_assert_library_threads_block_signals(void)
{
    static const int async[] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGALRM, SIGPROF, SIGUSR1, SIGUSR2, SIGPIPE, SIGIO };
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    unsigned checked = 0;
    char self[16];

    ck_assert_ptr_nonnull(d);
    snprintf(self, sizeof(self), "%d", (int)gettid());
    while ((e = readdir(d))) {
        unsigned long long mask;

        if (e->d_name[0] == '.' || !strcmp(e->d_name, self) || !library_thread(e->d_name))
            continue;
        /* glibc blocks everything in a thread while it starts and ends:
         * look again until it is past that */
        for (int tries = 0; tries < 1000; tries++) {
            if ((mask = blocked_signals_of(e->d_name)) == ~0ull || !(mask & (1ull << (SIGSEGV - 1))))
                break;
            usleep(1000);
        }
        if (mask == ~0ull)
            continue;
        for (unsigned i = 0; i < sizeof(async) / sizeof(async[0]); i++)
            ck_assert_msg(mask & (1ull << (async[i] - 1)), "thread %s does not block signal %d (SigBlk %llx)",
                          e->d_name, async[i], mask);
        for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
            ck_assert_msg(!(mask & (1ull << (faults[i] - 1))), "thread %s blocks fault signal %d", e->d_name,
                          faults[i]);
        checked++;
    }
    closedir(d);
    return checked;
}

static int capture_read = -1, saved_stderr = -1;

void kmt_test_capture_begin(void)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    saved_stderr = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(p[1], STDERR_FILENO), 0);
    close(p[1]);
    capture_read = p[0];
}

const char *kmt_test_capture_end(void)
{
    static char text[32768];
    size_t used = 0;
    ssize_t n;

    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    while (used < sizeof(text) - 1 && (n = read(capture_read, text + used, sizeof(text) - 1 - used)) > 0)
        used += (size_t)n;
    close(capture_read);
    text[used] = 0;
    return text;
}

unsigned kmt_test_count_lines(const char *text, const char *a, const char *b)
{
    unsigned count = 0;

    while (*text) {
        const char *end = strchr(text, '\n');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        char line[1024];

        snprintf(line, sizeof(line), "%.*s", (int)len, text);
        if (strstr(line, a) && strstr(line, b))
            count++;
        text += len + (end != NULL);
    }
    return count;
}

static char private_broker_dir[96];

static void remove_private_broker_dir(void)
{
    static const char *const files[] = { "socket", "lock", "globals" };
    char path[128];

    if (!private_broker_dir[0])
        return;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", private_broker_dir, files[i]);
        unlink(path);
    }
    rmdir(private_broker_dir);
}

const char *kmt_test_private_broker(void)
{
    static pid_t registered_in;

    struct stat st;

    remove_private_broker_dir();
    /* inside the runner's directory when it is ours alone, else in /tmp */
    if (runner_broker_root[0] && (!mkdir(runner_broker_root, 0700) || errno == EEXIST)
        && !lstat(runner_broker_root, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid()
        && !(st.st_mode & 077))
        snprintf(private_broker_dir, sizeof(private_broker_dir), "%s/XXXXXX", runner_broker_root);
    else
        snprintf(private_broker_dir, sizeof(private_broker_dir), "/tmp/kmtshim-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(private_broker_dir));
    setenv("KMTSHIM_BROKER_DIR", private_broker_dir, 1);
    setenv("KMTSHIM_BROKER_LINGER_MS", "100", 0);
    if (registered_in != getpid()) {
        /* Check's fork mode: each case is a child of the runner */
        registered_in = getpid();
        atexit(remove_private_broker_dir);
    }
    return private_broker_dir;
}
