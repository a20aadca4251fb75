/*
 * kmtshim.so: the object Wine loads for kmtshim.dll, a loader of the core.
 *
 * The core (kmtshim-core.so, beside this file) needs libdrm.  Were it this
 * object's own dependency, its absence would make Wine's dlopen() fail and
 * the program would see only STATUS_DLL_NOT_FOUND.  (libdrm_amdgpu is no
 * dependency: the DRM miniport loads it for amdgpu adapters only.)  This object needs nothing but libc: it always
 * loads, loads the core itself and keeps dlerror()'s message, which the PE
 * half asks for once (KMT_UNIX_LOAD_STATUS) and prints as an err: line.
 *
 * The core's tables are copied into __wine_unix_call_funcs and, for a
 * 32-bit kmtshim.dll in a new-WoW64 Wine, __wine_unix_call_wow64_funcs
 * (unix/wow64.c) before Wine looks the symbols up (constructors run inside
 * dlopen), so each call goes straight to the core's entry, as if the core
 * were the object Wine loaded.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kmtshim/kmt_ntstatus.h"
#include "unixlib.h"

#define KMT_CORE_NAME "kmtshim-core.so"

typedef NTSTATUS (*kmt_unix_entry)(void *args);

extern kmt_unix_entry __wine_unix_call_funcs[];
__attribute__((visibility("default"))) kmt_unix_entry __wine_unix_call_funcs[KMT_UNIX_CALL_COUNT];
#ifdef __LP64__
extern kmt_unix_entry __wine_unix_call_wow64_funcs[];
__attribute__((visibility("default"))) kmt_unix_entry __wine_unix_call_wow64_funcs[KMT_UNIX_CALL_COUNT];
#define KMT_WOW64 1
#else
static kmt_unix_entry __wine_unix_call_wow64_funcs[KMT_UNIX_CALL_COUNT];     /* no new WoW64 for a 32-bit half */
#define KMT_WOW64 0
#endif

static char load_error[KMT_LOAD_MESSAGE_SIZE];

/* The libraries the core links, with the Debian package that has each. */
static const struct {
    const char *soname;
    const char *package;
} core_libs[] = {
    { "libdrm.so.2", "libdrm2" },
};

static NTSTATUS core_missing(void *args)
{
    return STATUS_DLL_NOT_FOUND;
}

static NTSTATUS load_status(void *args)
{
    struct kmt_load_status_params *params = args;

    if (!params)
        return STATUS_INVALID_PARAMETER;
    memcpy(params->message, load_error, sizeof(params->message));
    return load_error[0] ? STATUS_DLL_NOT_FOUND : STATUS_SUCCESS;
}

/* dlerror()'s message, then what would cure it. */
static void set_load_error(const char *error)
{
    const char *hint = "install the package that provides it";

    if (strstr(error, KMT_CORE_NAME))
        hint = KMT_CORE_NAME " belongs beside kmtshim.so: reinstall kmtshim";
    for (size_t i = 0; i < sizeof(core_libs) / sizeof(core_libs[0]); i++)
        if (strstr(error, core_libs[i].soname)) {
            snprintf(load_error, sizeof(load_error), "%s: install %s (Debian, Ubuntu) or your system's %s",
                     error, core_libs[i].package, core_libs[i].soname);
            return;
        }
    snprintf(load_error, sizeof(load_error), "%s: %s", error, hint);
}

/* The core's path: this object's directory plus KMT_CORE_NAME. */
static int core_path(char *path, size_t size)
{
    Dl_info info;
    const char *slash;

    if (!dladdr((void *)__wine_unix_call_funcs, &info) || !info.dli_fname ||
        !(slash = strrchr(info.dli_fname, '/')))
        return snprintf(path, size, "%s", KMT_CORE_NAME) < (int)size;
    return snprintf(path, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, KMT_CORE_NAME) <
           (int)size;
}

__attribute__((constructor)) static void load_core(void)
{
    const kmt_unix_entry *funcs, *wow64_funcs;
    const uint32_t *count;
    char path[4096];
    void *core;

    for (unsigned i = 0; i < KMT_UNIX_LOAD_STATUS; i++)
        __wine_unix_call_funcs[i] = __wine_unix_call_wow64_funcs[i] = core_missing;
    __wine_unix_call_funcs[KMT_UNIX_LOAD_STATUS] = __wine_unix_call_wow64_funcs[KMT_UNIX_LOAD_STATUS] = load_status;

    if (!core_path(path, sizeof(path))) {
        set_load_error("the path of " KMT_CORE_NAME " is too long");
        return;
    }
    /* the core's threads run its code until the process ends: never unloaded */
    if (!(core = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))) {
        const char *error = dlerror();

        set_load_error(error ? error : path);
        return;
    }
    funcs = dlsym(core, "kmt_unix_core_funcs");
    wow64_funcs = KMT_WOW64 ? dlsym(core, "kmt_unix_core_wow64_funcs") : funcs;
    count = dlsym(core, "kmt_unix_core_count");
    if (!funcs || !wow64_funcs || !count || *count != KMT_UNIX_LOAD_STATUS) {
        snprintf(load_error, sizeof(load_error), "%s does not match kmtshim.so (%u unix calls, %u expected): "
                 "reinstall kmtshim", path, count ? (unsigned)*count : 0u, (unsigned)KMT_UNIX_LOAD_STATUS);
        return;
    }
    memcpy(__wine_unix_call_funcs, funcs, KMT_UNIX_LOAD_STATUS * sizeof(*funcs));
    memcpy(__wine_unix_call_wow64_funcs, wow64_funcs, KMT_UNIX_LOAD_STATUS * sizeof(*wow64_funcs));
}
