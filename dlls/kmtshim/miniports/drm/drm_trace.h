/*
 * DRM miniport: the trace line and the NTSTATUS of an errno, used by every
 * file of the miniport.
 */
#ifndef KMTSHIM_DRM_TRACE_H
#define KMTSHIM_DRM_TRACE_H

#include "kmtshim/d3dkmddi.h"

struct kdrm_adapter;

/* drm_trace.c */
void kdrm_trace(struct kdrm_adapter *a, KMT_TRACE_LEVEL level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* drm_errno.c */
NTSTATUS kdrm_status_from_errno(int err);

#endif /* KMTSHIM_DRM_TRACE_H */
