/*
 * New WoW64: the 64-bit Linux half serving a 32-bit program.  Each
 * descriptor layout is a list of fields {offset in the i386 layout, offset
 * in the x86_64 layout, kind}; one converter (wow64_convert.c) walks the
 * list to build the x86_64 descriptor from the program's i386 one and to
 * write the outputs back.  The lists are wow64_layouts.h, tied to the
 * headers by compile-time checks in both ABIs (wow64_layouts.c,
 * wow64_layouts_i386.c).
 */
#ifndef KMTSHIM_WINE_UNIX_WOW64_H
#define KMTSHIM_WINE_UNIX_WOW64_H

#include <stdint.h>

#include "kmtshim/kmt_wintypes.h"

enum kmt_w64_kind {
    KMT_W64_KIND_BYTES,     /* `size` bytes, the same in both layouts */
    KMT_W64_KIND_PTR,       /* `count` pointers: zero-extended, narrowed back */
    KMT_W64_KIND_UPTR,      /* `count` ULONG_PTR/SIZE_T: the same as pointers */
    KMT_W64_KIND_HANDLE,    /* `count` HANDLEs: sign-extended, narrowed back */
    KMT_W64_KIND_ARRAY,     /* a pointer to `elem` structures, converted too */
};

/* When a field applies: always, or by a ULONG of the i386 descriptor (a
 * union's member chosen by a flag bit or a type). */
enum kmt_w64_cond {
    KMT_W64_ALWAYS,
    KMT_W64_IF_BITS,        /* (value & cond_value) != 0 */
    KMT_W64_IF_EQUAL,       /* value == cond_value */
};

struct kmt_w64_layout;

struct kmt_w64_field {
    uint16_t off32, off64;
    uint16_t size;          /* BYTES: bytes; the others: how many */
    uint8_t kind;           /* enum kmt_w64_kind */
    uint8_t cond;           /* enum kmt_w64_cond */
    uint16_t cond_off32;
    int16_t count_off32;    /* ARRAY: the ULONG count in the i386 descriptor; -1: one */
    uint32_t cond_value;
    uint8_t in_only;        /* ARRAY: the program's array is input: never written */
    const struct kmt_w64_layout *elem;
};

struct kmt_w64_layout {
    const char *name;
    uint16_t size32, size64;
    uint16_t count;
    const struct kmt_w64_field *fields;
};

/* The one-HANDLE element of an array of HANDLEs
 * (SetVidPnSourceOwner2's pVidPnSourceNtHandles). */
typedef struct {
    HANDLE Handle;
} KMT_W64_HANDLE_ELEM;

/* D3DDDICB_SIGNALFLAGS.EnqueueCpuEvent: the union holds a HANDLE */
#define KMT_W64_ENQUEUE_CPU_EVENT 0x2u

/* The layouts wow64_layouts.h lists, by name. */
#define KMT_W64_BEGIN(name, type, size32) extern const struct kmt_w64_layout kmt_w64_layout_##name;
#define KMT_W64_BYTES(type, member, off32, size)
#define KMT_W64_RAW(type, off32, off64, size)
#define KMT_W64_PTR(type, member, off32)
#define KMT_W64_UPTRS(type, member, off32, count)
#define KMT_W64_HANDLE(type, member, off32)
#define KMT_W64_HANDLES(type, member, off32, count)
#define KMT_W64_PTR_IF(type, member, off32, cond, cond_off32, value)
#define KMT_W64_HANDLE_IF(type, member, off32, cond, cond_off32, value)
#define KMT_W64_ARRAY(type, member, off32, count_off32, elem, in_only)
#define KMT_W64_END(name)
#include "wow64_layouts.h"

/* A value the core wrote that does not fit the i386 field (a pointer at or
 * above 4 GiB, a handle that is no sign-extended 32-bit value): the call's
 * status becomes this one. */
#define KMT_W64_STATUS_NO_FIT ((NTSTATUS)0xC0000095L)   /* STATUS_INTEGER_OVERFLOW */

/* The most bytes one converted array may span in the i386 layout; a count
 * beyond it gives STATUS_INVALID_PARAMETER.  Far above what any descriptor
 * the core accepts can need. */
#define KMT_W64_MAX_ARRAY (16u << 20)

/* The largest i386 descriptor of wow64_layouts.h (Present, 0x5b0). */
#define KMT_W64_MAX_SIZE32 0x600

/* The converted copy of one descriptor and its arrays, kept until the
 * outputs are written back. */
struct kmt_w64_copy;

/* Builds the x86_64 copy of the i386 descriptor at desc32.  A descriptor
 * (or array) pointer that is NULL or outside the caller's range is passed
 * on unconverted, for the core to answer as it answers it natively.
 * Returns STATUS_SUCCESS (*copy set, *desc64 the pointer to hand to the
 * core), STATUS_INVALID_PARAMETER (an array count that overflows the
 * 32-bit address space) or STATUS_NO_MEMORY. */
NTSTATUS kmt_w64_to64(const struct kmt_w64_layout *layout, uint64_t desc32, struct kmt_w64_copy **copy,
                      uint64_t *desc64);

/* Writes the outputs of the x86_64 copy back into the i386 descriptor (and
 * its writable arrays) when `write` is set, and frees the copy.  Returns
 * `status`, or KMT_W64_STATUS_NO_FIT where a value does not fit and
 * `status` was a success. */
NTSTATUS kmt_w64_from64(struct kmt_w64_copy *copy, int write, NTSTATUS status);

/* The wow64 table, beside kmt_unix_core_funcs (wow64.c). */
typedef NTSTATUS (*kmt_w64_entry)(void *args);
extern const kmt_w64_entry kmt_unix_core_wow64_funcs[];

#endif /* KMTSHIM_WINE_UNIX_WOW64_H */
