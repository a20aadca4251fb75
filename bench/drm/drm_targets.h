/*
 * The adapters the DRM benchmarks run on: every adapter of the DRM
 * miniport that the benchmark can compare against raw libdrm calls, with a
 * device opened on it.
 */
#ifndef KMTSHIM_BENCH_DRM_TARGETS_H
#define KMTSHIM_BENCH_DRM_TARGETS_H

#include <stdbool.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtdrm.h"

struct drm_target {
    D3DKMT_HANDLE adapter, device;
    KMT_DRM_UMD_PRIVATE umd;             /* DRM fd, family, caps */
    char location[64];                   /* KMT_ADAPTER_DESCRIPTION.LocationId */
};

/* Fills out[0..max) with the DRM miniport's adapters that `usable` accepts
 * (it says why it refuses one) and opens a device on each; returns how many.
 * Exits on a failure of the calls themselves. */
unsigned drm_open_targets(struct drm_target *out, unsigned max, bool (*usable)(const KMT_DRM_UMD_PRIVATE *umd));

#endif
