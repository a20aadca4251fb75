/*
 * The amdgpu fake's books (fake_amdgpu.c): GPU VA ranges and mappings,
 * submissions, and what the "GPU" made of them.  They start anew with each
 * fresh amdgpu_device (the first initialize after the last deinitialize).
 */
#ifndef KMTSHIM_FAKE_AMDGPU_H
#define KMTSHIM_FAKE_AMDGPU_H

#include <stdint.h>

#define FAKE_AMDGPU_VA_START (1ull << 20)  /* AMDGPU_VA_RESERVED_SIZE: the bottom is the kernel's */
#define FAKE_AMDGPU_VA_END (1ull << 47)    /* the low half, below the hole */

struct fake_amdgpu {
    unsigned va_ranges;                 /* live amdgpu_va_range_alloc ranges */
    unsigned mappings;                  /* live AMDGPU_VA_OP_MAP mappings */
    unsigned submissions;               /* CS ioctls taken */
    unsigned faults;                    /* VM faults while running them */
    uint64_t fault_address;             /* the last one's */
    unsigned range_freed_mapped;        /* ranges freed while still mapped */
    unsigned bo_freed_mapped;           /* objects freed while still mapped */
    unsigned last_bo_count;             /* the last CS's BO list */
    uint64_t last_ib_va;
    uint32_t last_ib_bytes;             /* the last IB chunk's ib_bytes */
    uint32_t last_map_flags;
    /* A new device starts new books (its VA manager); these outlive it,
     * so a program that starts the device again (a fuzzer) still sees them */
    unsigned total_submissions;         /* CS ioctls taken since the program started */
    unsigned left_at_deinit;            /* ranges and mappings live when the last device reference went */
};

extern struct fake_amdgpu fake_amdgpu;

/* When set, called once a successful amdgpu_device_initialize left the
 * fake's lock, before it returns (a test forks there); outlives the books. */
extern void (*fake_amdgpu_after_initialize)(void);

/* The next amdgpu_device_initialize starts a device of its own, on its own
 * file, as libdrm_amdgpu does in another process. */
void fake_amdgpu_new_process(void);

#endif
