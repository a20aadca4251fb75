/*
 * Keyed mutexes (keyed_mutex.c): the core of CreateKeyedMutex(2),
 * OpenKeyedMutex(2), OpenKeyedMutexFromNtHandle, DestroyKeyedMutex,
 * AcquireKeyedMutex(2) and ReleaseKeyedMutex(2).
 *
 * A keyed mutex is a small shared page (a memfd) registered with the
 * session broker; every local handle to it, in any process, maps that page.
 * Acquire and Release work on the page with atomics and shared futexes:
 * uncontended, they make no system call.  See keyed_mutex.c for the page.
 */
#ifndef KMTSHIM_KEYED_MUTEX_H
#define KMTSHIM_KEYED_MUTEX_H

#include <stdbool.h>

#include "kmtshim/d3dkmthk.h"

/* The most runtime data a keyed mutex carries (CreateKeyedMutex2's, and
 * what ReleaseKeyedMutex2 hands to the next AcquireKeyedMutex2). */
#define DXGK_KEYED_MUTEX_MAX_RUNTIME 0x10000u

/* runtime: runtime_size bytes (0: none), read once.  nt_sharing: no global
 * handle (*global gets 0), shareable with ShareObjects. */
NTSTATUS dxgk_create_keyed_mutex(UINT64 initial_key, const void *runtime, UINT runtime_size,
                                 bool nt_sharing, D3DKMT_HANDLE *out, D3DKMT_HANDLE *global);
/* runtime/runtime_size: OpenKeyedMutex2's rules (size 0, or a buffer of at
 * least the creator's size, never written). */
NTSTATUS dxgk_open_keyed_mutex(D3DKMT_HANDLE global, const void *runtime, UINT runtime_size,
                               D3DKMT_HANDLE *out);
NTSTATUS dxgk_open_keyed_mutex_from_nt(int nt_fd, const void *runtime, UINT runtime_size,
                                       D3DKMT_HANDLE *out);
NTSTATUS dxgk_destroy_keyed_mutex(D3DKMT_HANDLE h);

/* timeout: NULL infinite, else NT convention in 100 ns units (negative
 * relative, positive absolute system time).  *fence: the last release's
 * value on success, 0 on STATUS_TIMEOUT and STATUS_ABANDONED, untouched on
 * other failures.  data/size: AcquireKeyedMutex2's buffer (size 0: none). */
NTSTATUS dxgk_acquire_keyed_mutex(D3DKMT_HANDLE h, UINT64 key, const LONGLONG *timeout,
                                  UINT64 *fence, void *data, UINT size);
NTSTATUS dxgk_release_keyed_mutex(D3DKMT_HANDLE h, UINT64 key, UINT64 fence, const void *data,
                                  UINT size);

/* For tests: handle h's look before sleeping (keyed_mutex_page.h), valid
 * while h lives, NULL for no keyed mutex: they read its counts, and may
 * set the next look's length. */
struct dxgk_km_look;
struct dxgk_km_look *dxgk_keyed_mutex_look(D3DKMT_HANDLE h);

/* Process teardown destroys the process's keyed-mutex handles; a fork()
 * child forgets the parent's (fork.c). */
void dxgk_keyed_mutex_process_shutdown(void);
void dxgk_keyed_mutex_forget(void);

#endif /* KMTSHIM_KEYED_MUTEX_H */
