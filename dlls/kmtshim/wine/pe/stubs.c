/*
 * Every D3DKMT name of Windows' gdi32 that kmtshim does not implement yet
 * (the list is generated: gen-exports.sh stubs).  Wine's own stubs abort
 * the process; these return STATUS_NOT_SUPPORTED, which callers handle,
 * and say so once per function on the kmtshim channel.
 */
#include "pe.h"

static NTSTATUS stub_call(const char *name, void *desc, LONG *once)
{
    if (!InterlockedExchange(once, 1)) {
        if (kmt_pe_debug_on(KMT_PE_FIXME))
            kmt_pe_log(KMT_PE_FIXME, name, "(%p) not implemented, returning STATUS_NOT_SUPPORTED\n",
                       desc);
    } else if (kmt_pe_debug_on(KMT_PE_TRACE)) {
        kmt_pe_log(KMT_PE_TRACE, name, "(%p) -> STATUS_NOT_SUPPORTED\n", desc);
    }
    return STATUS_NOT_SUPPORTED;
}

#define KMT_STUB(name, nt)                                               \
    NTSTATUS APIENTRY D3DKMT##name(void *desc);                         \
    NTSTATUS APIENTRY D3DKMT##name(void *desc)                          \
    {                                                                   \
        static LONG once;                                               \
        return stub_call("D3DKMT" #name, desc, &once);                  \
    }
#include "stubs.h"
