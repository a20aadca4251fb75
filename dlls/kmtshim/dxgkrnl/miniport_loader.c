/*
 * Finding and loading miniports: the built-in ones, plugins by path, and the
 * KMTSHIM_MINIPORT selection.
 *
 *   unset             every built-in GPU miniport, then "soft" last (like
 *                     Windows' Basic Render Driver, always enumerated last)
 *   soft | drm        only that one
 *   a,b               those, in that order
 *   /path/x.so        a plugin exporting KmtMiniportDriverEntry
 *   name              a miniport registered with KmtRegisterMiniport()
 */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "dxgkrnl.h"
#include "base/kmt_debug.h"
#include "ddi.h"
#include "miniports/builtin.h"

#define MAX_BUILTINS 16

struct builtin {
    char name[32];
    PKMT_MINIPORT_DRIVER_ENTRY entry;
    bool auto_select;                    /* part of the default selection */
};

static struct builtin builtins[MAX_BUILTINS];
static unsigned builtin_count;
static bool builtins_seeded;

/* What a miniport's DriverEntry gets as its DRIVER_OBJECT. */
struct _KMT_DRIVER_OBJECT {
    struct dxgk_miniport *miniport;
    bool initialized;
};

static NTSTATUS register_locked(const char *name, PKMT_MINIPORT_DRIVER_ENTRY entry, bool auto_select)
{
    if (!name || !*name || strlen(name) >= sizeof(builtins[0].name) || !entry)
        return STATUS_INVALID_PARAMETER;
    for (unsigned i = 0; i < builtin_count; i++) {
        if (!strcmp(builtins[i].name, name)) {
            builtins[i].entry = entry;
            return STATUS_SUCCESS;
        }
    }
    if (builtin_count == MAX_BUILTINS)
        return STATUS_NO_MEMORY;
    strcpy(builtins[builtin_count].name, name);
    builtins[builtin_count].entry = entry;
    builtins[builtin_count].auto_select = auto_select;
    builtin_count++;
    return STATUS_SUCCESS;
}

static void seed_builtins(void)
{
    if (builtins_seeded)
        return;
    builtins_seeded = true;
#ifdef KMT_HAVE_DRM_MINIPORT
    register_locked("drm", KmtDrmMiniportDriverEntry, true);
#endif
    register_locked("soft", KmtSoftMiniportDriverEntry, true);
}

NTSTATUS dxgk_register_builtin(const char *name, PKMT_MINIPORT_DRIVER_ENTRY entry)
{
    NTSTATUS status;

    pthread_mutex_lock(&dxgk_process.lock);
    seed_builtins();
    status = register_locked(name, entry, false);
    pthread_mutex_unlock(&dxgk_process.lock);
    return status;
}

static NTSTATUS APIENTRY dxgk_initialize(KMT_DRIVER_OBJECT *driver, const DRIVER_INITIALIZATION_DATA *data)
{
    struct dxgk_miniport *mp;

    if (!driver || !data || driver->initialized)
        return STATUS_INVALID_PARAMETER;
    if (KMT_MINIPORT_INTERFACE_MAJOR(data->Version) != KMT_MINIPORT_INTERFACE_MAJOR(KMT_MINIPORT_INTERFACE_VERSION) ||
        data->Version > KMT_MINIPORT_INTERFACE_VERSION || data->Size > sizeof(*data) ||
        data->Size < offsetof(DRIVER_INITIALIZATION_DATA, Reserved))
        return STATUS_REVISION_MISMATCH;
    /* The DDIs the core cannot work without. */
    if (!dxgk_ddi_table_complete(data))
        return STATUS_INVALID_PARAMETER;
    mp = driver->miniport;
    memset(&mp->ddi, 0, sizeof(mp->ddi));
    memcpy(&mp->ddi, data, data->Size);
    if (data->DriverName && *data->DriverName) {
        strncpy(mp->name, data->DriverName, sizeof(mp->name) - 1);
        mp->name[sizeof(mp->name) - 1] = 0;
    }
    driver->initialized = true;
    return STATUS_SUCCESS;
}

static const KMT_DXGKRNL_EXPORTS dxgkrnl_exports = {
    .Size = sizeof(KMT_DXGKRNL_EXPORTS),
    .Version = KMT_MINIPORT_INTERFACE_VERSION,
    .DxgkInitialize = dxgk_initialize,
};

