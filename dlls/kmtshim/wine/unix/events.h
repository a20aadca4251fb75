/*
 * kmtshim.so: Win32 events for the core (see events.c and docs/wine.md,
 * "Events"): the private calls the PE half's event pump uses.  The
 * hand-written D3DKMT entries (the KMT_FUNC_EVENT and KMT_FUNC_UNIX lines of
 * functions.h) are declared with the generated ones in entries.h.
 */
#ifndef KMTSHIM_WINE_UNIX_EVENTS_H
#define KMTSHIM_WINE_UNIX_EVENTS_H

#include <stdbool.h>

#include "kmtshim/d3dkmthk.h"

/* True while this thread runs a D3DKMT call for the PE half, which
 * delivers what the call queued as soon as it returns: a set queued then
 * needs no pump. */
extern __thread bool kmt_events_caller_delivers;

#define KMT_EVENTS_CALL(call)                                           \
    ({                                                                  \
        NTSTATUS status_;                                               \
        kmt_events_caller_delivers = true;                              \
        status_ = (call);                                               \
        kmt_events_caller_delivers = false;                             \
        status_;                                                        \
    })

NTSTATUS unix_events_init(void *args);
NTSTATUS unix_events_wait(void *args);
NTSTATUS unix_events_take(void *args);
NTSTATUS unix_events_stop(void *args);

#endif /* KMTSHIM_WINE_UNIX_EVENTS_H */
