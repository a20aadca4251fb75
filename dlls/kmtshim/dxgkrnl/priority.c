/*
 * The process's GPU scheduling priority class
 * (D3DKMTSet/GetProcessSchedulingPriorityClass).
 *
 * Stored and reported, and deliberately applied to nothing: on Windows the
 * class weighs this process's contexts against other processes' on the
 * one GPU scheduler of the machine.  kmtshim's scheduler (vidsch.c) is
 * per process and only ever holds this process's contexts, so there is no
 * other process to weigh them against; and renicing the scheduler thread
 * would change CPU scheduling (which Windows' class does not) and, for the
 * higher classes, need CAP_SYS_NICE where Windows needs no privilege.
 *
 * Windows' rules that do apply: the class is per process (NORMAL until
 * set), REALTIME needs a privilege (here: root or CAP_SYS_NICE, Linux's
 * equivalent of SeIncreaseBasePriorityPrivilege) else
 * STATUS_PRIVILEGE_NOT_HELD, a value past REALTIME is
 * STATUS_INVALID_PARAMETER.  The process is NULL or the current-process
 * pseudo-handle (HANDLE)-1: kmtshim knows no other process, and any other
 * handle is STATUS_INVALID_HANDLE.  (Under Wine the PE half turns a real
 * handle of the calling process into NULL first.)
 */
#include <linux/capability.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dxgkrnl.h"

static atomic_int priority_class = D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL;

static bool is_current_process(HANDLE process)
{
    return !process || process == (HANDLE)(intptr_t)-1;
}

static bool may_use_realtime(void)
{
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

    if (geteuid() == 0)
        return true;
    if (syscall(SYS_capget, &header, data))
        return false;
    return data[CAP_TO_INDEX(CAP_SYS_NICE)].effective & CAP_TO_MASK(CAP_SYS_NICE);
}

NTSTATUS dxgk_set_priority_class(HANDLE process, D3DKMT_SCHEDULINGPRIORITYCLASS priority)
{
    if (!is_current_process(process))
        return STATUS_INVALID_HANDLE;
    if ((unsigned)priority > D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME)
        return STATUS_INVALID_PARAMETER;
    if (priority == D3DKMT_SCHEDULINGPRIORITYCLASS_REALTIME && !may_use_realtime())
        return STATUS_PRIVILEGE_NOT_HELD;
    atomic_store(&priority_class, priority);
    return STATUS_SUCCESS;
}

NTSTATUS dxgk_get_priority_class(HANDLE process, D3DKMT_SCHEDULINGPRIORITYCLASS *priority)
{
    if (!is_current_process(process))
        return STATUS_INVALID_HANDLE;
    *priority = (D3DKMT_SCHEDULINGPRIORITYCLASS)atomic_load(&priority_class);
    return STATUS_SUCCESS;
}

void dxgk_priority_forget(void)
{
    atomic_store(&priority_class, D3DKMT_SCHEDULINGPRIORITYCLASS_NORMAL);
}
