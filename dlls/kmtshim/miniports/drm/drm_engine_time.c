/*
 * DRM miniport: how long the GPU ran this process's work on a node
 * (QueryStatistics' RunningTime, DXGKQAITYPE_KMT_NODERUNNINGTIME), from the
 * driver's fdinfo: "drm-engine-<engine>: <n> ns" (drm-usage-stats.rst).
 * Node 0, the 3D node, is the driver's render engine: "gfx" on amdgpu,
 * "render" on i915; on a driver kmtshim knows no name for, the sum of the
 * engines it lists.  xe counts GPU cycles (drm-cycles-*), not time, and
 * virtio_gpu and vgem print no engine: no running time there.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "drm_winsys.h"
#include "drm_bo.h"

bool kdrm_fdinfo_engine_parse(FILE *f, const char *engine, UINT64 *ns)
{
    static const char prefix[] = "drm-engine-";
    char line[160], name[32];
    unsigned long long v;
    bool found = false;

    *ns = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, prefix, sizeof(prefix) - 1) ||
            sscanf(line + sizeof(prefix) - 1, "%31[^:]: %llu ns", name, &v) != 2)
            continue;
        if (engine && strcmp(name, engine))
            continue;
        *ns += v;
        found = true;
    }
    return found;
}

static const char *render_engine(const char *driver)
{
    if (!strcmp(driver, "amdgpu"))
        return "gfx";
    if (!strcmp(driver, "i915"))
        return "render";
    return NULL;
}

NTSTATUS kdrm_node_running_time(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q)
{
    char path[64];
    bool found;
    FILE *f;

    if (q->InputDataSize != sizeof(UINT) || q->OutputDataSize != sizeof(UINT64) ||
        *(const UINT *)q->pInputData != 0)
        return STATUS_INVALID_PARAMETER;
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", a->fd);
    if (!(f = fopen(path, "re")))
        return STATUS_NOT_SUPPORTED;
    found = kdrm_fdinfo_engine_parse(f, render_engine(a->phys.driver), q->pOutputData);
    fclose(f);
    return found ? STATUS_SUCCESS : STATUS_NOT_SUPPORTED;
}
