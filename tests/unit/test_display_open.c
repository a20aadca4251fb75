/*
 * The display-based opens natively: OpenAdapterFromGdiDisplayName (the
 * sources of EnumAdapters2's adapters, in its order, are \\.\DISPLAY1...),
 * OpenAdapterFromDeviceName (device interface paths, KmtQueryAdapterDeviceName,
 * KmtOpenAdapterFromDevicePath's flags) and OpenAdapterFromHdc (no GDI: every
 * HDC is invalid).  Adapters: two recording ones with 2 sources each
 * ("rec0", "rec1", ids ABCD:1234) and the software one with 1 source.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "test_util.h"
#include "contract_util.h"

#define GARBAGE_PTR ((void *)0xdeadbeefdeadbeefull)
#define GUID_DISPLAY u"{5b45201d-f2f2-4f3b-85bb-30ff1f953599}"
#define REC0_PATH u"\\\\?\\PCI#VEN_ABCD&DEV_1234&SUBSYS_0001ABCD&REV_07#REC0#" GUID_DISPLAY

static D3DKMT_ADAPTERINFO adapters[3];

static void setup(void)
{
    struct record_config cfg;
    D3DKMT_ENUMADAPTERS2 e = { 3, adapters };

    setenv("KMTSHIM_SOFT_SOURCES", "1", 1);
    record_default_config(&cfg);
    cfg.devices = 2;
    cfg.desc.NumOfSources = 2;
    rec_use_config("record,soft", &cfg);
    ck_assert_status(D3DKMTEnumAdapters2(&e), STATUS_SUCCESS);
    ck_assert_uint_eq(e.NumAdapters, 3);
    ck_assert_uint_eq(adapters[0].NumOfSources, 2);
    ck_assert_uint_eq(adapters[2].NumOfSources, 1);
}

static void teardown(void)
{
    kmt_test_shutdown_no_leaks();
}

static bool luid_eq(LUID a, LUID b)
{
    return a.LowPart == b.LowPart && a.HighPart == b.HighPart;
}

static void wset(WCHAR *dst, const char *src, size_t max)
{
    size_t i = 0;

    for (; src[i] && i + 1 < max; i++)
        dst[i] = (WCHAR)(unsigned char)src[i];
    dst[i] = 0;
}

static void close_adapter(D3DKMT_HANDLE h)
{
    D3DKMT_CLOSEADAPTER c = { h };

    ck_assert_status(D3DKMTCloseAdapter(&c), STATUS_SUCCESS);
}

/* A device can be made on the adapter handle, which is then closed. */
static void assert_usable_then_close(D3DKMT_HANDLE h)
{
    D3DKMT_CREATEDEVICE cd = { .hAdapter = h };
    D3DKMT_DESTROYDEVICE dd = { 0 };

    ck_assert_status(D3DKMTCreateDevice(&cd), STATUS_SUCCESS);
    dd.hDevice = cd.hDevice;
    ck_assert_status(D3DKMTDestroyDevice(&dd), STATUS_SUCCESS);
    close_adapter(h);
}

/* A fresh handle, then closed: the value the next open gets, minus 0x40. */
static D3DKMT_HANDLE probe_handle(void)
{
    D3DKMT_OPENADAPTERFROMLUID o = { adapters[0].AdapterLuid, 0 };

    ck_assert_status(D3DKMTOpenAdapterFromLuid(&o), STATUS_SUCCESS);
    close_adapter(o.hAdapter);
    return o.hAdapter;
}

static NTSTATUS open_display(const char *name, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME *o)
{
    memset(o, 0, sizeof(*o));
    wset(o->DeviceName, name, 32);
    return D3DKMTOpenAdapterFromGdiDisplayName(o);
}

/* ---- display names ------------------------------------------------------------------ */

static const struct { const char *name; unsigned adapter, source; } displays[] = {
    { "\\\\.\\DISPLAY1", 0, 0 }, { "\\\\.\\DISPLAY2", 0, 1 }, { "\\\\.\\DISPLAY3", 1, 0 },
    { "\\\\.\\DISPLAY4", 1, 1 }, { "\\\\.\\DISPLAY5", 2, 0 },
    { "\\\\.\\display3", 1, 0 }, { "\\\\.\\DiSpLaY5", 2, 0 },
};

/* Each name: a new handle of its adapter (EnumAdapters2's LUID), its source, usable. */
START_TEST(display_name_opens_its_source)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;
    unsigned want = displays[_i].adapter;

    ck_assert_status(open_display(displays[_i].name, &o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hAdapter);
    for (unsigned i = 0; i < 3; i++)
        ck_assert_uint_ne(o.hAdapter, adapters[i].hAdapter);
    ck_assert_msg(luid_eq(o.AdapterLuid, adapters[want].AdapterLuid), "%s: another adapter's LUID",
                  displays[_i].name);
    ck_assert_uint_eq(o.VidPnSourceId, displays[_i].source);
    assert_usable_then_close(o.hAdapter);
}
END_TEST

