/*
 * Miniport loading: the KMTSHIM_MINIPORT selection (names, order, plugins
 * by path), every way a miniport can fail to load (no adapter, no crash),
 * the DriverEntry / DxgkInitialize handshake, and adapter LUIDs.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract_util.h"

#define MAX_ADAPTERS 16

struct adapters {
    ULONG count;
    D3DKMT_ADAPTERINFO info[MAX_ADAPTERS];
    KMT_ADAPTER_DESCRIPTION desc[MAX_ADAPTERS];
};

static void enumerate(struct adapters *a)
{
    D3DKMT_ENUMADAPTERS2 e = { MAX_ADAPTERS, a->info };

    memset(a, 0, sizeof(*a));
    e.pAdapters = a->info;
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    a->count = e.NumAdapters;
    for (ULONG i = 0; i < a->count; i++) {
        ck_assert_local_handle(a->info[i].hAdapter);
        ck_assert(a->info[i].AdapterLuid.LowPart || a->info[i].AdapterLuid.HighPart);
        ck_assert_status(KmtQueryAdapterDescription(a->info[i].hAdapter, &a->desc[i]), STATUS_SUCCESS);
    }
}

static bool luid_eq(LUID a, LUID b)
{
    return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

static const char *built(const char *file)
{
    static char path[4096];
    const char *dir = getenv("KMTSHIM_TEST_BUILDDIR");

    snprintf(path, sizeof(path), "%s/tests/miniports/.libs/%s", dir ? dir : ".", file);
    ck_assert_msg(access(path, R_OK) == 0, "%s was not built", path);
    return path;
}

/* Nothing loaded: no adapter, every adapter call refused, no leak. */
static void assert_no_adapters(void)
{
    struct adapters a;
    D3DKMT_OPENADAPTERFROMLUID open = { { 1, 0 }, 0 };
    D3DKMT_CREATEDEVICE cd = { 0 };

    enumerate(&a);
    ck_assert_uint_eq(a.count, 0);
    ck_assert_status(D3DKMTOpenAdapterFromLuid(&open), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}

static RECORD_ESCAPE_DATA info_of(D3DKMT_HANDLE adapter)
{
    RECORD_ESCAPE_DATA e = { 0 };

    e.Code = RECORD_ESCAPE_INFO;
    ck_assert_status(rec_escape(adapter, 0, &e), STATUS_SUCCESS);
    return e;
}

/* ---- selection ------------------------------------------------------------------- */

START_TEST(select_soft)
{
    struct adapters a;

    rec_use("soft");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].Miniport, "soft");
    ck_assert_str_eq(a.desc[0].DriverName, "soft");
    ck_assert_str_eq(a.desc[0].LocationId, "soft0");
    ck_assert_uint_eq(record_log_count(), 0);       /* registered, not selected: never called */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(select_record)
{
    struct adapters a;

    rec_use("record");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].Miniport, "record");
    ck_assert_str_eq(a.desc[0].LocationId, "rec0");
    ck_assert_str_eq(a.desc[0].Description, "kmtshim recording miniport rec0");
    ck_assert_uint_eq(info_of(a.info[0].hAdapter).Info.IsPlugin, 0);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ENUM_PHYSICAL_DEVICES), 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_START_DEVICE), 1);
    rec_finish();
}
END_TEST

static void two_record_devices(const char *selection)
{
    struct record_config cfg;

    record_default_config(&cfg);
    cfg.devices = 2;
    rec_use_config(selection, &cfg);
}

START_TEST(select_soft_then_record)
{
    struct adapters a;

    two_record_devices("soft,record");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 3);
    ck_assert_str_eq(a.desc[0].Miniport, "soft");
    ck_assert_str_eq(a.desc[1].LocationId, "rec0");
    ck_assert_str_eq(a.desc[2].LocationId, "rec1");
    ck_assert_str_eq(a.desc[2].Miniport, "record");
    rec_finish();
}
END_TEST

START_TEST(select_record_then_soft)
{
    struct adapters a;

    two_record_devices("record,soft");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 3);
    ck_assert_str_eq(a.desc[0].LocationId, "rec0");
    ck_assert_str_eq(a.desc[1].LocationId, "rec1");
    ck_assert_str_eq(a.desc[2].Miniport, "soft");
    rec_finish();
}
END_TEST

