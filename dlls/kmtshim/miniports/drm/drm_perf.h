/*
 * DRM miniport: performance data from sysfs (drm_perf.c).
 */
#ifndef KMTSHIM_DRM_PERF_H
#define KMTSHIM_DRM_PERF_H

#include <limits.h>
#include <stdbool.h>

#include "kmtshim/d3dkmddi.h"

/* Where the device's values are, and what does not change, found once
 * when the adapter starts; "" where the driver has no such directory. */
struct kdrm_perf {
    char hwmon[PATH_MAX];                /* <device>/hwmon/hwmonN (amdgpu, i915/xe dGPUs) */
    char gt[PATH_MAX + 32];              /* where the GT clock is (i915, xe), MHz */
    const char *gt_cur;                  /* its file for the current clock */
    ULONGLONG gt_max_mhz;                /* the highest clock the driver allows */
    ULONGLONG max_engine_hz;             /* pp_dpm_sclk's top level, or gt_max_freq_mhz */
    ULONGLONG max_memory_hz;             /* pp_dpm_mclk's top level */
    ULONGLONG power_cap_uw;              /* power1_cap */
    ULONG max_voltage_mv;                /* in0_max */
    ULONG max_fan_rpm;                   /* fan1_max */
    ULONG temp_crit;                     /* temp1_crit, tenths of a degree */
    ULONG temp_emergency;                /* temp1_emergency, tenths of a degree */
    char vbios[64];                      /* <device>/vbios_version (amdgpu) */
};

struct kdrm_adapter;

void kdrm_perf_probe(struct kdrm_adapter *a);
NTSTATUS kdrm_perf_query(struct kdrm_adapter *a, const DXGKARG_QUERYADAPTERINFO *q);

#endif /* KMTSHIM_DRM_PERF_H */
