/*
 * DRM miniport: DXGKQAITYPE_NODEPERFDATA, _ADAPTERPERFDATA and
 * _ADAPTERPERFDATA_CAPS from the files the kernel driver exposes in sysfs
 * (docs/drm.md has the table).  Paths and limits are found once at start;
 * the changing values (clocks, temperature, power, fan) are read per call.
 * A file that is not there gives 0, as Windows gives for a value the
 * driver does not report.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drm_winsys.h"

/* "<dir>/<name>" as an unsigned number; false when it is not there. */
static bool read_number(const char *dir, const char *name, ULONGLONG *value)
{
    char path[PATH_MAX + 64], buf[64], *end;
    ssize_t n;
    int fd;

    if (!*dir)
        return false;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    *value = strtoull(buf, &end, 10);
    return end != buf;
}

/* The first line of "<dir>/<name>", without its newline ("" if none). */
static void read_line(const char *dir, const char *name, char *out, size_t size)
{
    char path[PATH_MAX + 64];
    FILE *f;

    out[0] = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "re")))
        return;
    if (!fgets(out, (int)size, f))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    fclose(f);
}

static ULONGLONG number_or_zero(const char *dir, const char *name)
{
    ULONGLONG v = 0;

    return read_number(dir, name, &v) ? v : 0;
}

/* amdgpu's pp_dpm_sclk / pp_dpm_mclk: "0: 500Mhz\n1: 1800Mhz *\n"; the
 * top level, in Hz. */
static ULONGLONG dpm_top_hz(const char *dir, const char *name)
{
    char path[PATH_MAX + 64], line[128];
    ULONGLONG top = 0;
    unsigned level, mhz;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!*dir || !(f = fopen(path, "re")))
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%u: %uMhz", &level, &mhz) == 2 || sscanf(line, "%u: %uMHz", &level, &mhz) == 2)
            if (mhz * 1000000ull > top)
                top = mhz * 1000000ull;
    fclose(f);
    return top;
}

/* The first "<dir>/<prefix>N" entry that holds `file` (NULL: any). */
static bool find_entry(const char *dir, const char *prefix, const char *file, char *out, size_t size)
{
    char path[PATH_MAX + 300];
    struct dirent *e;
    struct stat st;
    bool found = false;
    DIR *d;

    if (!(d = opendir(dir)))
        return false;
    while (!found && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        snprintf(path, sizeof(path), "%s/%s/%s", dir, e->d_name, file ? file : "");
        if (stat(path, &st))
            continue;
        snprintf(out, size, "%s/%s", dir, e->d_name);
        found = true;
    }
    closedir(d);
    return found;
}

/* <sysfs>/dev/char/MAJ:MIN/device of the render node, resolved. */
static bool device_dir(const struct kdrm_adapter *a, char *out)
{
    char link[PATH_MAX + 64];
    struct stat st;

    if (stat(a->phys.render_node, &st) || !S_ISCHR(st.st_mode))
        return false;
    snprintf(link, sizeof(link), "%s/dev/char/%u:%u/device", kdrm_sysfs_root(), major(st.st_rdev),
             minor(st.st_rdev));
    return realpath(link, out) != NULL;
}

/* The GT clock's files, in MHz: i915's on the card (older kernels) or
 * per GT, xe's per tile and GT. */
static void gt_clock(const char *dev, struct kdrm_perf *p)
{
    static const struct { const char *dir, *cur, *max; } places[] = {
        { "", "gt_cur_freq_mhz", "gt_max_freq_mhz" },
        { "/gt/gt0", "rps_cur_freq_mhz", "rps_max_freq_mhz" },
    };
    char dir[PATH_MAX + 16], card[PATH_MAX];
    ULONGLONG max;

    snprintf(dir, sizeof(dir), "%s/drm", dev);
    for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
        char file[64];

        snprintf(file, sizeof(file), "%s%s%s", *places[i].dir ? places[i].dir + 1 : "",
                 *places[i].dir ? "/" : "", places[i].cur);
        if (!find_entry(dir, "card", file, card, sizeof(card)))
            continue;
        snprintf(p->gt, sizeof(p->gt), "%s%s", card, places[i].dir);
        p->gt_cur = places[i].cur;
        p->gt_max_mhz = read_number(p->gt, places[i].max, &max) ? max : 0;
        return;
    }
    snprintf(p->gt, sizeof(p->gt), "%s/tile0/gt0/freq0", dev);
    if (read_number(p->gt, "act_freq", &max)) {
        p->gt_cur = "act_freq";
        p->gt_max_mhz = number_or_zero(p->gt, "max_freq");
        return;
    }
    p->gt[0] = 0;
}

