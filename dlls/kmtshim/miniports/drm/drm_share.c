/*
 * DRM miniport: sharing allocations across processes
 * (KmtDdiExportAllocation, KmtDdiImportAllocation).  Fences are shared as
 * syncobj fds by drm_fence.c.
 *
 *   allocation  PRIME.  Export: PRIME_HANDLE_TO_FD (DRM_CLOEXEC | DRM_RDWR),
 *               a dma-buf fd of the GEM object.  Import: PRIME_FD_TO_HANDLE
 *               on this process's fd of the adapter, then what the family's
 *               create gives an object (a GPU VA, the host resource id),
 *               from the same private driver data.  amdgpu's handles are
 *               libdrm_amdgpu's (it closes them with its last reference):
 *               there amdgpu_bo_import takes the handle and gives it back.
 *               Memory the program owns (userptr, copy-backed
 *               ExistingSysMem) is not handed out.
 *
 * GEM handles: a file has one handle per buffer, and PRIME_FD_TO_HANDLE of
 * a buffer already on the file (this process created or imported it) gives
 * that handle again, without a reference of its own.  Every allocation over
 * a handle that was exported or imported holds a reference on a share
 * record (kdrm_gem_share); the last one closes the handle.  share_lock is
 * held across the kernel call and the record's change, so an import never
 * gets a handle a concurrent release is about to close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "drm_winsys.h"
#include "drm_bo.h"
#include "drm_fault.h"
#include "drm_trace.h"

void kdrm_share_init(struct kdrm_adapter *a)
{
    pthread_mutex_init(&a->share_lock, NULL);
    list_init(&a->shares);
}

/* A bad descriptor is the caller's: the kernel's EBADF. */
static NTSTATUS status_of(int err)
{
    return err == -EBADF ? STATUS_INVALID_PARAMETER : kdrm_status_from_errno(err);
}

static struct kdrm_gem_share *share_find(struct kdrm_adapter *a, UINT32 handle)
{
    struct kdrm_gem_share *s;

    LIST_FOR_EACH_ENTRY(s, &a->shares, struct kdrm_gem_share, entry)
        if (s->proto.handle == handle)
            return s;
    return NULL;
}

/* share_lock held. */
static struct kdrm_gem_share *share_add(struct kdrm_adapter *a, const struct kdrm_bo *bo)
{
    struct kdrm_gem_share *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->refs = 1;
    s->proto = *bo;
    s->proto.cpu = NULL;                 /* a mapping is its allocation's own */
    list_add_tail(&a->shares, &s->entry);
    return s;
}

NTSTATUS APIENTRY kdrm_export_allocation(HANDLE hAdapter, HANDLE hAllocation, int *pFd)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_bo *bo = hAllocation;
    struct drm_prime_handle args = { .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1 };
    NTSTATUS status = STATUS_SUCCESS;
    int err;

    *pFd = -1;
    if (!bo || bo->magic != KDRM_BO_MAGIC || bo->adapter != a)
        return STATUS_INVALID_PARAMETER;
    if (bo->backing != KMT_DRM_BACKING_BO)
        return STATUS_NOT_SUPPORTED;     /* the program's own pages */
    args.handle = bo->handle;
    pthread_mutex_lock(&a->share_lock);
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args, "PRIME_HANDLE_TO_FD")) < 0) {
        status = status_of(err);
    } else if (!bo->share && !(bo->share = share_add(a, bo))) {
        close(args.fd);
        status = STATUS_NO_MEMORY;
    }
    pthread_mutex_unlock(&a->share_lock);
    if (status) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "export of GEM %u failed: %#x\n", bo->handle, (unsigned)status);
        return status;
    }
    *pFd = args.fd;
    return STATUS_SUCCESS;
}

/* Size and flags as DxgkDdiCreateAllocation reads them: the UMD's
 * KMT_DRM_ALLOCATION_DESC when there is one, else the core's size. */