static const char *const bad_names[] = {
    "", "\\\\.\\DISPLAY0", "\\\\.\\DISPLAY6", "\\\\.\\DISPLAY99", "\\\\.\\DISPLAY4294967297",
    "DISPLAY1", "\\\\.\\DISPLAY", "\\\\.\\DISPLAY01", "\\\\.\\DISPLAY1 ", "\\\\.\\DISPLAY1\\Monitor0",
    "\\\\?\\DISPLAY1", "\\\\.\\DISPLAYV1", "\\\\.\\PhysicalDrive0",
};

/* Refused with STATUS_INVALID_PARAMETER, nothing written, no handle used. */
START_TEST(bad_display_name_is_refused)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;
    D3DKMT_HANDLE before = probe_handle();

    memset(&o, 0, sizeof(o));
    wset(o.DeviceName, bad_names[_i], 32);
    o.hAdapter = 0x1234;
    o.VidPnSourceId = 77;
    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(&o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hAdapter, 0x1234);
    ck_assert_uint_eq(o.VidPnSourceId, 77);
    ck_assert_uint_eq(probe_handle(), before + 0x40);
}
END_TEST

START_TEST(bad_display_descriptor_is_refused)
{
    D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME o;

    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    memset(&o, 0, sizeof(o));
    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(&o), STATUS_INVALID_PARAMETER);
    /* 32 WCHARs and no NUL: "\\.\DISPLAY1" followed by digits to the end */
    wset(o.DeviceName, "\\\\.\\DISPLAY1", 32);
    for (unsigned i = 12; i < 32; i++)
        o.DeviceName[i] = '0';
    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(&o), STATUS_INVALID_PARAMETER);
    /* the same, cut one short: a name, and one no adapter has */
    o.DeviceName[31] = 0;
    ck_assert_status(D3DKMTOpenAdapterFromGdiDisplayName(&o), STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- device interface paths -------------------------------------------------------------- */

START_TEST(adapter_path_has_windows_format)
{
    WCHAR path[KMT_DEVICE_PATH_MAX], want[KMT_DEVICE_PATH_MAX];
    static const WCHAR rec0[] = REC0_PATH;

    ck_assert_status(KmtQueryAdapterDeviceName(adapters[0].hAdapter, path, KMT_DEVICE_PATH_MAX),
                     STATUS_SUCCESS);
    ck_assert_msg(!memcmp(path, rec0, sizeof(rec0)), "rec0's path");
    ck_assert_status(KmtQueryAdapterDeviceName(adapters[2].hAdapter, path, KMT_DEVICE_PATH_MAX),
                     STATUS_SUCCESS);
    wset(want, "\\\\?\\PCI#VEN_1414&DEV_008C&SUBSYS_00000000&REV_00#SOFT0#"
               "{5b45201d-f2f2-4f3b-85bb-30ff1f953599}", KMT_DEVICE_PATH_MAX);
    ck_assert_msg(!memcmp(path, want, sizeof(rec0) + sizeof(WCHAR)), "soft0's path");
    /* the exact size, one less, no buffer, no adapter */
    ck_assert_status(KmtQueryAdapterDeviceName(adapters[0].hAdapter, path,
                                               sizeof(rec0) / sizeof(WCHAR)), STATUS_SUCCESS);
    ck_assert_status(KmtQueryAdapterDeviceName(adapters[0].hAdapter, path,
                                               sizeof(rec0) / sizeof(WCHAR) - 1), STATUS_BUFFER_TOO_SMALL);
    ck_assert_status(KmtQueryAdapterDeviceName(adapters[0].hAdapter, NULL, 10), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtQueryAdapterDeviceName(0, path, KMT_DEVICE_PATH_MAX), STATUS_INVALID_PARAMETER);
}
END_TEST

static NTSTATUS open_path(const char *text, D3DKMT_OPENADAPTERFROMDEVICENAME *o)
{
    static WCHAR path[600];

    wset(path, text, 600);
    memset(o, 0, sizeof(*o));
    o->pDeviceName = path;
    return D3DKMTOpenAdapterFromDeviceName(o);
}

/* Every adapter's own path opens it. */
START_TEST(own_path_opens_adapter)
{
    WCHAR path[KMT_DEVICE_PATH_MAX];
    D3DKMT_OPENADAPTERFROMDEVICENAME o = { path, 0, { 0, 0 } };

    ck_assert_status(KmtQueryAdapterDeviceName(adapters[_i].hAdapter, path, KMT_DEVICE_PATH_MAX),
                     STATUS_SUCCESS);
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(&o), STATUS_SUCCESS);
    ck_assert_local_handle(o.hAdapter);
    ck_assert_msg(luid_eq(o.AdapterLuid, adapters[_i].AdapterLuid), "adapter %d: another LUID", _i);
    assert_usable_then_close(o.hAdapter);
}
END_TEST

