/*
 * The DRM miniport started outside the core, the way the benchmark's DDI
 * column does it: KmtDrmMiniportDriverEntry hands its
 * DRIVER_INITIALIZATION_DATA to a DxgkInitialize of the test's own, and
 * the test adds and starts devices itself.  For programs that check the
 * miniport's DDIs on real kernel drivers across processes, where the core's
 * sharing calls are not what is being tested.
 */
#ifndef KMTSHIM_DDI_DIRECT_H
#define KMTSHIM_DDI_DIRECT_H

#include "kmtshim/d3dkmddi.h"

/* The miniport's DDIs (after ddi_direct_devices). */
extern DRIVER_INITIALIZATION_DATA ddi_direct;

/* The physical devices the miniport finds; their count. */
UINT ddi_direct_devices(KMT_PHYSICAL_DEVICE *out);
/* Adds and starts the device at `location`: its adapter, or NULL. */
PVOID ddi_direct_start(const char *location);
void ddi_direct_stop(PVOID adapter);

#endif