/* Takes dl_handle: a miniport that never got listed is closed here, a
 * listed one (even if it started no adapter) by dxgk_unload_miniports. */
static NTSTATUS load_one(const char *label, PKMT_MINIPORT_DRIVER_ENTRY entry, void *dl_handle)
{
    struct dxgk_miniport *mp = calloc(1, sizeof(*mp));
    KMT_DRIVER_OBJECT driver = { mp, false };
    NTSTATUS status;

    if (!mp) {
        if (dl_handle)
            dlclose(dl_handle);
        return STATUS_NO_MEMORY;
    }
    strncpy(mp->name, label, sizeof(mp->name) - 1);
    mp->dl_handle = dl_handle;
    status = entry(&driver, &dxgkrnl_exports);
    if (!status && !driver.initialized)
        status = STATUS_UNSUCCESSFUL;
    if (status) {
        WARN_(dxgk, "miniport %s failed to initialize: %s\n", label, kmt_debugstr_status(status));
        if (dl_handle)
            dlclose(dl_handle);
        free(mp);
        return status;
    }
    list_add_tail(&dxgk_process.miniports, &mp->entry);
    status = dxgk_start_adapters(mp);
    TRACE_(dxgk, "miniport %s loaded: %s\n", mp->name, kmt_debugstr_status(status));
    return status;
}

static NTSTATUS load_plugin(const char *path)
{
    PKMT_MINIPORT_DRIVER_ENTRY entry;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);

    if (!handle) {
        ERR_(dxgk, "cannot load miniport %s: %s\n", path, dlerror());
        return STATUS_DLL_NOT_FOUND;
    }
    entry = (PKMT_MINIPORT_DRIVER_ENTRY)dlsym(handle, KMT_MINIPORT_ENTRY_NAME);
    if (!entry) {
        ERR_(dxgk, "%s does not export %s\n", path, KMT_MINIPORT_ENTRY_NAME);
        dlclose(handle);
        return STATUS_PROCEDURE_NOT_FOUND;
    }
    return load_one(path, entry, handle);
}

static NTSTATUS load_named(const char *name)
{
    if (strchr(name, '/') || strstr(name, ".so"))
        return load_plugin(name);
    for (unsigned i = 0; i < builtin_count; i++)
        if (!strcmp(builtins[i].name, name))
            return load_one(name, builtins[i].entry, NULL);
    ERR_(dxgk, "unknown miniport \"%s\" in KMTSHIM_MINIPORT\n", name);
    return STATUS_OBJECT_NAME_NOT_FOUND;
}

/* Called with dxgk_process.lock held.  Success if one miniport started an
 * adapter; running out of memory anywhere stops the loading and is the
 * answer (process.c undoes it). */
NTSTATUS dxgk_load_miniports(void)
{
    const char *sel = getenv("KMTSHIM_MINIPORT");
    NTSTATUS status = STATUS_OBJECT_NAME_NOT_FOUND, s;

    seed_builtins();
    if (!sel || !*sel) {
        for (unsigned pass = 0; pass < 2; pass++)
            for (unsigned i = 0; i < builtin_count; i++) {
                bool is_soft = !strcmp(builtins[i].name, "soft");
                if (!builtins[i].auto_select || is_soft != (pass == 1))
                    continue;
                s = load_one(builtins[i].name, builtins[i].entry, NULL);
                if (dxgk_status_is_exhaustion(s))
                    return s;
                if (!s)
                    status = STATUS_SUCCESS;
            }
        return status;
    }

    char *copy = strdup(sel), *save = NULL;
    if (!copy)
        return STATUS_NO_MEMORY;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        s = load_named(tok);
        if (dxgk_status_is_exhaustion(s)) {
            status = s;
            break;
        }
        if (!s)
            status = STATUS_SUCCESS;
    }
    free(copy);
    return status;
}

void dxgk_unload_miniports(void)
{
    struct dxgk_miniport *mp, *next;

    LIST_FOR_EACH_ENTRY_SAFE(mp, next, &dxgk_process.miniports, struct dxgk_miniport, entry) {
        list_remove(&mp->entry);
        dxgk_ddi_unload(mp);
        if (mp->dl_handle)
            dlclose(mp->dl_handle);
        free(mp);
    }
}
