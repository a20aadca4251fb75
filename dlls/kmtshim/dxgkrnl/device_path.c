/*
 * Device interface paths of display adapters, in Windows' format:
 *
 *   \\?\PCI#VEN_vvvv&DEV_dddd&SUBSYS_ssssssss&REV_rr#<instance>#{5b45201d-...}
 *
 * (GUID_DEVINTERFACE_DISPLAY_ADAPTER).  An adapter's path is made from its
 * PCI ids and its location (the instance); a caller's path is parsed back
 * into ids and instance, case-insensitively as Windows compares them.
 */
#include <stdio.h>
#include <string.h>

#include "device_path.h"

static const char display_adapter_guid[] = "{5b45201d-f2f2-4f3b-85bb-30ff1f953599}";

static WCHAR wupper(WCHAR c)
{
    return c >= 'a' && c <= 'z' ? (WCHAR)(c - 'a' + 'A') : c;
}

/* The instance: the location with every character Windows does not use in
 * an instance id ('#', '\', ':' ...) turned into '&'. */
static void instance_of(const char *location, char out[DXGK_INSTANCE_MAX])
{
    size_t n = 0;

    for (const char *p = location; *p && n + 1 < DXGK_INSTANCE_MAX; p++) {
        char c = *p;
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            c = '&';
        out[n++] = c;
    }
    if (!n)
        out[n++] = '0';
    out[n] = 0;
}

void dxgk_format_device_path(const D3DKMT_DEVICE_IDS *ids, const char *location,
                             WCHAR out[DXGK_DEVICE_PATH_MAX])
{
    char instance[DXGK_INSTANCE_MAX], text[DXGK_DEVICE_PATH_MAX];
    size_t i;

    instance_of(location, instance);
    snprintf(text, sizeof(text), "\\\\?\\PCI#VEN_%04X&DEV_%04X&SUBSYS_%04X%04X&REV_%02X#%s#%s",
             ids->VendorID & 0xffff, ids->DeviceID & 0xffff, ids->SubSystemID & 0xffff,
             ids->SubVendorID & 0xffff, ids->RevisionID & 0xff, instance, display_adapter_guid);
    for (i = 0; text[i]; i++)
        out[i] = (WCHAR)(unsigned char)text[i];
    out[i] = 0;
}

/* ---- parsing ------------------------------------------------------------------ */

/* Matches the ASCII `lit` at *p, case-insensitively; advances past it. */
static bool eat(const WCHAR **p, const char *lit)
{
    const WCHAR *s = *p;

    for (; *lit; lit++, s++)
        if (wupper(*s) != wupper((WCHAR)(unsigned char)*lit))
            return false;
    *p = s;
    return true;
}

/* Exactly `digits` hex digits. */
static bool eat_hex(const WCHAR **p, unsigned digits, UINT *value)
{
    UINT v = 0;

    for (unsigned i = 0; i < digits; i++) {
        WCHAR c = wupper((*p)[i]);
        if (c >= '0' && c <= '9')
            v = v << 4 | (UINT)(c - '0');
        else if (c >= 'A' && c <= 'F')
            v = v << 4 | (UINT)(c - 'A' + 10);
        else
            return false;
    }
    *p += digits;
    *value = v;
    return true;
}

static bool instance_char(WCHAR c)
{
    return c > 0x20 && c < 0x7f && c != '#' && c != '\\' && c != '/';
}

bool dxgk_parse_device_path(const WCHAR *path, struct dxgk_device_path *out)
{
    const WCHAR *p = path;
    UINT subsys = 0;
    size_t n = 0;

    memset(out, 0, sizeof(*out));
    if (!eat(&p, "\\\\?\\PCI#VEN_") || !eat_hex(&p, 4, &out->ids.VendorID) ||
        !eat(&p, "&DEV_") || !eat_hex(&p, 4, &out->ids.DeviceID))
        return false;
    if (eat(&p, "&SUBSYS_")) {
        if (!eat_hex(&p, 8, &subsys))
            return false;
        out->ids.SubSystemID = subsys >> 16;
        out->ids.SubVendorID = subsys & 0xffff;
    }
    if (eat(&p, "&REV_") && !eat_hex(&p, 2, &out->ids.RevisionID))
        return false;
    if (*p++ != '#')
        return false;
    while (instance_char(*p)) {
        if (n + 1 >= DXGK_INSTANCE_MAX)
            return false;
        out->instance[n++] = (char)wupper(*p++);
    }
    out->instance[n] = 0;
    if (!n || *p++ != '#')
        return false;
    return eat(&p, display_adapter_guid) && !*p;
}

bool dxgk_device_path_instance_is(const struct dxgk_device_path *path, const char *location)
{
    char instance[DXGK_INSTANCE_MAX];

    instance_of(location, instance);
    return !strcmp(instance, path->instance);
}

/* ---- GDI display names -------------------------------------------------------- */

bool dxgk_parse_display_name(const WCHAR *name, size_t chars, UINT *index)
{
    const WCHAR *p = name;
    UINT n = 0;
    size_t digits = 0;

    if (!eat(&p, "\\\\.\\DISPLAY"))
        return false;
    while ((size_t)(p - name) < chars && *p >= '0' && *p <= '9') {
        if (n > 9999 || (!digits && *p == '0'))    /* Windows' names: 1, 2, ..., no leading 0 */
            return false;
        n = n * 10 + (UINT)(*p++ - '0');
        digits++;
    }
    if (!digits || (size_t)(p - name) >= chars || *p)
        return false;
    *index = n - 1;
    return true;
}
