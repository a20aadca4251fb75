/*
 * kmtshim.so's unix-call entries, one per D3DKMT function of functions.h:
 * the KMT_FUNC, KMT_FUNC_PE, KMT_FUNC_NT_IN and KMT_FUNC_NT_OUT ones are
 * generated (entries_gen.c), the KMT_FUNC_EVENT and KMT_FUNC_UNIX ones
 * written by hand (events.c), the KMT_FUNC_CUSTOM ones too (custom.c,
 * nt_handles.c).
 * unixlib.c puts them into __wine_unix_call_funcs in unix-call code order.
 */
#ifndef KMTSHIM_WINE_UNIX_ENTRIES_H
#define KMTSHIM_WINE_UNIX_ENTRIES_H

#include "kmtshim/kmt_wintypes.h"

#define KMT_FUNC(name, type) NTSTATUS unix_##name(void *args);
#include "functions.h"

/* unixlib.c: the gdi32 proxy's routing question (KMT_UNIX_OWNS_HANDLE) */
NTSTATUS unix_owns_handle(void *args);

/* custom.c: the PE half's display-based opens (KMT_UNIX_OPEN_DEVICE_PATH) */
NTSTATUS unix_open_device_path(void *args);

#endif /* KMTSHIM_WINE_UNIX_ENTRIES_H */
