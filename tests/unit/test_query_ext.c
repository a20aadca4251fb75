/*
 * QueryAdapterInfo's later types on the software adapter: the registry
 * strings (and their override from the configuration file), WDDM 2.9 and
 * 3.0 caps, DRIVERCAPS_EXT and the performance data.  Their sizes, NULL
 * data and bad adapters are in test_query.c's table of fixed types.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "test_util.h"

static NTSTATUS query(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };

    return D3DKMTQueryAdapterInfo(&q);
}

static bool wide_is(const WCHAR *w, const char *s)
{
    size_t i = 0;

    for (; s[i]; i++)
        if (w[i] != (WCHAR)(unsigned char)s[i])
            return false;
    return w[i] == 0;
}

/* The number of engines, as NODEMETADATA tells it: the first ordinal it
 * refuses. */
static UINT node_count(D3DKMT_HANDLE adapter)
{
    D3DKMT_NODEMETADATA meta;
    UINT n = 0;

    for (;; n++) {
        memset(&meta, 0, sizeof(meta));
        meta.NodeOrdinalAndAdapterIndex = n;
        if (query(adapter, KMTQAITYPE_NODEMETADATA, &meta, sizeof(meta)))
            return n;
    }
}

static UINT physical_count(D3DKMT_HANDLE adapter)
{
    UINT n = 0;

    ck_assert_status(query(adapter, KMTQAITYPE_PHYSICALADAPTERCOUNT, &n, sizeof(n)), STATUS_SUCCESS);
    return n;
}

/* ---- ADAPTERREGISTRYINFO ---------------------------------------------------------- */

START_TEST(registry_info_of_the_software_adapter)
{
    D3DKMT_ADAPTERREGISTRYINFO info, render;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&info, 0xcc, sizeof(info));
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERREGISTRYINFO, &info, sizeof(info)), STATUS_SUCCESS);
    ck_assert(wide_is(info.AdapterString, "kmtshim Basic Render Driver (software)"));
    ck_assert(wide_is(info.BiosString, ""));        /* no video BIOS */
    ck_assert(wide_is(info.DacType, ""));           /* nothing drives a connector */
    ck_assert(wide_is(info.ChipType, "kmtshim software renderer"));
    ck_assert_uint_eq(info.ChipType[MAX_PATH - 1], 0);   /* the rest is zeroed */
    memset(&render, 0xcc, sizeof(render));
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERREGISTRYINFO_RENDER, &render, sizeof(render)),
                     STATUS_SUCCESS);
    ck_assert_mem_eq(&render, &info, sizeof(info));
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(registry_info_from_the_configuration_file)
{
    char dir[] = "/tmp/kmt-qai.XXXXXX", path[64];
    D3DKMT_ADAPTERREGISTRYINFO info;
    D3DKMT_HANDLE adapter;
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/kmtshim.conf", dir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("[adapter miniport=soft]\n"
          "registry.HardwareInformation.AdapterString = My GPU\n"
          "registry.hardwareinformation.dactype = Integrated RAMDAC\n"
          "registry.HardwareInformation.BiosString:dword = 7\n"      /* not a string: ignored */
          "[adapter miniport=drm]\n"
          "registry.HardwareInformation.ChipType = not this adapter\n", f);
    ck_assert_int_eq(fclose(f), 0);
    setenv("KMTSHIM_CONFIG", path, 1);
    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERREGISTRYINFO, &info, sizeof(info)), STATUS_SUCCESS);
    ck_assert(wide_is(info.AdapterString, "My GPU"));
    ck_assert(wide_is(info.DacType, "Integrated RAMDAC"));
    ck_assert(wide_is(info.BiosString, ""));
    ck_assert(wide_is(info.ChipType, "kmtshim software renderer"));
    kmt_test_shutdown_no_leaks();
    setenv("KMTSHIM_CONFIG", "", 1);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* ---- caps ----------------------------------------------------------------------------- */

