/*
 * The descriptor layouts of wow64_layouts.h as tables: each field's i386
 * offset as listed, its x86_64 offset from offsetof().  The static
 * assertions tie every pointer, ULONG_PTR and HANDLE entry to an 8-byte
 * member of the x86_64 header; wow64_layouts_i386.c ties the i386 offsets.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "kmtshim/d3dkmthk.h"
#include "wow64.h"

/* offsetof(type, member), once `cond` holds (a compile-time check inside
 * an initializer) */
#define KMT_W64_OFF64(type, member, cond) \
    (offsetof(type, member) + 0 * sizeof(struct { KMT_STATIC_ASSERT(cond, #type "." #member); int unused; }))
#define KMT_W64_SIZEOF(type, member) sizeof(((type *)0)->member)

#define KMT_W64_WIDE(type, member, off32, kind, count, cond, cond_off32, value) \
    { off32, KMT_W64_OFF64(type, member, KMT_W64_SIZEOF(type, member) == 8 * (count)), count, kind, cond, \
      cond_off32, -1, value, 0, NULL },

#define KMT_W64_BEGIN(name, type, size32) \
    typedef type kmt_w64_type_##name; \
    enum { kmt_w64_size32_##name = size32 }; \
    static const struct kmt_w64_field kmt_w64_fields_##name[] = {
#define KMT_W64_BYTES(type, member, off32, size) \
    { off32, KMT_W64_OFF64(type, member, KMT_W64_SIZEOF(type, member) <= (size)), size, KMT_W64_KIND_BYTES, \
      KMT_W64_ALWAYS, 0, -1, 0, 0, NULL },
#define KMT_W64_RAW(type, off32, off64, size) \
    { off32, off64, size, KMT_W64_KIND_BYTES, KMT_W64_ALWAYS, 0, -1, 0, 0, NULL },
#define KMT_W64_PTR(type, member, off32) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_PTR, 1, KMT_W64_ALWAYS, 0, 0)
#define KMT_W64_UPTRS(type, member, off32, count) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_UPTR, count, KMT_W64_ALWAYS, 0, 0)
#define KMT_W64_HANDLE(type, member, off32) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_HANDLE, 1, KMT_W64_ALWAYS, 0, 0)
#define KMT_W64_HANDLES(type, member, off32, count) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_HANDLE, count, KMT_W64_ALWAYS, 0, 0)
#define KMT_W64_PTR_IF(type, member, off32, cond, cond_off32, value) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_PTR, 1, cond, cond_off32, value)
#define KMT_W64_HANDLE_IF(type, member, off32, cond, cond_off32, value) \
    KMT_W64_WIDE(type, member, off32, KMT_W64_KIND_HANDLE, 1, cond, cond_off32, value)
#define KMT_W64_ARRAY(type, member, off32, count_off32, elem, in_only) \
    { off32, KMT_W64_OFF64(type, member, KMT_W64_SIZEOF(type, member) == 8), 1, KMT_W64_KIND_ARRAY, \
      KMT_W64_ALWAYS, 0, count_off32, 0, in_only, &kmt_w64_layout_##elem },
#define KMT_W64_END(name) \
    }; \
    KMT_STATIC_ASSERT(kmt_w64_size32_##name <= KMT_W64_MAX_SIZE32, #name " is larger than KMT_W64_MAX_SIZE32"); \
    const struct kmt_w64_layout kmt_w64_layout_##name = { \
        #name, kmt_w64_size32_##name, sizeof(kmt_w64_type_##name), \
        sizeof(kmt_w64_fields_##name) / sizeof(kmt_w64_fields_##name[0]), kmt_w64_fields_##name \
    };
#include "wow64_layouts.h"
