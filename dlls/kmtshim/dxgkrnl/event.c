/*
 * Events: the Win32 event handles of CPU notifications, async CPU waits and
 * EnqueueCpuEvent signals.  Natively an "event" is an eventfd (its file
 * descriptor cast to HANDLE) and setting it writes 1; a host such as the
 * Wine half replaces both operations with KmtSetEventCallbacks().
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>

#include "kmtshim/kmtshim.h"
#include "sync.h"
#include "base/kmt_debug.h"

static NTSTATUS APIENTRY eventfd_validate(HANDLE event)
{
    intptr_t fd = (intptr_t)event;

    if (fd <= 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0)
        return STATUS_INVALID_HANDLE;
    return STATUS_SUCCESS;
}

static void APIENTRY eventfd_set(HANDLE event)
{
    uint64_t one = 1;

    if (write((int)(intptr_t)event, &one, sizeof(one)) != sizeof(one))
        WARN_(dxgk, "cannot signal event fd %d\n", (int)(intptr_t)event);
}

static PKMT_EVENT_VALIDATE validate_op = eventfd_validate;
static PKMT_EVENT_SET set_op = eventfd_set;

void KmtSetEventCallbacks(PKMT_EVENT_VALIDATE validate, PKMT_EVENT_SET set)
{
    __atomic_store_n(&validate_op, validate ? validate : eventfd_validate, __ATOMIC_RELEASE);
    __atomic_store_n(&set_op, set ? set : eventfd_set, __ATOMIC_RELEASE);
}

NTSTATUS dxgk_event_validate(HANDLE event)
{
    if (!event)
        return STATUS_INVALID_HANDLE;
    return __atomic_load_n(&validate_op, __ATOMIC_ACQUIRE)(event);
}

void dxgk_event_set(HANDLE event)
{
    TRACE_(dxgk, "event %p\n", event);
    __atomic_load_n(&set_op, __ATOMIC_ACQUIRE)(event);
}

bool dxgk_events_are_fds(void)
{
    return __atomic_load_n(&validate_op, __ATOMIC_ACQUIRE) == eventfd_validate;
}