START_TEST(select_with_empty_entries)
{
    struct adapters a;

    rec_use(",soft,,record,");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 2);
    ck_assert_str_eq(a.desc[0].Miniport, "soft");
    ck_assert_str_eq(a.desc[1].Miniport, "record");
    rec_finish();
}
END_TEST

START_TEST(default_selection_ends_with_soft)
{
    struct adapters a;

    ck_assert_status(KmtRegisterMiniport("record", RecordMiniportDriverEntry), STATUS_SUCCESS);
    unsetenv("KMTSHIM_MINIPORT");
    enumerate(&a);
    ck_assert_uint_ge(a.count, 1);
    ck_assert_str_eq(a.desc[a.count - 1].Miniport, "soft");
    for (ULONG i = 0; i < a.count; i++)
        ck_assert_str_ne(a.desc[i].Miniport, "record");   /* registered ones are opt-in */
    ck_assert_uint_eq(record_log_count(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(empty_selection_is_the_default)
{
    struct adapters a;

    rec_use("");
    enumerate(&a);
    ck_assert_uint_ge(a.count, 1);
    ck_assert_str_eq(a.desc[a.count - 1].Miniport, "soft");
    ck_assert_uint_eq(record_log_count(), 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- plugins ------------------------------------------------------------------------ */

START_TEST(plugin_by_path)
{
    struct adapters a;
    RECORD_ESCAPE_DATA e;
    D3DKMT_CREATEDEVICE cd = { 0 };
    D3DDDI_ALLOCATIONINFO info[2];
    unsigned char data[4] = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    UINT n, destroy = RECORD_NONE;

    rec_use(built("record_plugin.so"));
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].LocationId, "rec0");
    ck_assert_str_eq(a.desc[0].DriverName, "record");
    e = info_of(a.info[0].hAdapter);
    ck_assert_uint_eq(e.Info.IsPlugin, 1);
    ck_assert_uint_gt(e.Info.LogCount, 0);
    ck_assert_uint_eq(record_log_count(), 0);         /* the built-in copy never ran */

    cd.hAdapter = a.info[0].hAdapter;
    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    memset(info, 0, sizeof(info));
    for (unsigned i = 0; i < 2; i++) {
        info[i].pPrivateDriverData = data;
        info[i].PrivateDriverDataSize = sizeof(data);
    }
    ca.hDevice = cd.hDevice;
    ca.NumAllocations = 2;
    ca.pAllocationInfo = info;
    ca.Flags.CreateResource = 1;
    ck_assert_status(D3DKMTCreateAllocation(&ca), STATUS_SUCCESS);
    e = info_of(a.info[0].hAdapter);
    ck_assert_uint_eq(e.Info.Devices, 1);
    ck_assert_uint_eq(e.Info.Allocations, 2);
    ck_assert_uint_eq(e.Info.Resources, 1);
    ck_assert_uint_eq(e.Info.Bindings, 2);

    ck_assert_status(rec_destroy_resource(cd.hDevice, ca.hResource), STATUS_SUCCESS);
    e = info_of(a.info[0].hAdapter);
    n = e.Info.LogCount;
    ck_assert_uint_eq(e.Info.Allocations, 0);
    ck_assert_uint_eq(e.Info.Bindings, 0);
    ck_assert_uint_eq(e.Info.Violations, 0);
    /* the plugin's log, read through the escape */
    for (UINT i = 0; i < n; i++) {
        RECORD_ESCAPE_DATA entry = { 0 };

        entry.Code = RECORD_ESCAPE_ENTRY;
        entry.Index = i;
        ck_assert_status(rec_escape(a.info[0].hAdapter, 0, &entry), STATUS_SUCCESS);
        if (entry.Entry.Ddi == RECORD_DESTROY_ALLOCATION) {
            destroy = i;
            ck_assert_uint_eq(entry.Entry.Num, 2);
            ck_assert_uint_eq(entry.Entry.Flags, 1);
            ck_assert_uint_ne(entry.Entry.ResourceIn, 0);
            ck_assert_uint_ne(entry.Entry.Handles[0], 0);
            ck_assert_uint_ne(entry.Entry.Handles[1], 0);
        }
    }
    ck_assert_uint_ne(destroy, RECORD_NONE);
    e.Code = RECORD_ESCAPE_ENTRY;
    e.Index = n + 100;
    ck_assert_status(rec_escape(a.info[0].hAdapter, 0, &e), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* Loads the plugin configured (through its environment) with `devices`. */
static void enumerate_plugin_with(const char *devices, struct adapters *a)
{
    setenv("KMT_RECORD_DEVICES", devices, 1);
    rec_use(built("record_plugin.so"));
    enumerate(a);
}

START_TEST(plugin_reads_its_environment)
{
    struct adapters a;

    enumerate_plugin_with("3", &a);
    ck_assert_uint_eq(a.count, 3);
    ck_assert_str_eq(a.desc[2].LocationId, "rec2");
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* A plugin that loads but finds no device stays loaded, with its DDIs,
 * until the process ends: it is closed once, after its DxgkDdiUnload. */
START_TEST(plugin_without_devices_is_unloaded_once)
{
    struct adapters a;

    enumerate_plugin_with("0", &a);
    ck_assert_uint_eq(a.count, 0);
    kmt_test_shutdown_no_leaks();
    /* and the next start loads it afresh */
    enumerate_plugin_with("2", &a);
    ck_assert_uint_eq(a.count, 2);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(plugin_next_to_the_builtin)
{
    char selection[4200];
    struct adapters a;

    snprintf(selection, sizeof(selection), "record,%s,soft", built("record_plugin.so"));
    rec_use(selection);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 3);
    ck_assert_uint_eq(info_of(a.info[0].hAdapter).Info.IsPlugin, 0);
    ck_assert_uint_eq(info_of(a.info[1].hAdapter).Info.IsPlugin, 1);
    ck_assert_str_eq(a.desc[2].Miniport, "soft");
    /* same driver name, same location: the second gets a LUID of its own */
    ck_assert(!luid_eq(a.info[0].AdapterLuid, a.info[1].AdapterLuid));
    rec_finish();
}
END_TEST

START_TEST(bogus_name)
{
    rec_use("bogus");
    assert_no_adapters();
}
END_TEST

START_TEST(bogus_name_next_to_soft)
{
    struct adapters a;

    rec_use("bogus,soft,nonexistent");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].Miniport, "soft");
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(missing_file)
{
    rec_use("/nonexistent/dir/miniport.so");
    assert_no_adapters();
}
END_TEST

START_TEST(missing_library_name)
{
    rec_use("libkmtshim-no-such-miniport.so");
    assert_no_adapters();
}
END_TEST

START_TEST(plugin_without_entry_point)
{
    rec_use(built("record_noentry.so"));
    assert_no_adapters();
}
END_TEST

START_TEST(file_that_is_no_shared_object)
{
    const char *src = getenv("KMTSHIM_TEST_SRCDIR");
    char path[4096];

    snprintf(path, sizeof(path), "%s/tests/unit/test_loader.c", src ? src : ".");
    rec_use(path);
    assert_no_adapters();
}
END_TEST

/* ---- the DriverEntry handshake ------------------------------------------------------- */

static void rejected_with(void (*change)(struct record_config *cfg))
{
    struct record_config cfg;

    record_default_config(&cfg);
    change(&cfg);
    rec_use_config("record", &cfg);
    assert_no_adapters();
    ck_assert_uint_eq(record_log_count(), 0);     /* not a single DDI called */
}

static void major_2(struct record_config *cfg)
{
    cfg->interface_version = 0x00020000;
}

static void major_0(struct record_config *cfg)
{
    cfg->interface_version = 0x00000001;
}

static void newer_minor(struct record_config *cfg)
{
    cfg->interface_version = KMT_MINIPORT_INTERFACE_VERSION + 1;
}

static void size_too_big(struct record_config *cfg)
{
    cfg->init_size = sizeof(DRIVER_INITIALIZATION_DATA) + 8;
}

static void size_too_small(struct record_config *cfg)
{
    cfg->init_size = offsetof(DRIVER_INITIALIZATION_DATA, DxgkDdiEscape);
}

static void no_create_allocation(struct record_config *cfg)
{
    cfg->omit_create_allocation = true;
}

static void no_initialize(struct record_config *cfg)
{
    cfg->skip_initialize = true;
}

START_TEST(wrong_major_version_rejected)
{
    rejected_with(major_2);
}
END_TEST

START_TEST(major_zero_rejected)
{
    rejected_with(major_0);
}
END_TEST

START_TEST(newer_minor_version_rejected)
{
    rejected_with(newer_minor);
}
END_TEST

START_TEST(oversized_init_data_rejected)
{
    rejected_with(size_too_big);
}
END_TEST

START_TEST(truncated_init_data_rejected)
{
    rejected_with(size_too_small);
}
END_TEST

START_TEST(missing_required_ddi_rejected)
{
    rejected_with(no_create_allocation);
}
END_TEST

START_TEST(entry_without_initialize_rejected)
{
    rejected_with(no_initialize);
}
END_TEST

START_TEST(initialize_twice)
{
    struct record_config cfg;
    struct adapters a;

    record_default_config(&cfg);
    cfg.initialize_twice = true;
    rec_use_config("record", &cfg);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_int_eq(record_second_initialize_status(), STATUS_INVALID_PARAMETER);
    rec_finish();
}
END_TEST

START_TEST(bad_version_next_to_soft)
{
    struct record_config cfg;
    struct adapters a;

    record_default_config(&cfg);
    cfg.interface_version = 0x00020000;
    rec_use_config("record,soft", &cfg);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].Miniport, "soft");
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- adapter start-up failures ----------------------------------------------------------- */

START_TEST(add_device_failure_skips_that_device)
{
    struct adapters a;

    two_record_devices("record");
    record_fail_call(RECORD_ADD_DEVICE, 1, STATUS_UNSUCCESSFUL);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);
    ck_assert_str_eq(a.desc[0].LocationId, "rec1");
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 2);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_START_DEVICE), 1);
    rec_finish();
}
END_TEST