START_TEST(wddm_2_9_caps_agree_with_2_7)
{
    D3DKMT_WDDM_2_7_CAPS c27;
    D3DKMT_WDDM_2_9_CAPS c29;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    c27.Value = c29.Value = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_WDDM_2_7_CAPS, &c27, sizeof(c27)), STATUS_SUCCESS);
    ck_assert_status(query(adapter, KMTQAITYPE_WDDM_2_9_CAPS, &c29, sizeof(c29)), STATUS_SUCCESS);
    /* kmtshim schedules in software: no hardware scheduling, in both */
    ck_assert_uint_eq(c27.HwSchSupported, 0);
    ck_assert_uint_eq(c29.HwSchSupportState, DXGK_FEATURE_SUPPORT_ALWAYS_OFF);
    ck_assert_uint_eq(c29.HwSchEnabled, c27.HwSchEnabled);
    ck_assert_uint_eq(c29.SelfRefreshMemorySupported, 0);
    ck_assert_uint_eq(c29.Value, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(wddm_3_0_caps_and_drivercaps_ext_are_clear)
{
    D3DKMT_WDDM_3_0_CAPS c30;
    D3DKMT_DRIVERCAPS_EXT ext;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    c30.Value = ext.Value = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_WDDM_3_0_CAPS, &c30, sizeof(c30)), STATUS_SUCCESS);
    ck_assert_uint_eq(c30.HwFlipQueueSupportState, DXGK_FEATURE_SUPPORT_ALWAYS_OFF);
    ck_assert_uint_eq(c30.Value, 0);
    ck_assert_status(query(adapter, KMTQAITYPE_DRIVERCAPS_EXT, &ext, sizeof(ext)), STATUS_SUCCESS);
    ck_assert_uint_eq(ext.Value, 0);
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* ---- performance data ------------------------------------------------------------------- */

START_TEST(node_perfdata_for_every_node_and_no_other)
{
    D3DKMT_NODE_PERFDATA p, before;
    D3DKMT_HANDLE adapter;
    UINT nodes;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    nodes = node_count(adapter);
    ck_assert_uint_ge(nodes, 1);
    for (UINT n = 0; n < nodes; n++) {
        memset(&p, 0xcc, sizeof(p));
        p.NodeOrdinal = n;
        p.PhysicalAdapterIndex = 0;
        ck_assert_status(query(adapter, KMTQAITYPE_NODEPERFDATA, &p, sizeof(p)), STATUS_SUCCESS);
        ck_assert_uint_eq(p.NodeOrdinal, n);       /* the input stays */
        ck_assert_uint_eq(p.PhysicalAdapterIndex, 0);
        /* no clocks or sensors of its own: zeros, Reserved included */
        ck_assert(p.Frequency == 0 && p.MaxFrequency == 0 && p.MaxFrequencyOC == 0);
        ck_assert(p.Voltage == 0 && p.VoltageMax == 0 && p.VoltageMaxOC == 0);
        ck_assert(p.MaxTransitionLatency == 0 && p.Reserved == 0);
    }
    /* a node past the count, a physical adapter past the count: nothing written */
    memset(&p, 0xcc, sizeof(p));
    p.NodeOrdinal = nodes;
    p.PhysicalAdapterIndex = 0;
    before = p;
    ck_assert_status(query(adapter, KMTQAITYPE_NODEPERFDATA, &p, sizeof(p)), STATUS_INVALID_PARAMETER);
    ck_assert_mem_eq(&p, &before, sizeof(p));
    p.NodeOrdinal = 0;
    p.PhysicalAdapterIndex = physical_count(adapter);
    before = p;
    ck_assert_status(query(adapter, KMTQAITYPE_NODEPERFDATA, &p, sizeof(p)), STATUS_INVALID_PARAMETER);
    ck_assert_mem_eq(&p, &before, sizeof(p));
    p.NodeOrdinal = 0xffffffff;
    p.PhysicalAdapterIndex = 0xffffffff;
    ck_assert_status(query(adapter, KMTQAITYPE_NODEPERFDATA, &p, sizeof(p)), STATUS_INVALID_PARAMETER);
    kmt_test_shutdown_no_leaks();
}
END_TEST

