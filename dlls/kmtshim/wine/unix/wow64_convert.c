/*
 * The wow64 descriptor converter: walks a layout of wow64_layouts.h to
 * build the x86_64 copy of a 32-bit program's descriptor (pointers and
 * ULONG_PTRs zero-extended, HANDLEs sign-extended as Windows' wow64 layer
 * does, arrays of structures converted element by element) and to write
 * the outputs back, narrowed.  The copies live on the heap: this runs on
 * Wine's kernel stack.  The program's memory is read and written through
 * base/user_memory.h only: an unmapped array or a read-only descriptor
 * fails the call with a status, as natively, instead of crashing.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmt_ntstatus.h"
#include "base/user_memory.h"
#include "wow64.h"

/* One converted structure array: the program's i386 copy and ours. */
struct kmt_w64_part {
    const struct kmt_w64_layout *layout;
    uint8_t *p32;               /* the program's */
    uint8_t *c32;               /* what was read there */
    uint8_t *p64;
    uint32_t count;
    int in_only;
};

struct kmt_w64_copy {
    uint32_t count, capacity;
    struct kmt_w64_part *parts;
};

/* Whether [p, p + size) lies in a 32-bit program's address space. */
static int range32_ok(uint64_t p, uint64_t size)
{
    return p >= 0x10000 && p <= 0xffffffffull && size <= 0x100000000ull - p;
}

static uint32_t read32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

static void write32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static int field_applies(const struct kmt_w64_field *f, const uint8_t *s32)
{
    uint32_t v;

    if (f->cond == KMT_W64_ALWAYS)
        return 1;
    v = read32(s32 + f->cond_off32);
    return f->cond == KMT_W64_IF_BITS ? (v & f->cond_value) != 0 : v == f->cond_value;
}

static NTSTATUS add_part(struct kmt_w64_copy *copy, const struct kmt_w64_layout *layout, uint8_t *p32,
                         uint32_t count, int in_only, uint8_t **p64);

/* One structure: s32 (i386) into s64 (x86_64, zeroed). */
static NTSTATUS struct_to64(struct kmt_w64_copy *copy, const struct kmt_w64_layout *layout, const uint8_t *s32,
                            uint8_t *s64)
{
    for (uint16_t i = 0; i < layout->count; i++) {
        const struct kmt_w64_field *f = &layout->fields[i];
        const uint8_t *src = s32 + f->off32;
        uint8_t *dst = s64 + f->off64;

        if (!field_applies(f, s32))
            continue;
        switch (f->kind) {
        case KMT_W64_KIND_BYTES:
            memcpy(dst, src, f->size);
            break;
        case KMT_W64_KIND_PTR:
        case KMT_W64_KIND_UPTR:
            for (uint16_t n = 0; n < f->size; n++) {
                uint64_t v = read32(src + 4 * n);

                memcpy(dst + 8 * n, &v, 8);
            }
            break;
        case KMT_W64_KIND_HANDLE:
            for (uint16_t n = 0; n < f->size; n++) {
                int64_t v = (int32_t)read32(src + 4 * n);

                memcpy(dst + 8 * n, &v, 8);
            }
            break;
        case KMT_W64_KIND_ARRAY: {
            uint64_t p = read32(src);
            uint32_t count = f->count_off32 < 0 ? 1 : read32(s32 + f->count_off32);
            uint64_t bytes = (uint64_t)count * f->elem->size32;
            uint8_t *array64 = NULL;
            NTSTATUS status;

            /* NULL, an empty array or a pointer into the first 64 KiB
             * reaches the core as it is: it answers as natively */
            if (p < 0x10000 || !count) {
                memcpy(dst, &p, 8);
                break;
            }
            if (bytes > KMT_W64_MAX_ARRAY || !range32_ok(p, bytes))
                return STATUS_INVALID_PARAMETER;
            if ((status = add_part(copy, f->elem, (uint8_t *)(uintptr_t)p, count, f->in_only, &array64)))
                return status;
            p = (uintptr_t)array64;
            memcpy(dst, &p, 8);
            break;
        }
        }
    }
    return STATUS_SUCCESS;
}

/* Converts count structures at p32 into a new x86_64 array (*p64). */
static NTSTATUS add_part(struct kmt_w64_copy *copy, const struct kmt_w64_layout *layout, uint8_t *p32,
                         uint32_t count, int in_only, uint8_t **p64)
{
    struct kmt_w64_part *part;
    NTSTATUS status;

    if (copy->count == copy->capacity) {
        uint32_t capacity = copy->capacity ? 2 * copy->capacity : 4;
        struct kmt_w64_part *parts = realloc(copy->parts, capacity * sizeof(*parts));

        if (!parts)
            return STATUS_NO_MEMORY;
        copy->parts = parts;
        copy->capacity = capacity;
    }
    part = &copy->parts[copy->count];
    part->layout = layout;
    part->p32 = p32;
    part->c32 = malloc((size_t)count * layout->size32);
    part->p64 = *p64 = calloc(count, layout->size64);
    part->count = count;
    part->in_only = in_only;
    copy->count++;
    if (!part->c32 || !part->p64)
        return STATUS_NO_MEMORY;
    /* an unreadable descriptor or array is a bad one, as to the core */
    if (!kmt_user_copy_in(part->c32, p32, (size_t)count * layout->size32))
        return STATUS_INVALID_PARAMETER;
    for (uint32_t i = 0; i < count; i++)
        if ((status = struct_to64(copy, layout, part->c32 + (size_t)i * layout->size32,
                                  *p64 + (size_t)i * layout->size64)))
            return status;
    return STATUS_SUCCESS;
}