void kdrm_perf_probe(struct kdrm_adapter *a)
{
    struct kdrm_perf *p = &a->perf;
    char dev[PATH_MAX], dir[PATH_MAX + 16];

    memset(p, 0, sizeof(*p));
    if (!device_dir(a, dev))
        return;
    snprintf(dir, sizeof(dir), "%s/hwmon", dev);
    if (!find_entry(dir, "hwmon", NULL, p->hwmon, sizeof(p->hwmon)))
        p->hwmon[0] = 0;
    gt_clock(dev, p);

    read_line(dev, "vbios_version", p->vbios, sizeof(p->vbios));
    p->max_engine_hz = dpm_top_hz(dev, "pp_dpm_sclk");
    if (!p->max_engine_hz)
        p->max_engine_hz = p->gt_max_mhz * 1000000ull;
    p->max_memory_hz = dpm_top_hz(dev, "pp_dpm_mclk");
    p->power_cap_uw = number_or_zero(p->hwmon, "power1_cap");
    p->max_voltage_mv = (ULONG)number_or_zero(p->hwmon, "in0_max");
    p->max_fan_rpm = (ULONG)number_or_zero(p->hwmon, "fan1_max");
    p->temp_crit = (ULONG)(number_or_zero(p->hwmon, "temp1_crit") / 100);
    p->temp_emergency = (ULONG)(number_or_zero(p->hwmon, "temp1_emergency") / 100);
}

static NTSTATUS node_perf(struct kdrm_adapter *a, DXGK_NODE_PERFDATA *out)
{
    const struct kdrm_perf *p = &a->perf;
    ULONGLONG v;

    memset(out, 0, sizeof(*out));
    if (read_number(p->hwmon, "freq1_input", &v))        /* amdgpu sclk, Hz */
        out->Frequency = v;
    else
        out->Frequency = p->gt_cur ? number_or_zero(p->gt, p->gt_cur) * 1000000ull : 0;
    out->MaxFrequency = p->max_engine_hz;
    out->Voltage = (ULONG)number_or_zero(p->hwmon, "in0_input");    /* mV */
    out->VoltageMax = p->max_voltage_mv;
    return STATUS_SUCCESS;
}

static NTSTATUS adapter_perf(struct kdrm_adapter *a, DXGK_ADAPTER_PERFDATA *out)
{
    const struct kdrm_perf *p = &a->perf;
    ULONGLONG power;

    memset(out, 0, sizeof(*out));
    out->MemoryFrequency = number_or_zero(p->hwmon, "freq2_input");  /* amdgpu mclk, Hz */
    out->MaxMemoryFrequency = p->max_memory_hz;
    out->FanRPM = (ULONG)number_or_zero(p->hwmon, "fan1_input");
    out->Temperature = (ULONG)(number_or_zero(p->hwmon, "temp1_input") / 100);
    /* microwatts against the cap, in tenths of a percent */
    if (!read_number(p->hwmon, "power1_average", &power))
        power = number_or_zero(p->hwmon, "power1_input");
    if (p->power_cap_uw)
        out->Power = (ULONG)(power * 1000 / p->power_cap_uw);
    out->PowerStateOverride = 0;
    return STATUS_SUCCESS;
}

static NTSTATUS adapter_perf_caps(struct kdrm_adapter *a, DXGK_ADAPTER_PERFDATACAPS *out)
{
    const struct kdrm_perf *p = &a->perf;

    memset(out, 0, sizeof(*out));
    out->MaxFanRPM = p->max_fan_rpm;
    /* the shutdown limit where the driver has one, else the critical one;
     * throttling starts at the critical one */
    out->TemperatureMax = p->temp_emergency ? p->temp_emergency : p->temp_crit;
    out->TemperatureWarning = p->temp_crit;
    return STATUS_SUCCESS;
}

NTSTATUS kdrm_perf_query(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    const KMT_PERFDATA_IN *in = q->pInputData;

    if (q->InputDataSize != sizeof(*in) || !in || in->NodeOrdinal || in->PhysicalAdapterIndex)
        return STATUS_INVALID_PARAMETER;
    switch (q->Type) {
    case DXGKQAITYPE_NODEPERFDATA:
        if (q->OutputDataSize != sizeof(DXGK_NODE_PERFDATA))
            return STATUS_INVALID_PARAMETER;
        return node_perf(a, q->pOutputData);
    case DXGKQAITYPE_ADAPTERPERFDATA:
        if (q->OutputDataSize != sizeof(DXGK_ADAPTER_PERFDATA))
            return STATUS_INVALID_PARAMETER;
        return adapter_perf(a, q->pOutputData);
    case DXGKQAITYPE_ADAPTERPERFDATA_CAPS:
        if (q->OutputDataSize != sizeof(DXGK_ADAPTER_PERFDATACAPS))
            return STATUS_INVALID_PARAMETER;
        return adapter_perf_caps(a, q->pOutputData);
    default:
        return STATUS_NOT_SUPPORTED;
    }
}
