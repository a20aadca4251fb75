/*
 * DRM miniport: memory sizes and the QueryVideoMemoryInfo budget.
 *
 * Sizes and free memory come from the kernel where the driver reports them
 * (amdgpu heap info, i915/xe memory-region queries); for UMA devices
 * without such a query (virtio_gpu, vgem) the local segment is half of RAM
 * (Windows' share for integrated GPUs) and "free" is MemAvailable, as it is
 * for i915's system memory (its region query reports no free size there).
 * What this process uses comes from the driver's fdinfo (drm-total-* /
 * drm-memory-* keys) where it prints them, else from our own accounting.
 * Budget = min(segment size, used by us + free now).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "drm_winsys.h"
#include "drm_bo.h"

UINT64 kdrm_system_share(void)
{
    struct sysinfo si;

    if (sysinfo(&si))
        return 256ull << 20;
    return (UINT64)si.totalram * si.mem_unit / 2;
}

UINT64 kdrm_system_free(void)
{
    char line[128];
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/meminfo", "re");

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    fclose(f);
    return (UINT64)kib << 10;
}

static UINT64 scaled(unsigned long long v, const char *unit)
{
    if (!strncmp(unit, "KiB", 3))
        return (UINT64)v << 10;
    if (!strncmp(unit, "MiB", 3))
        return (UINT64)v << 20;
    if (!strncmp(unit, "GiB", 3))
        return (UINT64)v << 30;
    return v;
}

static bool region_is_local(const char *region)
{
    return !strncmp(region, "vram", 4) || !strncmp(region, "local", 5);
}

/* One "<prefix><region>:\t<n>[ <unit>]" memory line.  drm-total-cycles-<engine>
 * (xe since Linux 6.11, drm-usage-stats.rst) shares the drm-total- prefix
 * but is an engine's GPU clock, not a region's bytes. */
static bool parse_fdinfo_line(const char *line, const char *prefix, bool *local, UINT64 *bytes)
{
    char region[32], unit[8] = "";
    unsigned long long v;
    size_t n = strlen(prefix);

    if (strncmp(line, prefix, n) || !strncmp(line + n, "cycles-", 7))
        return false;
    if (sscanf(line + n, "%31[^:]: %llu %7s", region, &v, unit) < 2)
        return false;
    *local = region_is_local(region);
    *bytes = scaled(v, unit);
    return true;
}

bool kdrm_fdinfo_parse(FILE *f, UINT64 *local, UINT64 *nonlocal)
{
    /* [0] drm-total-<region>, [1] drm-memory-<region>: amdgpu's own keys,
     * the only ones before Linux 6.9 and kept beside the common ones since */
    static const char *const prefixes[2] = { "drm-total-", "drm-memory-" };
    UINT64 sum[2][2] = { { 0 } };
    bool found[2] = { false, false };
    char line[160];

    while (fgets(line, sizeof(line), f))
        for (size_t p = 0; p < 2; p++) {
            bool is_local;
            UINT64 bytes;

            if (parse_fdinfo_line(line, prefixes[p], &is_local, &bytes)) {
                sum[p][is_local] += bytes;
                found[p] = true;
            }
        }
    for (size_t p = 0; p < 2; p++)
        if (found[p]) {
            *local = sum[p][1];
            *nonlocal = sum[p][0];
            return true;
        }
    return false;
}

bool kdrm_fdinfo_usage(int fd, UINT64 *local, UINT64 *nonlocal)
{
    char path[64];
    bool found;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    if (!(f = fopen(path, "re")))
        return false;
    found = kdrm_fdinfo_parse(f, local, nonlocal);
    fclose(f);
    return found;
}

/* The UMA answer: a share of system memory, free is what Linux has free. */
static void system_memory(struct kdrm_memory *m)
{
    memset(m, 0, sizeof(*m));
    m->local_size = kdrm_system_share();
    m->local_free = kdrm_system_free();
}

static void current_memory(struct kdrm_adapter *a, struct kdrm_memory *m)
{
    if (!a->family->memory || a->family->memory(a, m) < 0 || !m->local_size)
        system_memory(m);
}

void kdrm_memory_probe(struct kdrm_adapter *a)
{
    current_memory(a, &a->memory);
}

static void process_usage(struct kdrm_adapter *a, UINT64 *local, UINT64 *nonlocal)
{
    if (kdrm_fdinfo_usage(a->fd, local, nonlocal)) {
        if (!a->memory.discrete) {       /* UMA: every byte is "local" */
            *local += *nonlocal;
            *nonlocal = 0;
        }
        return;
    }
    *local = atomic_load(&a->bytes);
    *nonlocal = 0;
}

NTSTATUS kdrm_memory_budget(struct kdrm_adapter *a, UINT group, KMT_MEMORY_BUDGET *out)
{
    struct kdrm_memory m;
    UINT64 used[2], size, free_now, budget;

    if (group > 1)
        return STATUS_INVALID_PARAMETER;
    current_memory(a, &m);
    process_usage(a, &used[0], &used[1]);
    size = group ? m.nonlocal_size : m.local_size;
    free_now = group ? m.nonlocal_free : m.local_free;
    budget = used[group] + free_now;
    if (budget > size)
        budget = size;
    out->Budget = budget;
    out->AvailableForReservation = budget / 2;
    return STATUS_SUCCESS;
}
