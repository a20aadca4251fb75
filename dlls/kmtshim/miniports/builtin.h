/*
 * The miniports linked into libkmtshim.  They use the same entry point as a
 * plugin loaded from a path (see d3dkmddi.h).
 */
#ifndef KMTSHIM_MINIPORTS_BUILTIN_H
#define KMTSHIM_MINIPORTS_BUILTIN_H

#include "kmtshim/d3dkmddi.h"

NTSTATUS APIENTRY KmtSoftMiniportDriverEntry(KMT_DRIVER_OBJECT *driver,
                                             const KMT_DXGKRNL_EXPORTS *dxgkrnl);
#ifdef KMT_HAVE_DRM_MINIPORT
NTSTATUS APIENTRY KmtDrmMiniportDriverEntry(KMT_DRIVER_OBJECT *driver,
                                            const KMT_DXGKRNL_EXPORTS *dxgkrnl);
#endif

#endif
