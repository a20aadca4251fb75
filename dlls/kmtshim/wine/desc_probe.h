/*
 * Whether a caller's descriptor can be read, for the Windows-side code that
 * reads one before the core has checked it: the PE half's wrappers and the
 * gdi32 proxy's routing.  Where the answer is no, they hand the pointer on
 * unread and the core answers it (STATUS_INVALID_PARAMETER), as it does for
 * every bad descriptor.
 *
 * x86_64: the bounds of kmt_wine_ptr_ok, no system call; they are the
 * core's own there (thunks/thunk.h), so both halves read the same pointers.
 *
 * i386: user space fills the 4 GiB and has no unmapped hole, so garbage
 * such as 0xdeadbeef passes any bounds.  The range is asked about with
 * VirtualQuery instead: every page committed, readable, and neither
 * PAGE_GUARD (reading it would take the guard from its owner, a thread's
 * stack) nor PAGE_NOACCESS.  VirtualQuery rather than catching the fault:
 * mingw-w64's GCC has no __try, a vectored handler is process-wide and
 * would race the program's own, and IsBadReadPtr consumes guard pages.
 * Under Wine it is answered in ntdll's Unix side without a wineserver
 * request.  The core probes the same range on i386 (process_vm_readv,
 * base/user_memory.h), which fails on exactly these pages: Wine maps
 * reserved, PAGE_NOACCESS and guard pages PROT_NONE.  One difference:
 * memory that kmtshim's Linux half mapped itself (a Lock of an allocation)
 * is free to VirtualQuery, so a descriptor placed there goes to the core
 * unread here.
 */
#ifndef KMTSHIM_WINE_DESC_PROBE_H
#define KMTSHIM_WINE_DESC_PROBE_H

#include "unixlib.h"

#define KMT_PAGE_READABLE (PAGE_READONLY | PAGE_READWRITE | PAGE_WRITECOPY | PAGE_EXECUTE_READ | \
                           PAGE_EXECUTE_READWRITE | PAGE_EXECUTE_WRITECOPY)

/* Whether every byte of [p, p + size) lies in committed, readable memory
 * (size 0: the byte at p).  Built on both architectures; i386 uses it. */
static inline BOOL kmt_win_range_readable(const void *p, SIZE_T size)
{
    ULONG_PTR v = (ULONG_PTR)p, last;
    MEMORY_BASIC_INFORMATION mbi;

    if (v < 0x10000 || (size && size - 1 > ~(ULONG_PTR)0 - v))
        return FALSE;
    last = v + (size ? size - 1 : 0);
    for (;;) {
        ULONG_PTR end;

        if (VirtualQuery((const void *)v, &mbi, sizeof(mbi)) != sizeof(mbi) || mbi.State != MEM_COMMIT ||
            !(mbi.Protect & KMT_PAGE_READABLE) || (mbi.Protect & (PAGE_GUARD | PAGE_NOACCESS)))
            return FALSE;
        end = (ULONG_PTR)mbi.BaseAddress + mbi.RegionSize;      /* 0: the top of the address space */
        if (!end || end - 1 >= last)
            return TRUE;
        v = end;
    }
}

/* Whether the Windows side may read the caller's descriptor itself. */
static inline BOOL kmt_win_desc_ok(const void *desc, SIZE_T size)
{
#ifdef _WIN64
    return kmt_wine_ptr_ok(desc, size);
#else
    return kmt_win_range_readable(desc, size);
#endif
}

#endif /* KMTSHIM_WINE_DESC_PROBE_H */
