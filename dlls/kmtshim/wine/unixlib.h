/*
 * The interface between kmtshim.dll (PE half, mingw-w64) and kmtshim.so
 * (Linux half, gcc): unix-call codes and their argument structs.
 *
 * Both halves live in one address space, so a descriptor pointer passes
 * straight through; it travels as a UINT64 because the halves disagree on
 * the size of `long` (LLP64 against LP64).  Every argument struct uses
 * fixed-width types only and has its size pinned below.
 */
#ifndef KMTSHIM_WINE_UNIXLIB_H
#define KMTSHIM_WINE_UNIXLIB_H

#include <stdint.h>

#include "kmtshim/kmt_wintypes.h"

/* One code per implemented D3DKMT function (functions.h order), then the
 * private calls. */
enum kmt_unix_code {
#define KMT_FUNC(name, type) KMT_UNIX_##name,
#include "functions.h"
    KMT_UNIX_OWNS_HANDLE,       /* struct kmt_owns_handle_params */
    KMT_UNIX_CALL_COUNT
};

/* Every D3DKMT call: the caller's descriptor. */
struct kmt_desc_params {
    uint64_t desc;
};
KMT_STATIC_ASSERT(sizeof(struct kmt_desc_params) == 8, "kmt_desc_params layout");

/* KMT_UNIX_OWNS_HANDLE: is `handle` a live kmtshim handle of this process?
 * (the gdi32 proxy routes a call by the owner of the handle it names) */
struct kmt_owns_handle_params {
    uint32_t handle;            /* in */
    uint32_t owned;             /* out: 1 or 0 */
};
KMT_STATIC_ASSERT(sizeof(struct kmt_owns_handle_params) == 8, "kmt_owns_handle_params layout");

#endif /* KMTSHIM_WINE_UNIXLIB_H */