static void free_copy(struct kmt_w64_copy *copy)
{
    for (uint32_t i = 0; i < copy->count; i++) {
        free(copy->parts[i].c32);
        free(copy->parts[i].p64);
    }
    free(copy->parts);
    free(copy);
}

NTSTATUS kmt_w64_to64(const struct kmt_w64_layout *layout, uint64_t desc32, struct kmt_w64_copy **copy,
                      uint64_t *desc64)
{
    uint8_t *p64;
    NTSTATUS status;

    *copy = NULL;
    *desc64 = desc32;
    /* a descriptor no 32-bit program can pass goes to the core unconverted */
    if (!range32_ok(desc32, layout->size32))
        return STATUS_SUCCESS;
    if (!(*copy = calloc(1, sizeof(**copy))))
        return STATUS_NO_MEMORY;
    if ((status = add_part(*copy, layout, (uint8_t *)(uintptr_t)desc32, 1, 0, &p64))) {
        free_copy(*copy);
        *copy = NULL;
        return status;
    }
    *desc64 = (uintptr_t)p64;
    return STATUS_SUCCESS;
}

/* One structure's outputs back: s64 into s32.  Returns whether every value
 * fit. */
static int struct_from64(const struct kmt_w64_layout *layout, uint8_t *s32, const uint8_t *s64)
{
    uint8_t before[KMT_W64_MAX_SIZE32];
    int fit = 1;

    memcpy(before, s32, layout->size32);

    for (uint16_t i = 0; i < layout->count; i++) {
        const struct kmt_w64_field *f = &layout->fields[i];
        const uint8_t *src = s64 + f->off64;
        uint8_t *dst = s32 + f->off32;

        if (!field_applies(f, s32))
            continue;
        switch (f->kind) {
        case KMT_W64_KIND_BYTES:
            memcpy(dst, src, f->size);
            break;
        case KMT_W64_KIND_PTR:
        case KMT_W64_KIND_UPTR:
            for (uint16_t n = 0; n < f->size; n++) {
                uint64_t v;

                memcpy(&v, src + 8 * n, 8);
                fit &= v <= 0xffffffffull;
                write32(dst + 4 * n, (uint32_t)v);
            }
            break;
        case KMT_W64_KIND_HANDLE:
            for (uint16_t n = 0; n < f->size; n++) {
                int64_t v;

                memcpy(&v, src + 8 * n, 8);
                fit &= v == (int32_t)v;
                write32(dst + 4 * n, (uint32_t)v);
            }
            break;
        case KMT_W64_KIND_ARRAY:
            break;      /* the program's pointer stays; its elements are a part of their own */
        }
        /* a union member over the union's bytes: the i386 bytes after it
         * belong to the other members, as the program left them */
        if (f->cond != KMT_W64_ALWAYS)
            memcpy(dst + 4 * f->size, before + f->off32 + 4 * f->size, 4 * f->size);
    }
    return fit;
}

/* A part's outputs, narrowed into a copy of what was read, go to the
 * program only where they differ from it: a failed call that changed
 * nothing writes nothing, and a read-only descriptor is refused. */
static int part_from64(const struct kmt_w64_part *part, int *fit)
{
    size_t bytes = (size_t)part->count * part->layout->size32;
    uint8_t *out = malloc(bytes);
    int written;

    if (!out)
        return 0;
    memcpy(out, part->c32, bytes);
    for (uint32_t n = 0; n < part->count; n++)
        *fit &= struct_from64(part->layout, out + (size_t)n * part->layout->size32,
                              part->p64 + (size_t)n * part->layout->size64);
    written = memcmp(out, part->c32, bytes) ? kmt_user_write_back(part->p32, out, bytes) : 1;
    free(out);
    return written;
}

NTSTATUS kmt_w64_from64(struct kmt_w64_copy *copy, int write, NTSTATUS status)
{
    int fit = 1, written = 1;

    if (!copy)
        return status;
    for (uint32_t i = 0; write && i < copy->count; i++)
        if (!copy->parts[i].in_only)
            written &= part_from64(&copy->parts[i], &fit);
    free_copy(copy);
    if (!written && status >= 0)
        return STATUS_ACCESS_VIOLATION;
    return fit || status < 0 ? status : KMT_W64_STATUS_NO_FIT;
}
