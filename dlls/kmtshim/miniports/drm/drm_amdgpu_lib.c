/*
 * DRM miniport: loading libdrm_amdgpu (drm_amdgpu_lib.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define KDRM_AMDGPU_LIB_IMPL
#include "drm_amdgpu_lib.h"

#define KDRM_AMDGPU_DEFINE(f) __typeof__(f) *kdrm_p_##f;
KDRM_AMDGPU_FUNCS(KDRM_AMDGPU_DEFINE)
#undef KDRM_AMDGPU_DEFINE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[512];

static bool provided;

static void load(void)
{
    void *lib;
    const char *error;

    if (provided) {
        loaded = true;
        return;
    }
    /* never unloaded: the devices it keeps live as long as the process */
    lib = dlopen(KDRM_AMDGPU_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
        error = dlerror();
        snprintf(load_error, sizeof(load_error), "%s", error ? error : KDRM_AMDGPU_SONAME ": cannot load");
        return;
    }
#define KDRM_AMDGPU_LOAD(f)                                                                  \
    if (!(kdrm_p_##f = (__typeof__(f) *)dlsym(lib, #f))) {                                   \
        snprintf(load_error, sizeof(load_error), "%s has no %s", KDRM_AMDGPU_SONAME, #f);   \
        return;                                                                              \
    }
    KDRM_AMDGPU_FUNCS(KDRM_AMDGPU_LOAD)
#undef KDRM_AMDGPU_LOAD
    loaded = true;
}

bool kdrm_amdgpu_lib_load(const char **error)
{
    pthread_once(&once, load);
    *error = load_error;
    return loaded;
}

void kdrm_amdgpu_lib_provided(void)
{
    provided = true;
}
