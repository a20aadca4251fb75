/*
 * The names a display-based open takes (device_path.c): display adapters'
 * device interface paths and GDI display names (\\.\DISPLAYn).
 */
#ifndef KMTSHIM_DXGK_DEVICE_PATH_H
#define KMTSHIM_DXGK_DEVICE_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "kmtshim/d3dkmthk.h"

#define DXGK_DEVICE_PATH_MAX 256           /* WCHARs, the NUL included */
#define DXGK_INSTANCE_MAX 96

struct dxgk_device_path {
    D3DKMT_DEVICE_IDS ids;                 /* SUBSYS and REV: 0 where the path has none */
    char instance[DXGK_INSTANCE_MAX];      /* upper case */
};

/* An adapter's path, from its ids and its location (KMT_PHYSICAL_DEVICE). */
void dxgk_format_device_path(const D3DKMT_DEVICE_IDS *ids, const char *location,
                             WCHAR out[DXGK_DEVICE_PATH_MAX]);
/* false: not a display adapter's PCI device interface path. */
bool dxgk_parse_device_path(const WCHAR *path, struct dxgk_device_path *out);
/* Whether the path's instance is the one made from `location`. */
bool dxgk_device_path_instance_is(const struct dxgk_device_path *path, const char *location);

/* \\.\DISPLAYn within the first `chars` WCHARs, NUL-terminated: n - 1. */
bool dxgk_parse_display_name(const WCHAR *name, size_t chars, UINT *index);

#endif