/* Out of memory is no answer about the device: the start is undone (the
 * miniport unloaded) and the next call starts the process afresh, with
 * every device. */
START_TEST(add_device_out_of_memory_fails_the_start_until_memory_returns)
{
    D3DKMT_ADAPTERINFO info[MAX_ADAPTERS];
    D3DKMT_ENUMADAPTERS2 e = { MAX_ADAPTERS, info };
    struct adapters a;

    two_record_devices("record");
    record_fail_call(RECORD_ADD_DEVICE, 2, STATUS_NO_MEMORY);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_NO_MEMORY);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 2);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_REMOVE_DEVICE), 1);   /* rec0, started first */
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOAD), 1);
    ck_assert_uint_eq(KmtLiveObjectCount(), 0);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 2);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 4);
    rec_finish();
}
END_TEST

START_TEST(start_device_failure_removes_the_device)
{
    rec_use("record");
    record_fail_call(RECORD_START_DEVICE, 1, STATUS_UNSUCCESSFUL);
    assert_no_adapters();
    ck_assert_uint_eq(record_log_count_ddi(RECORD_START_DEVICE), 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_STOP_DEVICE), 0);    /* never started */
    ck_assert_uint_eq(record_log_count_ddi(RECORD_REMOVE_DEVICE), 1);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_UNLOAD), 1);
    rec_assert_no_violations();
}
END_TEST

