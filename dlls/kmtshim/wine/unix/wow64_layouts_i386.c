/*
 * wow64_layouts.h against the i386 layout of the headers: compiled by
 * tests/unit/wow64-layouts.sh with i686 mingw-w64 and gcc -m32 (never
 * linked).  Every listed i386 offset and size must be what the 32-bit
 * compilers give, and every pointer, ULONG_PTR and HANDLE entry a 4-byte
 * member, so a header change cannot silently break a table.
 */
#include <stddef.h>

#include "kmtshim/d3dkmthk.h"
#include "wow64.h"

#if !defined(__i386__)
# error wow64_layouts_i386.c checks the i386 layout: build it with a 32-bit compiler
#endif

#define KMT_W64_SIZEOF(type, member) sizeof(((type *)0)->member)
#define KMT_W64_AT(type, member, off32) \
    KMT_STATIC_ASSERT(offsetof(type, member) == (off32), "i386 offset of " #type "." #member);
#define KMT_W64_NARROW(type, member, off32, count) \
    KMT_W64_AT(type, member, off32) \
    KMT_STATIC_ASSERT(KMT_W64_SIZEOF(type, member) == 4 * (count), "i386 size of " #type "." #member);

#define KMT_W64_BEGIN(name, type, size32) \
    KMT_STATIC_ASSERT(sizeof(type) == (size32), "i386 size of " #type);
#define KMT_W64_BYTES(type, member, off32, size) \
    KMT_W64_AT(type, member, off32) \
    KMT_STATIC_ASSERT(KMT_W64_SIZEOF(type, member) <= (size), "i386 size of " #type "." #member);
#define KMT_W64_RAW(type, off32, off64, size) \
    KMT_STATIC_ASSERT((off32) + (size) <= sizeof(type), "i386 bytes of " #type);
#define KMT_W64_PTR(type, member, off32) KMT_W64_NARROW(type, member, off32, 1)
#define KMT_W64_UPTRS(type, member, off32, count) KMT_W64_NARROW(type, member, off32, count)
#define KMT_W64_HANDLE(type, member, off32) KMT_W64_NARROW(type, member, off32, 1)
#define KMT_W64_HANDLES(type, member, off32, count) KMT_W64_NARROW(type, member, off32, count)
#define KMT_W64_PTR_IF(type, member, off32, cond, cond_off32, value) KMT_W64_NARROW(type, member, off32, 1)
#define KMT_W64_HANDLE_IF(type, member, off32, cond, cond_off32, value) KMT_W64_NARROW(type, member, off32, 1)
#define KMT_W64_ARRAY(type, member, off32, count_off32, elem, in_only) KMT_W64_NARROW(type, member, off32, 1)
#define KMT_W64_END(name)
#include "wow64_layouts.h"