START_TEST(adapter_perfdata_and_caps)
{
    D3DKMT_ADAPTER_PERFDATA p, before;
    D3DKMT_ADAPTER_PERFDATACAPS c, cbefore;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    memset(&p, 0xcc, sizeof(p));
    p.PhysicalAdapterIndex = 0;
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERPERFDATA, &p, sizeof(p)), STATUS_SUCCESS);
    ck_assert_uint_eq(p.PhysicalAdapterIndex, 0);
    ck_assert(p.MemoryFrequency == 0 && p.MaxMemoryFrequency == 0 && p.MaxMemoryFrequencyOC == 0);
    ck_assert(p.MemoryBandwidth == 0 && p.PCIEBandwidth == 0);
    ck_assert(p.FanRPM == 0 && p.Power == 0 && p.Temperature == 0 && p.PowerStateOverride == 0);
    memset(&c, 0xcc, sizeof(c));
    c.PhysicalAdapterIndex = 0;
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERPERFDATA_CAPS, &c, sizeof(c)), STATUS_SUCCESS);
    ck_assert(c.MaxMemoryBandwidth == 0 && c.MaxPCIEBandwidth == 0);
    ck_assert(c.MaxFanRPM == 0 && c.TemperatureMax == 0 && c.TemperatureWarning == 0);

    p.PhysicalAdapterIndex = physical_count(adapter);
    before = p;
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERPERFDATA, &p, sizeof(p)), STATUS_INVALID_PARAMETER);
    ck_assert_mem_eq(&p, &before, sizeof(p));
    c.PhysicalAdapterIndex = 0x80000000;
    cbefore = c;
    ck_assert_status(query(adapter, KMTQAITYPE_ADAPTERPERFDATA_CAPS, &c, sizeof(c)), STATUS_INVALID_PARAMETER);
    ck_assert_mem_eq(&c, &cbefore, sizeof(c));
    kmt_test_shutdown_no_leaks();
}
END_TEST

/* From many threads at once, as a monitoring tool polls. */
static void *poll_perf(void *arg)
{
    D3DKMT_HANDLE adapter = (D3DKMT_HANDLE)(uintptr_t)arg;

    for (int i = 0; i < 200; i++) {
        D3DKMT_NODE_PERFDATA n = { 0 };
        D3DKMT_ADAPTER_PERFDATA a = { 0 };
        D3DKMT_ADAPTERREGISTRYINFO r;

        if (query(adapter, KMTQAITYPE_NODEPERFDATA, &n, sizeof(n)) ||
            query(adapter, KMTQAITYPE_ADAPTERPERFDATA, &a, sizeof(a)) ||
            query(adapter, KMTQAITYPE_ADAPTERREGISTRYINFO, &r, sizeof(r)))
            return (void *)1;
    }
    return NULL;
}

START_TEST(perf_queries_from_threads)
{
    pthread_t t[4];
    void *ret;
    D3DKMT_HANDLE adapter;

    kmt_test_use_miniport("soft");
    adapter = kmt_test_open_adapter();
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, poll_perf, (void *)(uintptr_t)adapter), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(t[i], &ret), 0);
        ck_assert_ptr_null(ret);
    }
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("query_ext");
    TCase *tc = tcase_create("qai_ext");

    tcase_add_test(tc, registry_info_of_the_software_adapter);
    tcase_add_test(tc, registry_info_from_the_configuration_file);
    tcase_add_test(tc, wddm_2_9_caps_agree_with_2_7);
    tcase_add_test(tc, wddm_3_0_caps_and_drivercaps_ext_are_clear);
    tcase_add_test(tc, node_perfdata_for_every_node_and_no_other);
    tcase_add_test(tc, adapter_perfdata_and_caps);
    tcase_add_test(tc, perf_queries_from_threads);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
