/*
 * kmtshim.dll: finding the Linux half and calling it.
 *
 * Wine pairs a builtin-marked DLL with the .so of the same name found next
 * to it (WINEDLLPATH tree: x86_64-windows/ and x86_64-unix/).  The DLL asks
 * ntdll for the .so's handle once, at load; each call then goes through
 * ntdll's __wine_unix_call_dispatcher (about 9 ns a round trip).  kmtshim.so
 * loads the core (kmtshim-core.so) itself; where that failed, its message
 * (the missing library, what to install) becomes one err: line, printed
 * without WINEDEBUG, and every call is STATUS_DLL_NOT_FOUND.
 */
#include "pe.h"

/* NtQueryVirtualMemory's information class for "the unix-call handle of
 * this builtin module" (Wine only). */
#define KMT_MEMORY_WINE_UNIX_FUNCS 1000

typedef NTSTATUS (WINAPI *kmt_unix_dispatcher)(UINT64 handle, unsigned int code, void *args);

NTSTATUS NTAPI NtQueryVirtualMemory(HANDLE process, const void *addr, int info_class,
                                    void *buffer, SIZE_T size, SIZE_T *returned);

static UINT64 unix_handle;
static kmt_unix_dispatcher unix_dispatcher;
static NTSTATUS unix_status = STATUS_DLL_NOT_FOUND;

/* Whether kmtshim.so could not load the core; says why on Wine's err
 * channel.  Runs once, at process attach. */
static BOOL core_missing(kmt_unix_dispatcher dispatcher)
{
    struct kmt_load_status_params params;
    NTSTATUS status = dispatcher(unix_handle, KMT_UNIX_LOAD_STATUS, &params);

    if (!status)
        return FALSE;
    params.message[sizeof(params.message) - 1] = 0;
    PE_ERR("kmtshim's Linux half cannot run: %s\n", params.message[0] ? params.message : "no reason given");
    unix_status = STATUS_DLL_NOT_FOUND;
    return TRUE;
}

static void init_unix_call(HINSTANCE module)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    kmt_unix_dispatcher *dispatcher_var;
    NTSTATUS status;

    /* ntdll exports the dispatcher as a variable holding the function */
    dispatcher_var = (kmt_unix_dispatcher *)(void *)GetProcAddress(ntdll, "__wine_unix_call_dispatcher");
    if (!dispatcher_var || !*dispatcher_var) {
        PE_ERR("not running under Wine: no __wine_unix_call_dispatcher\n");
        unix_status = STATUS_NOT_SUPPORTED;
        return;
    }
    status = NtQueryVirtualMemory(GetCurrentProcess(), module, KMT_MEMORY_WINE_UNIX_FUNCS,
                                  &unix_handle, sizeof(unix_handle), NULL);
    if (status) {
        /* the usual cause: kmtshim.so not beside kmtshim.dll in WINEDLLPATH,
         * or kmtshim.dll not marked builtin */
        PE_ERR("kmtshim.so not loaded (%s): is WINEDLLPATH set to kmtshim's directory?\n",
               kmt_pe_debugstr_status(status));
        unix_status = status;
        return;
    }
    if (core_missing(*dispatcher_var))
        return;
    unix_dispatcher = *dispatcher_var;
    unix_status = STATUS_SUCCESS;
    PE_TRACE("Linux half loaded, handle %#llx\n", (unsigned long long)unix_handle);
}

NTSTATUS kmt_unix_call(enum kmt_unix_code code, void *args)
{
    if (!unix_dispatcher)
        return unix_status;
    return unix_dispatcher(unix_handle, code, args);
}

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved);

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved)
{
    if (reason == DLL_PROCESS_ATTACH) {
        DisableThreadLibraryCalls(module);
        kmt_pe_debug_init();
        init_unix_call(module);
    } else if (reason == DLL_PROCESS_DETACH) {
        kmt_events_detach();
    }
    return TRUE;
}