START_TEST(start_up_query_failure_stops_the_device)
{
    unsigned stop;

    rec_use("record");
    record_fail_call(RECORD_QUERY_ADAPTER_INFO, 2, STATUS_NOT_SUPPORTED);   /* the segments */
    assert_no_adapters();
    stop = record_log_find(RECORD_STOP_DEVICE, 0);
    ck_assert_uint_ne(stop, RECORD_NONE);
    ck_assert_uint_lt(stop, record_log_find(RECORD_REMOVE_DEVICE, 0));
    rec_assert_no_violations();
}
END_TEST

START_TEST(enum_failure_means_no_adapters)
{
    rec_use("record");
    record_fail_call(RECORD_ENUM_PHYSICAL_DEVICES, 1, STATUS_UNSUCCESSFUL);
    assert_no_adapters();
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 0);
    rec_assert_no_violations();
}
END_TEST

START_TEST(shutdown_stops_removes_unloads)
{
    unsigned stop, remove, unload;

    two_record_devices("record");
    kmt_test_open_adapter();
    KmtProcessShutdown();
    stop = record_log_find(RECORD_STOP_DEVICE, 0);
    remove = record_log_find(RECORD_REMOVE_DEVICE, 0);
    unload = record_log_find(RECORD_UNLOAD, 0);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_STOP_DEVICE), 2);
    ck_assert_uint_eq(record_log_count_ddi(RECORD_REMOVE_DEVICE), 2);
    ck_assert_uint_lt(stop, remove);
    ck_assert_uint_gt(unload, record_log_find_last(RECORD_REMOVE_DEVICE));
    ck_assert_uint_eq(record_log_count(), unload + 1);
    rec_finish();
}
END_TEST

