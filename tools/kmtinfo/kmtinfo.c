/*
 * kmtinfo: what kmtshim's dxgkrnl sees — adapters, their miniport, driver
 * version, type, PCI ids and memory — in the spirit of `vulkaninfo --summary`
 * and `drm_info`.  Everything shown comes through the D3DKMT calls a Windows
 * program would make.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmtshim.h"

struct adapter_report {
    D3DKMT_ADAPTERINFO info;
    KMT_ADAPTER_DESCRIPTION desc;
    NTSTATUS version_status, type_status, ids_status, addr_status, seg_status;
    D3DKMT_DRIVERVERSION version;
    D3DKMT_ADAPTERTYPE type;
    D3DKMT_QUERY_DEVICE_IDS ids;
    D3DKMT_ADAPTERADDRESS addr;
    D3DKMT_SEGMENTSIZEINFO segments;
    D3DKMT_QUERYVIDEOMEMORYINFO budget[2];
    NTSTATUS budget_status[2];
    char umd[NUM_KMTUMDVERSIONS][MAX_PATH];
    char opengl[MAX_PATH];
    char device_name[KMT_DEVICE_PATH_MAX];   /* OpenAdapterFromDeviceName's path */
    ULONG first_display;                     /* its sources are \\.\DISPLAYn from here */
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: kmtinfo [OPTION]...\n"
            "List the adapters kmtshim exposes through D3DKMTEnumAdapters2, with the\n"
            "miniport behind each, driver version, adapter type, PCI ids and memory,\n"
            "and the names the display-based opens take (display names, device name).\n"
            "\n"
            "  -j, --json      print JSON instead of text\n"
            "  -h, --help      show this help and exit\n"
            "  -V, --version   show the kmtshim version and exit\n"
            "\n"
            "Environment:\n"
            "  KMTSHIM_MINIPORT   miniports to load: soft, drm, a list (drm,soft) or a\n"
            "                     plugin path; default: every GPU miniport, then soft\n"
            "  WINEDEBUG, KMTSHIM_DEBUG\n"
            "                     tracing channels, e.g. +d3dkmt,+dxgk or +kmtshim\n");
}

static NTSTATUS query(D3DKMT_HANDLE adapter, KMTQUERYADAPTERINFOTYPE type, void *data, UINT size)
{
    D3DKMT_QUERYADAPTERINFO q = { adapter, type, data, size };
    return D3DKMTQueryAdapterInfo(&q);
}

static void wide_to_utf8(char *dst, const WCHAR *src, size_t max)
{
    size_t i = 0;

    /* Paths from miniports are ASCII; anything else is shown as '?'. */
    for (; i + 1 < max && src[i]; i++)
        dst[i] = src[i] < 0x80 ? (char)src[i] : '?';
    dst[i] = 0;
}

static void collect(struct adapter_report *r)
{
    D3DKMT_HANDLE h = r->info.hAdapter;

    WCHAR path[KMT_DEVICE_PATH_MAX];

    if (KmtQueryAdapterDescription(h, &r->desc))
        strcpy(r->desc.Description, "(unknown)");
    r->device_name[0] = 0;
    if (!KmtQueryAdapterDeviceName(h, path, KMT_DEVICE_PATH_MAX))
        wide_to_utf8(r->device_name, path, sizeof(r->device_name));
    r->version_status = query(h, KMTQAITYPE_DRIVERVERSION, &r->version, sizeof(r->version));
    r->type_status = query(h, KMTQAITYPE_ADAPTERTYPE, &r->type, sizeof(r->type));
    r->ids.PhysicalAdapterIndex = 0;
    r->ids_status = query(h, KMTQAITYPE_PHYSICALADAPTERDEVICEIDS, &r->ids, sizeof(r->ids));
    r->addr_status = query(h, KMTQAITYPE_ADAPTERADDRESS, &r->addr, sizeof(r->addr));
    r->seg_status = query(h, KMTQAITYPE_GETSEGMENTSIZE, &r->segments, sizeof(r->segments));
    for (int g = 0; g < 2; g++) {
        r->budget[g].hAdapter = h;
        r->budget[g].MemorySegmentGroup = (D3DKMT_MEMORY_SEGMENT_GROUP)g;
        r->budget_status[g] = D3DKMTQueryVideoMemoryInfo(&r->budget[g]);
    }
    for (int v = 0; v < NUM_KMTUMDVERSIONS; v++) {
        D3DKMT_UMDFILENAMEINFO umd = { .Version = (KMTUMDVERSION)v };
        r->umd[v][0] = 0;
        if (!query(h, KMTQAITYPE_UMDRIVERNAME, &umd, sizeof(umd)))
            wide_to_utf8(r->umd[v], umd.UmdFileName, sizeof(r->umd[v]));
    }
    {
        D3DKMT_OPENGLINFO gl;
        memset(&gl, 0, sizeof(gl));
        r->opengl[0] = 0;
        if (!query(h, KMTQAITYPE_UMOPENGLINFO, &gl, sizeof(gl)))
            wide_to_utf8(r->opengl, gl.UmdOpenGlIcdFileName, sizeof(r->opengl));
    }
}