static const struct { const char *path; unsigned adapter; } good_paths[] = {
    /* case-insensitive; the instance picks among adapters with the same ids */
    { "\\\\?\\pci#ven_abcd&dev_1234&subsys_0001abcd&rev_07#rec1#{5B45201D-F2F2-4F3B-85BB-30FF1F953599}", 1 },
    /* without SUBSYS/REV */
    { "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC1#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}", 1 },
    /* an unknown instance: the first with the ids */
    { "\\\\?\\PCI#VEN_ABCD&DEV_1234&SUBSYS_00000000&REV_00#4&1A2B3C&0&0010#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}", 0 },
    { "\\\\?\\PCI#VEN_1414&DEV_008C#X#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}", 2 },
};

START_TEST(path_maps_by_ids_then_instance)
{
    D3DKMT_OPENADAPTERFROMDEVICENAME o;

    ck_assert_status(open_path(good_paths[_i].path, &o), STATUS_SUCCESS);
    ck_assert_msg(luid_eq(o.AdapterLuid, adapters[good_paths[_i].adapter].AdapterLuid),
                  "%s: not adapter %u", good_paths[_i].path, good_paths[_i].adapter);
    close_adapter(o.hAdapter);
}
END_TEST

static const char *const bad_paths[] = {
    "",
    "garbage",
    "\\\\.\\DISPLAY1",
    /* well-formed, ids no adapter has */
    "\\\\?\\PCI#VEN_10DE&DEV_1B80#4&1A2B3C&0&0010#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    /* another interface class: GUID_DEVINTERFACE_MONITOR, GUID_DISPLAY_DEVICE_ARRIVAL */
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC0#{e6f07b5f-ee97-4a90-b076-33f57bf4eaa7}",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC0#{1ca05180-a699-450a-9a0c-de4fbe3ddd89}",
    /* malformed */
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}x",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f95359}",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#REC0",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234##{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\?\\PCI#VEN_ABC&DEV_1234#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\?\\PCI#VEN_ABCD&DEV_12G4#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234&SUBSYS_1#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\?\\PCI#DEV_1234&VEN_ABCD#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\?\\USB#VEN_ABCD&DEV_1234#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "\\\\.\\PCI#VEN_ABCD&DEV_1234#REC0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
    "PCI\\VEN_ABCD&DEV_1234&SUBSYS_0001ABCD&REV_07",
    "\\\\?\\PCI#VEN_ABCD&DEV_1234#RE C0#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}",
};

START_TEST(bad_path_is_refused)
{
    D3DKMT_OPENADAPTERFROMDEVICENAME o;
    D3DKMT_HANDLE before = probe_handle();

    ck_assert_status(open_path(bad_paths[_i], &o), STATUS_INVALID_PARAMETER);
    ck_assert_uint_eq(o.hAdapter, 0);
    ck_assert_uint_eq(probe_handle(), before + 0x40);
}
END_TEST

START_TEST(bad_path_pointer_is_refused)
{
    D3DKMT_OPENADAPTERFROMDEVICENAME o = { 0 };
    static WCHAR longpath[1024];
    long page = sysconf(_SC_PAGESIZE);
    char *map;
    WCHAR *tail;

    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(&o), STATUS_INVALID_PARAMETER);
    o.pDeviceName = GARBAGE_PTR;
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(&o), STATUS_INVALID_PARAMETER);
    /* longer than any path: rec0's, padded out in its instance */
    wset(longpath, "\\\\?\\PCI#VEN_ABCD&DEV_1234#", 1024);
    for (unsigned i = 26; i < 1000; i++)
        longpath[i] = 'A';
    wset(longpath + 1000, "#{5b45201d-f2f2-4f3b-85bb-30ff1f953599}", 24);
    o.pDeviceName = longpath;
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(&o), STATUS_INVALID_PARAMETER);
    /* no NUL before an unmapped page */
    map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(map, MAP_FAILED);
    ck_assert_int_eq(munmap(map + page, (size_t)page), 0);
    tail = (WCHAR *)(map + page) - 8;
    for (unsigned i = 0; i < 8; i++)
        tail[i] = 'A';
    o.pDeviceName = tail;
    ck_assert_status(D3DKMTOpenAdapterFromDeviceName(&o), STATUS_INVALID_PARAMETER);
    munmap(map, (size_t)page);
}
END_TEST

