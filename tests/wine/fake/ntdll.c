/*
 * A stand-in for Wine's ntdll.so in tests/wine/test_unixlib: a shared
 * object with the soname ntdll.so that kmtshim.so finds the way it finds
 * Wine's (unix/nt_handles.c), exporting the two wineserver fd calls.  Its
 * "handles" are slots of a table holding a dup of the fd, as the wineserver
 * holds its own copy; the test reads the table through the fake_ntdll_*
 * calls.  Not thread-safe: test_unixlib calls it from one thread.
 */
#include "config.h"

#include <stdint.h>
#include <unistd.h>

#include "kmtshim/kmt_wintypes.h"
#include "kmtshim/kmt_ntstatus.h"

/* the build hides symbols by default */
#define EXPORT __attribute__((visibility("default")))
/* Wine 8.0's ntdll.so builds CDECL as the Windows x64 convention; Wine
 * 10.0's as System V, and it exports __wine_unix_call_dispatcher, by which
 * kmtshim.so tells the two apart (FAKE_NTDLL_SYSV: tests/wine/fake10) */
#ifdef FAKE_NTDLL_SYSV
#define WINE_CDECL
EXPORT void __wine_unix_call_dispatcher(void);
EXPORT void __wine_unix_call_dispatcher(void)
{
}
#else
#define WINE_CDECL __attribute__((ms_abi))
#endif

#define SLOTS 64
/* a handle of another type (an event, say) */
#define FAKE_NTDLL_EVENT ((HANDLE)(uintptr_t)0x1000)

struct slot {
    int fd;                              /* -1: free */
    unsigned access, attributes;
};

static struct slot slots[SLOTS];
static int initialized;
static NTSTATUS fail_next;

EXPORT NTSTATUS WINE_CDECL wine_server_fd_to_handle(int fd, unsigned int access, unsigned int attributes, HANDLE *handle);
EXPORT NTSTATUS WINE_CDECL wine_server_handle_to_fd(HANDLE handle, unsigned int access, int *unix_fd, unsigned int *options);
EXPORT int fake_ntdll_info(HANDLE handle, unsigned *access, unsigned *attributes);
EXPORT int fake_ntdll_close(HANDLE handle);
EXPORT unsigned fake_ntdll_live(void);
EXPORT void fake_ntdll_fail_next(NTSTATUS status);
EXPORT NTSTATUS fake_ntdll_make_handle(int fd, unsigned access, HANDLE *handle);

static void init(void)
{
    if (initialized)
        return;
    for (unsigned i = 0; i < SLOTS; i++)
        slots[i].fd = -1;
    initialized = 1;
}

static struct slot *lookup(HANDLE handle)
{
    uintptr_t v = (uintptr_t)handle;

    init();
    if (!v || v % 4 || v / 4 > SLOTS || slots[v / 4 - 1].fd < 0)
        return NULL;
    return &slots[v / 4 - 1];
}

EXPORT NTSTATUS WINE_CDECL wine_server_fd_to_handle(int fd, unsigned int access, unsigned int attributes, HANDLE *handle)
{
    NTSTATUS status = fail_next;

    init();
    fail_next = 0;
    if (status)
        return status;
    for (unsigned i = 0; i < SLOTS; i++) {
        if (slots[i].fd >= 0)
            continue;
        if ((slots[i].fd = dup(fd)) < 0)
            return STATUS_INVALID_HANDLE;
        slots[i].access = access;
        slots[i].attributes = attributes;
        *handle = (HANDLE)(uintptr_t)((i + 1) * 4);
        return STATUS_SUCCESS;
    }
    return STATUS_INSUFFICIENT_RESOURCES;
}

EXPORT NTSTATUS WINE_CDECL wine_server_handle_to_fd(HANDLE handle, unsigned int access, int *unix_fd, unsigned int *options)
{
    struct slot *s = lookup(handle);

    (void)access;                        /* no access checks here */
    if (handle == FAKE_NTDLL_EVENT)
        return STATUS_OBJECT_TYPE_MISMATCH;
    if (!s)
        return STATUS_INVALID_HANDLE;
    if ((*unix_fd = dup(s->fd)) < 0)
        return STATUS_INSUFFICIENT_RESOURCES;
    if (options)
        *options = 0;
    return STATUS_SUCCESS;
}

/* The access and attributes a handle was made with; 0 if it is not live. */
EXPORT int fake_ntdll_info(HANDLE handle, unsigned *access, unsigned *attributes)
{
    struct slot *s = lookup(handle);

    if (!s)
        return 0;
    *access = s->access;
    *attributes = s->attributes;
    return 1;
}

/* CloseHandle. */
EXPORT int fake_ntdll_close(HANDLE handle)
{
    struct slot *s = lookup(handle);

    if (!s)
        return 0;
    close(s->fd);
    s->fd = -1;
    return 1;
}

EXPORT unsigned fake_ntdll_live(void)
{
    unsigned n = 0;

    init();
    for (unsigned i = 0; i < SLOTS; i++)
        n += slots[i].fd >= 0;
    return n;
}

/* The next wine_server_fd_to_handle fails with `status`. */
EXPORT void fake_ntdll_fail_next(NTSTATUS status)
{
    fail_next = status;
}

/* A program's own Wine handle of `fd` (a file, no NT share), in the
 * test's calling convention whichever the server calls use. */
EXPORT NTSTATUS fake_ntdll_make_handle(int fd, unsigned access, HANDLE *handle)
{
    return wine_server_fd_to_handle(fd, access, 0, handle);
}