static const char *human(UINT64 bytes, char *buf, size_t size)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    int u = 0;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

static void type_string(const D3DKMT_ADAPTERTYPE *t, char *buf, size_t size)
{
    static const struct { UINT bit; const char *name; } bits[] = {
        { 1u << 0, "render" }, { 1u << 1, "display" }, { 1u << 2, "software" },
        { 1u << 3, "post" }, { 1u << 4, "hybrid-discrete" }, { 1u << 5, "hybrid-integrated" },
        { 1u << 6, "indirect-display" }, { 1u << 7, "paravirtualized" },
        { 1u << 11, "compute-only" },
    };
    buf[0] = 0;
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
        if (!(t->Value & bits[i].bit))
            continue;
        if (buf[0])
            strncat(buf, ", ", size - strlen(buf) - 1);
        strncat(buf, bits[i].name, size - strlen(buf) - 1);
    }
    if (!buf[0])
        snprintf(buf, size, "none");
}

static void print_text(const struct adapter_report *r, ULONG count)
{
    char a[32], b[32], c[32];

    printf("kmtshim %s: %lu adapter%s\n", KmtGetVersion(), (unsigned long)count, count == 1 ? "" : "s");
    for (ULONG i = 0; i < count; i++, r++) {
        char types[160];

        printf("\nAdapter %lu: %s\n", (unsigned long)i, r->desc.Description);
        printf("    LUID ............. %08x:%08x\n", (unsigned)r->info.AdapterLuid.HighPart,
               (unsigned)r->info.AdapterLuid.LowPart);
        printf("    miniport ......... %s (driver %s, at %s)\n", r->desc.Miniport, r->desc.DriverName,
               r->desc.LocationId);
        if (!r->version_status)
            printf("    driver version ... WDDM %u.%u\n", (unsigned)r->version / 1000,
                   ((unsigned)r->version % 1000) / 100);
        if (!r->type_status) {
            type_string(&r->type, types, sizeof(types));
            printf("    type ............. %s\n", types);
        }
        if (!r->ids_status)
            printf("    PCI ids .......... VEN_%04X DEV_%04X SUBSYS_%04X%04X REV_%02X\n",
                   r->ids.DeviceIds.VendorID, r->ids.DeviceIds.DeviceID,
                   r->ids.DeviceIds.SubSystemID, r->ids.DeviceIds.SubVendorID,
                   r->ids.DeviceIds.RevisionID);
        if (!r->addr_status)
            printf("    bus address ...... %02x:%02x.%x\n", r->addr.BusNumber, r->addr.DeviceNumber,
                   r->addr.FunctionNumber);
        printf("    video outputs .... %lu\n", (unsigned long)r->info.NumOfSources);
        if (r->info.NumOfSources)
            printf("    display names .... \\\\.\\DISPLAY%lu to \\\\.\\DISPLAY%lu\n", (unsigned long)r->first_display,
                   (unsigned long)(r->first_display + r->info.NumOfSources - 1));
        printf("    device name ...... %s\n", r->device_name);
        if (!r->seg_status)
            printf("    segments ......... dedicated video %s, dedicated system %s, shared system %s\n",
                   human(r->segments.DedicatedVideoMemorySize, a, sizeof(a)),
                   human(r->segments.DedicatedSystemMemorySize, b, sizeof(b)),
                   human(r->segments.SharedSystemMemorySize, c, sizeof(c)));
        for (int g = 0; g < 2; g++)
            if (!r->budget_status[g])
                printf("    budget %-9s . %s, in use %s, reservable %s\n", g ? "non-local" : "local",
                       human(r->budget[g].Budget, a, sizeof(a)),
                       human(r->budget[g].CurrentUsage, b, sizeof(b)),
                       human(r->budget[g].AvailableForReservation, c, sizeof(c)));
        printf("    user-mode driver . %s\n", r->umd[KMTUMDVERSION_DX12][0] ? r->umd[KMTUMDVERSION_DX12]
                                          : r->umd[KMTUMDVERSION_DX11][0] ? r->umd[KMTUMDVERSION_DX11]
                                          : "none");
        printf("    OpenGL ICD ....... %s\n", r->opengl[0] ? r->opengl : "none");
    }
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_json(const struct adapter_report *r, ULONG count)
{
    printf("{\n  \"version\": ");
    json_string(KmtGetVersion());
    printf(",\n  \"adapters\": [");
    for (ULONG i = 0; i < count; i++, r++) {
        printf("%s\n    {\n      \"luid\": \"%08x:%08x\",\n", i ? "," : "",
               (unsigned)r->info.AdapterLuid.HighPart, (unsigned)r->info.AdapterLuid.LowPart);
        printf("      \"description\": ");
        json_string(r->desc.Description);
        printf(",\n      \"miniport\": ");
        json_string(r->desc.Miniport);
        printf(",\n      \"driver\": ");
        json_string(r->desc.DriverName);
        printf(",\n      \"location\": ");
        json_string(r->desc.LocationId);
        printf(",\n      \"wddm_version\": %d", r->version_status ? 0 : (int)r->version);
        printf(",\n      \"adapter_type\": %u", r->type_status ? 0 : r->type.Value);
        printf(",\n      \"software\": %s", !r->type_status && r->type.SoftwareDevice ? "true" : "false");
        printf(",\n      \"vendor_id\": %u, \"device_id\": %u, \"subsystem_id\": %u, \"subvendor_id\": %u, \"revision\": %u",
               r->ids.DeviceIds.VendorID, r->ids.DeviceIds.DeviceID, r->ids.DeviceIds.SubSystemID,
               r->ids.DeviceIds.SubVendorID, r->ids.DeviceIds.RevisionID);
        printf(",\n      \"video_outputs\": %lu", (unsigned long)r->info.NumOfSources);
        printf(",\n      \"first_display\": %lu", r->info.NumOfSources ? (unsigned long)r->first_display : 0ul);
        printf(",\n      \"device_name\": ");
        json_string(r->device_name);
        printf(",\n      \"segments\": { \"dedicated_video\": %llu, \"dedicated_system\": %llu, \"shared_system\": %llu }",
               (unsigned long long)r->segments.DedicatedVideoMemorySize,
               (unsigned long long)r->segments.DedicatedSystemMemorySize,
               (unsigned long long)r->segments.SharedSystemMemorySize);
        for (int g = 0; g < 2; g++)
            printf(",\n      \"budget_%s\": { \"budget\": %llu, \"usage\": %llu, \"reservable\": %llu }",
                   g ? "non_local" : "local", (unsigned long long)r->budget[g].Budget,
                   (unsigned long long)r->budget[g].CurrentUsage,
                   (unsigned long long)r->budget[g].AvailableForReservation);
        printf(",\n      \"umd\": ");
        json_string(r->umd[KMTUMDVERSION_DX12][0] ? r->umd[KMTUMDVERSION_DX12] : r->umd[KMTUMDVERSION_DX11]);
        printf(",\n      \"opengl_icd\": ");
        json_string(r->opengl);
        printf("\n    }");
    }
    printf("%s]\n}\n", count ? "\n  " : "");
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { 0 },
    };
    D3DKMT_ADAPTERINFO infos[64];
    D3DKMT_ENUMADAPTERS2 e = { 64, infos };
    struct adapter_report *reports;
    int json = 0, opt;
    NTSTATUS status;

    while ((opt = getopt_long(argc, argv, "jhV", options, NULL)) != -1) {
        switch (opt) {
        case 'j': json = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("kmtinfo (kmtshim) %s\n", KmtGetVersion()); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kmtinfo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    status = D3DKMTEnumAdapters2(&e);
    if (status) {
        fprintf(stderr, "kmtinfo: D3DKMTEnumAdapters2 failed: 0x%08x\n", (unsigned)status);
        return 1;
    }
    reports = calloc(e.NumAdapters ? e.NumAdapters : 1, sizeof(*reports));
    if (!reports) {
        fprintf(stderr, "kmtinfo: out of memory\n");
        return 1;
    }
    for (ULONG i = 0, display = 1; i < e.NumAdapters; i++) {
        reports[i].info = infos[i];
        reports[i].first_display = display;
        display += infos[i].NumOfSources;
        collect(&reports[i]);
    }
    if (json)
        print_json(reports, e.NumAdapters);
    else
        print_text(reports, e.NumAdapters);
    for (ULONG i = 0; i < e.NumAdapters; i++) {
        D3DKMT_CLOSEADAPTER c = { infos[i].hAdapter };
        D3DKMTCloseAdapter(&c);
    }
    free(reports);
    KmtProcessShutdown();
    if (!e.NumAdapters) {
        fprintf(stderr, "kmtinfo: no adapter found (KMTSHIM_MINIPORT=%s)\n",
                getenv("KMTSHIM_MINIPORT") ? getenv("KMTSHIM_MINIPORT") : "(default)");
        return 1;
    }
    return 0;
}
