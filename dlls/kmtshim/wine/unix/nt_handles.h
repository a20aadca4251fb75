/*
 * kmtshim.so: NT handles as Wine handles.
 *
 * The core's NT handle is a file descriptor in the HANDLE-sized field
 * (broker/broker.h).  A Windows program holds Wine handles: the wineserver
 * keeps the fd behind a "File" object, so DuplicateHandle and inheritance
 * carry it to another Wine process, CloseHandle closes it, and the broker
 * sees the last copy go when the last handle in any process is closed.
 * ntdll.so's wine_server_fd_to_handle / wine_server_handle_to_fd convert
 * between the two (nt_handles.c).
 *
 * The entries of functions.h's KMT_FUNC_NT_IN lines (the descriptor's
 * hNtHandle is the program's handle) and KMT_FUNC_NT_OUT lines (the call
 * returns one in hNtHandle) go through the two macros below; ShareObjects,
 * which returns one through a pointer argument, is in nt_handles.c.  The
 * core works on a copy of the descriptor, so the program's descriptor never
 * holds an fd, and fields the core writes are copied back.
 */
#ifndef KMTSHIM_WINE_UNIX_NT_HANDLES_H
#define KMTSHIM_WINE_UNIX_NT_HANDLES_H

#include <stdint.h>

#include "kmtshim/kmt_wintypes.h"
#include "unixlib.h"
#include "events.h"

/* The value the core gets for the program's NT handle `handle`; *fd is the
 * fd to give back to kmt_nt_handle_in_done() after the call (-1: none).
 * A handle without an fd becomes a value the core answers with the status
 * of the native path, in its own order of checks: NULL, a closed or
 * made-up handle -1 (STATUS_INVALID_HANDLE, as Windows answers NULL); a
 * handle of another type (an event) an fd that is not a kmtshim NT handle
 * (STATUS_OBJECT_TYPE_MISMATCH). */
HANDLE kmt_nt_handle_in(HANDLE handle, int *fd);
void kmt_nt_handle_in_done(int fd);

/* Turns the fd the core returned into a Wine handle with `access` and
 * `attributes` (OBJ_INHERIT: inheritable), written to *out (the caller's
 * memory), and closes the fd either way.  On failure *out is left alone. */
NTSTATUS kmt_nt_handle_out(int fd, uint32_t access, uint32_t attributes, HANDLE *out);

/* The caller's descriptor of a unix call's args (NULL for NULL args). */
static inline void *kmt_nt_desc(const void *args)
{
    return args ? (void *)(uintptr_t)((const struct kmt_desc_params *)args)->desc : NULL;
}

/* Declares `desc` of `type` from `args`; one the unix half cannot read
 * (NULL, a bad pointer) goes to the core as it is, which answers it. */
#define KMT_NT_DESC_OR_RETURN(fn, type, args, desc)                         \
    type *desc = kmt_nt_desc(args);                                         \
    if (!kmt_wine_ptr_ok(desc, sizeof(*desc)))                              \
        return KMT_EVENTS_CALL(fn(desc))

/* The unix entry of a KMT_FUNC_NT_IN line: `fn` on a copy of the
 * descriptor whose hNtHandle is the fd of the program's handle. */
#define KMT_NT_IN_CALL(fn, type, args)                                      \
    ({                                                                      \
        KMT_NT_DESC_OR_RETURN(fn, type, args, desc_);                       \
        type copy_ = *desc_;                                                \
        NTSTATUS status_;                                                   \
        int fd_;                                                            \
        copy_.hNtHandle = kmt_nt_handle_in(desc_->hNtHandle, &fd_);         \
        status_ = KMT_EVENTS_CALL(fn(&copy_));                              \
        kmt_nt_handle_in_done(fd_);                                         \
        copy_.hNtHandle = desc_->hNtHandle;                                 \
        *desc_ = copy_;                                                     \
        status_;                                                            \
    })

/* OBJECT_ATTRIBUTES.Attributes of `attr` (the caller's), 0 for NULL. */
uint32_t kmt_nt_attributes(const OBJECT_ATTRIBUTES *attr);

/* The unix entry of a KMT_FUNC_NT_OUT line (a descriptor with
 * dwDesiredAccess, pObjAttrib and hNtHandle): the fd the core returns
 * becomes a Wine handle with the access asked for.  The program's
 * descriptor is written only on success. */
#define KMT_NT_OUT_CALL(fn, type, args)                                     \
    ({                                                                      \
        KMT_NT_DESC_OR_RETURN(fn, type, args, desc_);                       \
        type copy_ = *desc_;                                                \
        NTSTATUS status_ = KMT_EVENTS_CALL(fn(&copy_));                     \
        if (!status_)                                                       \
            status_ = kmt_nt_handle_out((int)(intptr_t)copy_.hNtHandle,     \
                                        copy_.dwDesiredAccess,              \
                                        kmt_nt_attributes(copy_.pObjAttrib), \
                                        &desc_->hNtHandle);                 \
        if (!status_) {                                                     \
            copy_.hNtHandle = desc_->hNtHandle;                             \
            *desc_ = copy_;                                                 \
        }                                                                   \
        status_;                                                            \
    })

#endif /* KMTSHIM_WINE_UNIX_NT_HANDLES_H */
