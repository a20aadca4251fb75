/*
 * kmtshim.so: NT handles as Wine handles (nt_handles.h), and the unix
 * entry of ShareObjects.
 *
 * ntdll.so exports wine_server_fd_to_handle and wine_server_handle_to_fd
 * to Unix libraries (Wine 8 and Wine 10 alike).  kmtshim.so does not link
 * against ntdll.so (it also loads natively, for tests/wine/test_unixlib):
 * it finds the two in the ntdll.so the process has loaded already, by its
 * soname.  Without one (natively, outside Wine) NT handles stay the core's
 * file descriptors.
 *
 * Their calling convention depends on the Wine that runs, not the one
 * kmtshim was built against: Wine 8.0 builds ntdll.so's CDECL functions
 * with the Windows x64 convention, Wine 10.0 with the System V one (its
 * windef.h defines CDECL empty for WINE_UNIX_LIB).  A package built on
 * Debian 12 runs under Debian 13's Wine too, so the choice is made when
 * the two are looked up (server_calls_sysv).
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "base/kmt_debug.h"
#include "unixlib.h"
#include "entries.h"
#include "events.h"
#include "nt_handles.h"

#define KMT_OBJ_INHERIT 0x00000002u

/* Wine 8's CDECL in ntdll.so: the Windows x64 calling convention (on
 * i386 both Wines use cdecl, the compiler's default) */
#ifdef __x86_64__
#define WINE8_CDECL __attribute__((ms_abi))
#else
#define WINE8_CDECL
#endif
typedef NTSTATUS (WINE8_CDECL *fd_to_handle_ms_fn)(int fd, unsigned int access, unsigned int attributes,
                                                   HANDLE *handle);
typedef NTSTATUS (WINE8_CDECL *handle_to_fd_ms_fn)(HANDLE handle, unsigned int access, int *unix_fd,
                                                   unsigned int *options);
typedef NTSTATUS (*fd_to_handle_sysv_fn)(int fd, unsigned int access, unsigned int attributes, HANDLE *handle);
typedef NTSTATUS (*handle_to_fd_sysv_fn)(HANDLE handle, unsigned int access, int *unix_fd, unsigned int *options);

static pthread_once_t server_once = PTHREAD_ONCE_INIT;
/* One pair is set, by the convention of the ntdll.so that runs.  Two
 * pointers, not one pointer and a flag: GCC (12 and 14 at -O2) merges
 * two indirect calls through one pointer that differ only in their
 * calling convention, and would call System V functions the Windows way. */
static fd_to_handle_ms_fn ms_fd_to_handle;
static handle_to_fd_ms_fn ms_handle_to_fd;
static fd_to_handle_sysv_fn sysv_fd_to_handle;
static handle_to_fd_sysv_fn sysv_handle_to_fd;

/* Whether `ntdll` (an ntdll.so handle) builds CDECL as System V.  No
 * symbol says so directly; of the two Wines tested, 10.0's ntdll.so (System
 * V) exports __wine_unix_call_dispatcher and 8.0's (Windows x64) does not. */
static bool server_calls_sysv(void *ntdll)
{
    return dlsym(ntdll, "__wine_unix_call_dispatcher") != NULL;
}

static void find_server_calls(void)
{
    void *ntdll = dlopen("ntdll.so", RTLD_NOW | RTLD_NOLOAD), *fd_to_handle, *handle_to_fd;
    bool sysv;

    if (!ntdll) {
        TRACE_(kmtshim, "no ntdll.so in this process: NT handles are file descriptors\n");
        return;
    }
    fd_to_handle = dlsym(ntdll, "wine_server_fd_to_handle");
    handle_to_fd = dlsym(ntdll, "wine_server_handle_to_fd");
    sysv = server_calls_sysv(ntdll);
    /* the reference keeps nothing alive that Wine would unload: ntdll.so
     * stays for the life of the process */
    dlclose(ntdll);
    if (!fd_to_handle || !handle_to_fd) {
        ERR_(kmtshim, "ntdll.so lacks wine_server_fd_to_handle/handle_to_fd: NT handles cannot be shared\n");
        return;
    }
    TRACE_(kmtshim, "ntdll.so's server calls use the %s convention\n", sysv ? "System V" : "Windows x64");
    if (sysv) {
        sysv_fd_to_handle = (fd_to_handle_sysv_fn)fd_to_handle;
        sysv_handle_to_fd = (handle_to_fd_sysv_fn)handle_to_fd;
    } else {
        ms_fd_to_handle = (fd_to_handle_ms_fn)fd_to_handle;
        ms_handle_to_fd = (handle_to_fd_ms_fn)handle_to_fd;
    }
}