static NTSTATUS import_request(const KMTARG_IMPORTALLOCATION *p, UINT64 *size, UINT *flags)
{
    const KMT_DRM_ALLOCATION_DESC *desc = p->pPrivateDriverData;

    *size = p->Size;
    *flags = 0;
    if (desc && p->PrivateDriverDataSize >= sizeof(*desc) && desc->Magic == KMT_DRM_MAGIC) {
        if (desc->Version != KMT_DRM_VERSION || !desc->Size ||
            (desc->Flags & ~KMT_DRM_ALLOCATION_VALID_FLAGS) || desc->Reserved)
            return STATUS_INVALID_PARAMETER;
        *flags = desc->Flags;
        if (!*size)
            *size = desc->Size;
    }
    return *size ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

/* A dma-buf's size (its llseek answers SEEK_END); 0 where the fd does not say. */
static UINT64 dmabuf_size(int fd)
{
    off_t end = lseek(fd, 0, SEEK_END);

    if (end <= 0)
        return 0;
    lseek(fd, 0, SEEK_SET);
    return (UINT64)end;
}

/* An allocation over a handle the file already had: the family's work was
 * done for it (a GPU VA, a host resource), the record holds the results. */
static void adopt_known(struct kdrm_bo *bo, struct kdrm_gem_share *s)
{
    UINT flags = bo->flags;

    s->refs++;
    *bo = s->proto;
    bo->flags = flags;
    bo->share = s;
    atomic_init(&bo->open_count, 0);
}

/* The dma-buf's handle on the adapter's file: PRIME's, or the family's
 * library's when it keeps the file's handles. */
static int prime_handle(struct kdrm_adapter *a, struct kdrm_bo *bo, int fd, UINT32 *handle)
{
    struct drm_prime_handle args = { .fd = fd };
    int err;

    if (a->family->import_fd)
        return a->family->import_fd(a, bo, fd, handle);
    if ((err = kdrm_ioctl(a->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args, "PRIME_FD_TO_HANDLE")) < 0)
        return err;
    *handle = args.handle;
    return 0;
}

/* share_lock held: the handle prime_handle gave, known or new. */
static int import_handle(struct kdrm_adapter *a, struct kdrm_bo *bo, UINT32 handle, UINT64 buf_size)
{
    struct kdrm_gem_share *s = share_find(a, handle);
    int err;

    if (s) {
        if (a->family->import_drop)
            a->family->import_drop(a, bo);
        adopt_known(bo, s);
        return 0;
    }
    bo->handle = handle;
    if (buf_size > bo->size)
        bo->size = buf_size;             /* what the exporter's create got */
    if ((err = a->family->import(a, bo)) < 0 || !(bo->share = share_add(a, bo))) {
        if (!err)
            a->family->destroy(a, bo);   /* closes the handle too */
        else if (a->family->import_drop)
            a->family->import_drop(a, bo);
        else
            kdrm_gem_close(a->fd, handle);
        return err < 0 ? err : -ENOMEM;
    }
    return 0;
}

NTSTATUS APIENTRY kdrm_import_allocation(HANDLE hAdapter, KMTARG_IMPORTALLOCATION *p)
{
    struct kdrm_adapter *a = hAdapter;
    struct kdrm_bo *bo;
    UINT64 size, buf_size;
    UINT32 handle;
    UINT flags;
    NTSTATUS status;
    int err;

    p->hAllocation = NULL;
    p->GpuVirtualAddress = 0;
    if (!a->family->import)
        return STATUS_NOT_SUPPORTED;     /* drivers we do not allocate on */
    if (p->Fd < 0)
        return STATUS_INVALID_PARAMETER;
    if ((status = import_request(p, &size, &flags)))
        return status;
    size = (size + a->page_size - 1) & ~(UINT64)(a->page_size - 1);
    buf_size = dmabuf_size(p->Fd);
    if (buf_size && buf_size < size)
        return STATUS_INVALID_PARAMETER; /* not the buffer that allocation was made over */
    if (!(bo = kdrm_bo_new(a, size, flags)))
        return STATUS_NO_MEMORY;
    pthread_mutex_lock(&a->share_lock);
    if (!(err = prime_handle(a, bo, p->Fd, &handle)))
        err = import_handle(a, bo, handle, buf_size);
    pthread_mutex_unlock(&a->share_lock);
    if (err < 0) {
        kdrm_trace(a, KMT_TRACE_TRACE, __func__, "%s: import of fd %d failed: %s\n", a->family->name, p->Fd,
                   strerror(-err));
        free(bo);
        return status_of(err);
    }
    atomic_fetch_add(&a->buffers, 1);
    atomic_fetch_add(&a->bytes, bo->size);
    p->hAllocation = bo;
    p->GpuVirtualAddress = bo->gpu_va;
    return STATUS_SUCCESS;
}