/* KmtOpenAdapterFromDevicePath's flags, which the Wine half uses. */
START_TEST(device_path_flags)
{
    static const WCHAR unknown[] = u"\\\\?\\PCI#VEN_10DE&DEV_1B80#0#" GUID_DISPLAY;
    static const WCHAR rec0[] = REC0_PATH;
    static const WCHAR other[] = u"\\\\?\\PCI#VEN_10DE&DEV_1B80#0#{e6f07b5f-ee97-4a90-b076-33f57bf4eaa7}";
    D3DKMT_HANDLE h = 0, before;
    LUID luid;

    ck_assert_status(KmtOpenAdapterFromDevicePath(unknown, 0, 0, &h, &luid), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtOpenAdapterFromDevicePath(unknown, KMT_DEVICE_PATH_DEFAULT_ADAPTER, 0, &h, &luid),
                     STATUS_SUCCESS);
    ck_assert(luid_eq(luid, adapters[0].AdapterLuid));
    close_adapter(h);
    /* the default applies to well-formed display adapter paths only */
    ck_assert_status(KmtOpenAdapterFromDevicePath(other, KMT_DEVICE_PATH_DEFAULT_ADAPTER, 0, &h, &luid),
                     STATUS_INVALID_PARAMETER);
    /* sources: rec0 has 2 */
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, KMT_DEVICE_PATH_NEED_SOURCE, 1, &h, &luid),
                     STATUS_SUCCESS);
    close_adapter(h);
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, KMT_DEVICE_PATH_NEED_SOURCE, 2, &h, &luid),
                     STATUS_INVALID_PARAMETER);
    /* the LUID alone: no handle used */
    before = probe_handle();
    memset(&luid, 0, sizeof(luid));
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, KMT_DEVICE_PATH_NO_HANDLE, 0, NULL, &luid),
                     STATUS_SUCCESS);
    ck_assert(luid_eq(luid, adapters[0].AdapterLuid));
    ck_assert_uint_eq(probe_handle(), before + 0x40);
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, 0x8, 0, &h, &luid), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, 0, 0, NULL, &luid), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtOpenAdapterFromDevicePath(rec0, 0, 0, &h, NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(KmtOpenAdapterFromDevicePath(NULL, 0, 0, &h, &luid), STATUS_INVALID_PARAMETER);
}
END_TEST

/* ---- HDCs ------------------------------------------------------------------------------------ */

START_TEST(hdc_is_always_invalid)
{
    static const uintptr_t hdcs[] = { 0, 1, 0x10020, 0x2a01004b, (uintptr_t)0xdeadbeefdeadbeefull };
    D3DKMT_OPENADAPTERFROMHDC o;

    ck_assert_status(D3DKMTOpenAdapterFromHdc(NULL), STATUS_INVALID_PARAMETER);
    ck_assert_status(D3DKMTOpenAdapterFromHdc(GARBAGE_PTR), STATUS_INVALID_PARAMETER);
    for (unsigned i = 0; i < sizeof(hdcs) / sizeof(hdcs[0]); i++) {
        memset(&o, 0, sizeof(o));
        o.hDc = (HDC)hdcs[i];
        ck_assert_status(D3DKMTOpenAdapterFromHdc(&o), STATUS_INVALID_PARAMETER);
        ck_assert_uint_eq(o.hAdapter, 0);
    }
}
END_TEST

static Suite *display_open_suite(void)
{
    Suite *s = suite_create("display_open");
    TCase *names = tcase_create("display names");
    TCase *paths = tcase_create("device names");
    TCase *hdc = tcase_create("hdc");

    tcase_add_checked_fixture(names, setup, teardown);
    tcase_add_loop_test(names, display_name_opens_its_source, 0, (int)(sizeof(displays) / sizeof(displays[0])));
    tcase_add_loop_test(names, bad_display_name_is_refused, 0, (int)(sizeof(bad_names) / sizeof(bad_names[0])));
    tcase_add_test(names, bad_display_descriptor_is_refused);
    suite_add_tcase(s, names);

    tcase_add_checked_fixture(paths, setup, teardown);
    tcase_add_test(paths, adapter_path_has_windows_format);
    tcase_add_loop_test(paths, own_path_opens_adapter, 0, 3);
    tcase_add_loop_test(paths, path_maps_by_ids_then_instance, 0, (int)(sizeof(good_paths) / sizeof(good_paths[0])));
    tcase_add_loop_test(paths, bad_path_is_refused, 0, (int)(sizeof(bad_paths) / sizeof(bad_paths[0])));
    tcase_add_test(paths, bad_path_pointer_is_refused);
    tcase_add_test(paths, device_path_flags);
    suite_add_tcase(s, paths);

    tcase_add_checked_fixture(hdc, setup, teardown);
    tcase_add_test(hdc, hdc_is_always_invalid);
    suite_add_tcase(s, hdc);
    return s;
}

int main(void)
{
    return kmt_test_run(display_open_suite());
}