/* ---- registration ---------------------------------------------------------------------- */

START_TEST(register_rejects_bad_arguments)
{
    char long_name[40];

    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = 0;
    ck_assert_status(KmtRegisterMiniport(NULL, RecordMiniportDriverEntry), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtRegisterMiniport("", RecordMiniportDriverEntry), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtRegisterMiniport(long_name, RecordMiniportDriverEntry), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtRegisterMiniport("record", NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtRegisterMiniport("record", RecordMiniportDriverEntry), STATUS_SUCCESS);
    ck_assert_status(KmtRegisterMiniport("record", RecordMiniportDriverEntry), STATUS_SUCCESS);
    kmt_test_use_miniport("record");
    kmt_test_open_adapter();
    ck_assert_uint_eq(record_log_count_ddi(RECORD_ADD_DEVICE), 1);     /* once, not twice */
    rec_finish();
}
END_TEST

START_TEST(register_takes_effect_at_the_next_start)
{
    struct adapters a;

    kmt_test_use_miniport("soft,record2");
    enumerate(&a);
    ck_assert_uint_eq(a.count, 1);                /* "record2" unknown yet */
    KmtProcessShutdown();
    ck_assert_status(KmtRegisterMiniport("record2", RecordMiniportDriverEntry), STATUS_SUCCESS);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 2);
    ck_assert_str_eq(a.desc[1].LocationId, "rec0");
    rec_finish();
}
END_TEST

/* ---- LUIDs ------------------------------------------------------------------------------ */

START_TEST(luid_stable_across_shutdowns)
{
    struct adapters first, again;

    two_record_devices("soft,record");
    enumerate(&first);
    ck_assert_uint_eq(first.count, 3);
    for (unsigned cycle = 0; cycle < 2; cycle++) {
        KmtProcessShutdown();
        enumerate(&again);
        ck_assert_uint_eq(again.count, 3);
        for (ULONG i = 0; i < 3; i++)
            ck_assert(luid_eq(first.info[i].AdapterLuid, again.info[i].AdapterLuid));
    }
    rec_finish();
}
END_TEST

START_TEST(luid_differs_per_location)
{
    struct record_config cfg;
    struct adapters a;

    record_default_config(&cfg);
    cfg.devices = 4;
    rec_use_config("soft,record", &cfg);
    enumerate(&a);
    ck_assert_uint_eq(a.count, 5);
    for (ULONG i = 0; i < a.count; i++)
        for (ULONG j = i + 1; j < a.count; j++)
            ck_assert(!luid_eq(a.info[i].AdapterLuid, a.info[j].AdapterLuid));
    /* and each opens the adapter it names */
    for (ULONG i = 0; i < a.count; i++) {
        D3DKMT_OPENADAPTERFROMLUID open = { a.info[i].AdapterLuid, 0 };
        KMT_ADAPTER_DESCRIPTION desc;

        ck_assert_status(D3DKMTOpenAdapterFromLuid(&open), STATUS_SUCCESS);
        ck_assert_status(KmtQueryAdapterDescription(open.hAdapter, &desc), STATUS_SUCCESS);
        ck_assert_str_eq(desc.LocationId, a.desc[i].LocationId);
    }
    rec_finish();
}
END_TEST