static NTSTATUS call_fd_to_handle(int fd, unsigned int access, unsigned int attributes, HANDLE *handle)
{
    if (sysv_fd_to_handle)
        return sysv_fd_to_handle(fd, access, attributes, handle);
    return ms_fd_to_handle(fd, access, attributes, handle);
}

static NTSTATUS call_handle_to_fd(HANDLE handle, unsigned int access, int *unix_fd, unsigned int *options)
{
    if (sysv_handle_to_fd)
        return sysv_handle_to_fd(handle, access, unix_fd, options);
    return ms_handle_to_fd(handle, access, unix_fd, options);
}

static bool have_server(void)
{
    pthread_once(&server_once, find_server_calls);
    return sysv_handle_to_fd || ms_handle_to_fd;
}

HANDLE kmt_nt_handle_in(HANDLE handle, int *fd)
{
    unsigned int options = 0;
    NTSTATUS status;

    *fd = -1;
    if (!have_server())
        return handle;
    status = call_handle_to_fd(handle, 0, fd, &options);
    if (!status) {
        TRACE_(kmtshim, "NT handle %p: fd %d\n", handle, *fd);
        return (HANDLE)(intptr_t)*fd;
    }
    *fd = -1;
    TRACE_(kmtshim, "NT handle %p: no fd (%s)\n", handle, kmt_debugstr_status(status));
    if (status == STATUS_INVALID_HANDLE)
        return (HANDLE)(intptr_t)-1;
    /* a handle of another type: an fd the broker does not know gives the
     * native path's STATUS_OBJECT_TYPE_MISMATCH */
    *fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return (HANDLE)(intptr_t)*fd;
}

void kmt_nt_handle_in_done(int fd)
{
    if (fd >= 0)
        close(fd);
}

NTSTATUS kmt_nt_handle_out(int fd, uint32_t access, uint32_t attributes, HANDLE *out)
{
    HANDLE old = *out;
    NTSTATUS status;

    if (!have_server()) {
        *out = (HANDLE)(intptr_t)fd;
        return STATUS_SUCCESS;
    }
    /* the wineserver keeps its own copy of the fd; Wine 8 answers
     * STATUS_ACCESS_VIOLATION for an output outside the program's memory
     * (this half's stack), so the handle goes straight to the caller's */
    status = call_fd_to_handle(fd, access, attributes & KMT_OBJ_INHERIT, out);
    close(fd);
    if (status) {
        *out = old;
        WARN_(kmtshim, "fd %d: no Wine handle (%s)\n", fd, kmt_debugstr_status(status));
        return status;
    }
    TRACE_(kmtshim, "fd %d: NT handle %p (access %#x%s)\n", fd, *out, access,
           attributes & KMT_OBJ_INHERIT ? ", inheritable" : "");
    return STATUS_SUCCESS;
}

uint32_t kmt_nt_attributes(const OBJECT_ATTRIBUTES *attr)
{
    if (!kmt_wine_ptr_ok(attr, sizeof(*attr)))
        return 0;
    return attr->Attributes;
}

/* ShareObjects returns its NT handle through a pointer: the core writes
 * the fd into a local, which becomes the program's Wine handle.  A NULL or
 * bad pointer reaches the core as it is, which answers it. */
NTSTATUS unix_ShareObjects(void *args)
{
    const struct kmt_share_objects_params *params = args;
    OBJECT_ATTRIBUTES *attr;
    HANDLE *out, fd_handle = NULL;
    NTSTATUS status;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    out = (HANDLE *)(uintptr_t)params->nt_handle;
    attr = (OBJECT_ATTRIBUTES *)(uintptr_t)params->attributes;
    status = KMT_EVENTS_CALL(D3DKMTShareObjects((UINT)params->count,
                                                (const D3DKMT_HANDLE *)(uintptr_t)params->handles, attr,
                                                (DWORD)params->access,
                                                kmt_wine_ptr_ok(out, sizeof(*out)) ? &fd_handle : out));
    if (status || !kmt_wine_ptr_ok(out, sizeof(*out)))
        return status;
    return kmt_nt_handle_out((int)(intptr_t)fd_handle, (uint32_t)params->access, kmt_nt_attributes(attr), out);
}
