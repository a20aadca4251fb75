/*
 * Software miniport: sharing an allocation with another process.  The
 * memory is the allocation's memfd, so exporting it is a dup and importing
 * it is an allocation over a dup of the fd that came back: every process
 * maps the same pages.  A program's own ExistingSysMem pages have no fd and
 * cannot be handed out.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd_registry.h"
#include "soft.h"

NTSTATUS APIENTRY soft_export_allocation(HANDLE hAdapter, HANDLE hAllocation, int *pFd)
{
    struct soft_allocation *s = hAllocation;
    int fd;

    (void)hAdapter;
    if (!s || s->fd < 0)
        return STATUS_NOT_SUPPORTED;
    if ((fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0)) < 0)
        return STATUS_INSUFFICIENT_RESOURCES;
    *pFd = fd;
    return STATUS_SUCCESS;
}

NTSTATUS APIENTRY soft_import_allocation(HANDLE hAdapter, KMTARG_IMPORTALLOCATION *pImport)
{
    struct soft_adapter *a = hAdapter;
    struct soft_allocation *s;
    struct stat st;

    /* the fd must hold the whole allocation: a shorter one would fault the
     * engine or a CPU mapping past its end */
    if (pImport->Fd < 0 || fstat(pImport->Fd, &st) || !S_ISREG(st.st_mode) || !pImport->Size ||
        pImport->Size % SOFT_PAGE_SIZE || (UINT64)st.st_size < pImport->Size)
        return STATUS_INVALID_PARAMETER;
    if (!(s = calloc(1, sizeof(*s))))
        return STATUS_NO_MEMORY;
    s->size = pImport->Size;
    atomic_init(&s->open_count, 0);
    atomic_init(&s->engine_map, NULL);
    if ((s->fd = fcntl(pImport->Fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(s);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    kmt_fd_track(s->fd);
    atomic_fetch_add(&a->bytes, s->size);
    if (!soft_allocation_place(a, s))
        return STATUS_NO_MEMORY;         /* place freed it */
    pImport->hAllocation = s;
    pImport->GpuVirtualAddress = s->gpu_va;   /* a range of this process's engine, as create gives */
    return STATUS_SUCCESS;
}
