/*
 * Helpers shared by the Check unit tests.
 *
 * Every test program runs its cases in Check's fork mode: each case starts
 * in a fresh child, so the library's process state (handle table, loaded
 * miniports) begins empty for every case.  Output is TAP, counted by
 * automake's tap-driver and summed by scripts/check.
 */
#ifndef KMTSHIM_TEST_UTIL_H
#define KMTSHIM_TEST_UTIL_H

/* The first local handle kmtshim hands out: Windows' format with indices
 * from 2^23 (hmgr/hmgr.h), so the next ones are + 0x40 each. */
#define KMT_FIRST_HANDLE 0x60000000u

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/kmtshim.h"
#include "kmtshim/kmtsoft.h"

/* ck_assert on NTSTATUS with both values printed in hex. */
#define ck_assert_status(expr, expected) do {                                         \
        NTSTATUS _s = (expr), _e = (expected);                                        \
        ck_assert_msg(_s == _e, "%s returned 0x%08x, expected 0x%08x", #expr,         \
                      (unsigned)_s, (unsigned)_e);                                    \
    } while (0)

/* Local handles: bit 30 set (unique 1..3 in bits 30-31), low 6 bits 0. */
#define ck_assert_local_handle(h) do {                                                \
        D3DKMT_HANDLE _h = (h);                                                       \
        ck_assert_msg(_h && (_h & 0xc0000000u) && !(_h & 0x3f),                       \
                      "%s = 0x%08x is not a local handle", #h, (unsigned)_h);         \
    } while (0)

/* Selects the miniport(s) for this case, before the first D3DKMT call. */
void kmt_test_use_miniport(const char *selection);

/* Opens the first adapter (after kmt_test_use_miniport). */
D3DKMT_HANDLE kmt_test_open_adapter(void);
/* Opens the first adapter and creates a device on it. */
D3DKMT_HANDLE kmt_test_create_device(D3DKMT_HANDLE *adapter_out);

/* A KMT_SOFT_ALLOCATION_DESC of `size` bytes, for the software miniport. */
KMT_SOFT_ALLOCATION_DESC kmt_test_soft_desc(UINT64 size);

/* Creates `count` driver-private allocations of `size` bytes on the soft
 * adapter, with a resource when `resource` is non-NULL. */
NTSTATUS kmt_test_create_allocations(D3DKMT_HANDLE device, UINT count, UINT64 size,
                                     D3DKMT_HANDLE *allocations, D3DKMT_HANDLE *resource);

/* A standard existing-heap allocation over `mem` (no Check assertions:
 * threads may call it). */
NTSTATUS kmt_test_create_existing_heap(D3DKMT_HANDLE device, void *mem, SIZE_T size, D3DKMT_HANDLE *alloc);

/* The software adapter's live object counts (KMT_SOFT_ESCAPE_GET_STATS). */
KMT_SOFT_ESCAPE kmt_test_soft_stats(D3DKMT_HANDLE adapter);
/* Any of its escapes (enum kmt_soft_escape_code), asserted to succeed. */
KMT_SOFT_ESCAPE kmt_test_soft_escape(D3DKMT_HANDLE adapter, UINT code);

/* Registers `name` as the software miniport with some DDIs replaced:
 * `patch` edits a copy of its DDI table (DriverName already set to `name`),
 * and *soft receives the original, for the replacements to call through.
 * One variant per test process: a later call replaces the earlier one. */
void kmt_test_register_soft_variant(const char *name, void (*patch)(DRIVER_INITIALIZATION_DATA *ddi),
                                    DRIVER_INITIALIZATION_DATA *soft);

/* CLOCK_MONOTONIC in milliseconds, for bounds on when something happened. */
UINT64 kmt_test_now_ms(void);

/* Shuts the process down and asserts no core object leaked. */
void kmt_test_shutdown_no_leaks(void);

/* Asserts that each of the library's threads (named "kmt-...") blocks the
 * asynchronous signals and not the faults (base/kmt_thread.h); returns how
 * many it checked. */
unsigned kmt_test_assert_library_threads_block_signals(void);

/* Sends stderr (the library's trace lines) into a pipe until
 * kmt_test_capture_end(), which restores it and returns what was written
 * meanwhile (NUL-terminated, at most 32 KiB, valid until the next capture). */
void kmt_test_capture_begin(void);
const char *kmt_test_capture_end(void);
/* How many lines of `text` contain both `a` and `b`. */
unsigned kmt_test_count_lines(const char *text, const char *a, const char *b);

/* Gives this process, and the programs it starts, a session broker of its
 * own: a fresh 0700 directory (mkdtemp) in KMTSHIM_BROKER_DIR, so tests
 * never share a broker with each other or with the user's session, and a
 * short KMTSHIM_BROKER_LINGER_MS (100) unless one is set.  The directory
 * is removed when the process exits.  Call it at the start of each case,
 * before the first call that needs the broker.  Returns the directory. */
const char *kmt_test_private_broker(void);

/* Runs a suite with TAP output; returns the process exit status. */
int kmt_test_run(Suite *suite);

#endif