START_TEST(luid_independent_of_order_and_loading)
{
    char selection[4200];
    struct adapters a, b, c;

    rec_use("soft,record");
    enumerate(&a);
    KmtProcessShutdown();
    kmt_test_use_miniport("record,soft");
    enumerate(&b);
    KmtProcessShutdown();
    snprintf(selection, sizeof(selection), "%s", built("record_plugin.so"));
    kmt_test_use_miniport(selection);
    enumerate(&c);
    ck_assert(luid_eq(a.info[0].AdapterLuid, b.info[1].AdapterLuid));     /* soft */
    ck_assert(luid_eq(a.info[1].AdapterLuid, b.info[0].AdapterLuid));     /* record rec0 */
    ck_assert(luid_eq(a.info[1].AdapterLuid, c.info[0].AdapterLuid));     /* same as a plugin */
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(luid_stable_across_processes)
{
    struct adapters a;
    LUID child[2];
    int fds[2], status;
    pid_t pid;

    two_record_devices("record");
    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (!pid) {
        D3DKMT_ADAPTERINFO info[4];
        D3DKMT_ENUMADAPTERS2 e = { 4, info };
        ssize_t n;

        if (D3DKMTEnumAdapters2(&e) || e.NumAdapters != 2)
            _exit(1);
        child[0] = info[0].AdapterLuid;
        child[1] = info[1].AdapterLuid;
        n = write(fds[1], child, sizeof(child));
        _exit(n == (ssize_t)sizeof(child) ? 0 : 2);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], child, sizeof(child)), (int)sizeof(child));
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    enumerate(&a);
    ck_assert(luid_eq(a.info[0].AdapterLuid, child[0]));
    ck_assert(luid_eq(a.info[1].AdapterLuid, child[1]));
    rec_finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("loader");
    TCase *selection = tcase_create("selection");
    TCase *plugins = tcase_create("plugins");
    TCase *handshake = tcase_create("handshake");
    TCase *startup = tcase_create("startup");
    TCase *luid = tcase_create("luid");

    tcase_add_test(selection, select_soft);
    tcase_add_test(selection, select_record);
    tcase_add_test(selection, select_soft_then_record);
    tcase_add_test(selection, select_record_then_soft);
    tcase_add_test(selection, select_with_empty_entries);
    tcase_add_test(selection, default_selection_ends_with_soft);
    tcase_add_test(selection, empty_selection_is_the_default);
    tcase_add_test(selection, bogus_name);
    tcase_add_test(selection, bogus_name_next_to_soft);
    tcase_add_test(selection, register_rejects_bad_arguments);
    tcase_add_test(selection, register_takes_effect_at_the_next_start);
    suite_add_tcase(s, selection);

    tcase_add_test(plugins, plugin_by_path);
    tcase_add_test(plugins, plugin_reads_its_environment);
    tcase_add_test(plugins, plugin_without_devices_is_unloaded_once);
    tcase_add_test(plugins, plugin_next_to_the_builtin);
    tcase_add_test(plugins, missing_file);
    tcase_add_test(plugins, missing_library_name);
    tcase_add_test(plugins, plugin_without_entry_point);
    tcase_add_test(plugins, file_that_is_no_shared_object);
    suite_add_tcase(s, plugins);

    tcase_add_test(handshake, wrong_major_version_rejected);
    tcase_add_test(handshake, major_zero_rejected);
    tcase_add_test(handshake, newer_minor_version_rejected);
    tcase_add_test(handshake, oversized_init_data_rejected);
    tcase_add_test(handshake, truncated_init_data_rejected);
    tcase_add_test(handshake, missing_required_ddi_rejected);
    tcase_add_test(handshake, entry_without_initialize_rejected);
    tcase_add_test(handshake, initialize_twice);
    tcase_add_test(handshake, bad_version_next_to_soft);
    suite_add_tcase(s, handshake);

    tcase_add_test(startup, add_device_failure_skips_that_device);
    tcase_add_test(startup, add_device_out_of_memory_fails_the_start_until_memory_returns);
    tcase_add_test(startup, start_device_failure_removes_the_device);
    tcase_add_test(startup, start_up_query_failure_stops_the_device);
    tcase_add_test(startup, enum_failure_means_no_adapters);
    tcase_add_test(startup, shutdown_stops_removes_unloads);
    suite_add_tcase(s, startup);

    tcase_add_test(luid, luid_stable_across_shutdowns);
    tcase_add_test(luid, luid_differs_per_location);
    tcase_add_test(luid, luid_independent_of_order_and_loading);
    tcase_add_test(luid, luid_stable_across_processes);
    suite_add_tcase(s, luid);
    return kmt_test_run(s);
}
