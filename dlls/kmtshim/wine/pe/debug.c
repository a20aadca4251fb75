/*
 * Tracing of the PE half on Wine's "kmtshim" debug channel.
 *
 * Wine's ntdll parses WINEDEBUG and formats the "pid:tid:class:channel:func"
 * prefix; asking it (rather than parsing WINEDEBUG here) keeps the lines
 * identical to Wine's own and honours every WINEDEBUG form Wine accepts.
 * A channel is a flags byte (0xff: not looked up yet) and a name of at most
 * 15 bytes.  Outside Wine the functions are missing and nothing is printed.
 */
#include <stdarg.h>

#include "pe.h"

struct kmt_wine_channel {
    unsigned char flags;
    char name[15];
};

typedef unsigned char (__cdecl *get_flags_fn)(struct kmt_wine_channel *channel);
typedef int (__cdecl *header_fn)(int cls, struct kmt_wine_channel *channel, const char *func);
typedef int (__cdecl *output_fn)(const char *str);
typedef int (__cdecl *vsnprintf_fn)(char *buf, size_t size, const char *fmt, va_list ap);

static struct kmt_wine_channel channel = { 0xff, "kmtshim" };
static get_flags_fn dbg_get_flags;
static header_fn dbg_header;
static output_fn dbg_output;
static vsnprintf_fn dbg_vsnprintf;

void kmt_pe_debug_init(void)
{
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

    if (!ntdll)
        return;
    dbg_get_flags = (get_flags_fn)(void *)GetProcAddress(ntdll, "__wine_dbg_get_channel_flags");
    dbg_header = (header_fn)(void *)GetProcAddress(ntdll, "__wine_dbg_header");
    dbg_output = (output_fn)(void *)GetProcAddress(ntdll, "__wine_dbg_output");
    dbg_vsnprintf = (vsnprintf_fn)(void *)GetProcAddress(ntdll, "_vsnprintf");
    if (!dbg_header || !dbg_output || !dbg_vsnprintf)
        dbg_get_flags = NULL;
}

BOOL kmt_pe_debug_on(enum kmt_pe_class cls)
{
    return dbg_get_flags && (dbg_get_flags(&channel) & (1u << cls));
}

void kmt_pe_log(enum kmt_pe_class cls, const char *func, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!dbg_get_flags || dbg_header(cls, &channel, func) == -1)
        return;
    va_start(ap, fmt);
    dbg_vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    line[sizeof(line) - 1] = 0;
    dbg_output(line);
}

const char *kmt_pe_debugstr_status(NTSTATUS status)
{
    switch (status) {
#define S(x) case x: return #x
    S(STATUS_SUCCESS);
    S(STATUS_INVALID_HANDLE);
    S(STATUS_INVALID_PARAMETER);
    S(STATUS_NOT_SUPPORTED);
    S(STATUS_NO_MEMORY);
    S(STATUS_DLL_NOT_FOUND);
    S(STATUS_PROCEDURE_NOT_FOUND);
#undef S
    default: return "an error";
    }
}
