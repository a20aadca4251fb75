/*
 * The name in a caller's OBJECT_ATTRIBUTES, as UTF-8 for the broker
 * (share.h: dxgk_nt_name).  The layouts are Windows' (x86_64: OBJECT_ATTRIBUTES
 * of 0x30 bytes, ObjectName at 0x10; UNICODE_STRING of 0x10 bytes), read
 * through the export layer's pointer checks so garbage never faults.
 */
#include <stddef.h>
#include <string.h>

#include "share.h"
#include "thunks/thunk.h"

struct nt_unicode_string {
    USHORT Length;                       /* bytes, without a terminator */
    USHORT MaximumLength;
    const WCHAR *Buffer;
};

struct nt_object_attributes {
    ULONG Length;
    HANDLE RootDirectory;
    const struct nt_unicode_string *ObjectName;
    ULONG Attributes;
    void *SecurityDescriptor;
    void *SecurityQualityOfService;
};

/* Appends one code point as UTF-8; false if it does not fit. */
static bool put_utf8(char *out, size_t size, size_t *pos, unsigned c)
{
    unsigned char b[4];
    size_t n;

    if (c < 0x80) {
        b[0] = c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = 0xc0 | (c >> 6);
        b[1] = 0x80 | (c & 0x3f);
        n = 2;
    } else if (c < 0x10000) {
        b[0] = 0xe0 | (c >> 12);
        b[1] = 0x80 | ((c >> 6) & 0x3f);
        b[2] = 0x80 | (c & 0x3f);
        n = 3;
    } else {
        b[0] = 0xf0 | (c >> 18);
        b[1] = 0x80 | ((c >> 12) & 0x3f);
        b[2] = 0x80 | ((c >> 6) & 0x3f);
        b[3] = 0x80 | (c & 0x3f);
        n = 4;
    }
    if (*pos + n >= size)                /* room for the NUL too */
        return false;
    memcpy(out + *pos, b, n);
    *pos += n;
    return true;
}

NTSTATUS dxgk_nt_name(const void *object_attributes, char *name, size_t size, const char **out)
{
    const struct nt_object_attributes *oa = object_attributes;
    struct nt_unicode_string us;
    size_t pos = 0, count;

    *out = NULL;
    if (!oa)
        return STATUS_SUCCESS;
    if (!kmt_user_ptr_ok(oa, sizeof(*oa)) || oa->Length != sizeof(*oa))
        return STATUS_INVALID_PARAMETER;
    if (!oa->ObjectName)
        return STATUS_SUCCESS;
    if (!kmt_user_ptr_ok(oa->ObjectName, sizeof(us)))
        return STATUS_INVALID_PARAMETER;
    us = *oa->ObjectName;
    if (!us.Length)
        return STATUS_SUCCESS;
    if ((us.Length & 1) || !kmt_user_ptr_ok(us.Buffer, us.Length))
        return STATUS_INVALID_PARAMETER;
    count = us.Length / sizeof(WCHAR);
    for (size_t i = 0; i < count; i++) {
        unsigned c = us.Buffer[i];

        if (c >= 0xd800 && c < 0xdc00 && i + 1 < count && us.Buffer[i + 1] >= 0xdc00 &&
            us.Buffer[i + 1] < 0xe000)
            c = 0x10000 + ((c - 0xd800) << 10) + (us.Buffer[++i] - 0xdc00);
        else if (!c || (c >= 0xd800 && c < 0xe000))
            return STATUS_INVALID_PARAMETER;     /* a NUL or a lone surrogate */
        if (!put_utf8(name, size < KMT_BROKER_MAX_NAME ? size : KMT_BROKER_MAX_NAME, &pos, c))
            return STATUS_NAME_TOO_LONG;
    }
    name[pos] = 0;
    *out = name;
    return STATUS_SUCCESS;
}
