/*
 * DRM miniport: libdrm_amdgpu, loaded when the first amdgpu adapter starts.
 *
 * Only amdgpu adapters need it, so it is no dependency of the library: a
 * machine without it (a Wine root, a minimal system) keeps the software
 * adapter and every other GPU, and an amdgpu adapter that cannot start
 * says which library is missing.  family_amdgpu.c calls the functions by
 * their own names, which this header turns into the loaded pointers.
 */
#ifndef KMTSHIM_DRM_AMDGPU_LIB_H
#define KMTSHIM_DRM_AMDGPU_LIB_H

#include <stdbool.h>
#include <amdgpu.h>

#define KDRM_AMDGPU_SONAME "libdrm_amdgpu.so.1"

#define KDRM_AMDGPU_FUNCS(X) \
    X(amdgpu_bo_alloc) X(amdgpu_bo_cpu_map) X(amdgpu_bo_cpu_unmap) X(amdgpu_bo_export) \
    X(amdgpu_bo_free) X(amdgpu_bo_import) X(amdgpu_bo_va_op_raw) X(amdgpu_bo_wait_for_idle) \
    X(amdgpu_create_bo_from_user_mem) X(amdgpu_device_deinitialize) X(amdgpu_device_get_fd) \
    X(amdgpu_device_initialize) X(amdgpu_query_gpu_info) X(amdgpu_query_heap_info) \
    X(amdgpu_query_info) X(amdgpu_va_range_alloc) X(amdgpu_va_range_free)

#define KDRM_AMDGPU_DECLARE(f) extern __typeof__(f) *kdrm_p_##f;
KDRM_AMDGPU_FUNCS(KDRM_AMDGPU_DECLARE)
#undef KDRM_AMDGPU_DECLARE

/* Loads the library once per process; false, with the dynamic loader's
 * message in *error, where it or one of its functions is missing. */
bool kdrm_amdgpu_lib_load(const char **error);
/* The pointers are set already (a test's fake library): nothing to load.
 * Before the first load. */
void kdrm_amdgpu_lib_provided(void);

#ifndef KDRM_AMDGPU_LIB_IMPL
#define amdgpu_bo_alloc (*kdrm_p_amdgpu_bo_alloc)
#define amdgpu_bo_cpu_map (*kdrm_p_amdgpu_bo_cpu_map)
#define amdgpu_bo_cpu_unmap (*kdrm_p_amdgpu_bo_cpu_unmap)
#define amdgpu_bo_export (*kdrm_p_amdgpu_bo_export)
#define amdgpu_bo_free (*kdrm_p_amdgpu_bo_free)
#define amdgpu_bo_import (*kdrm_p_amdgpu_bo_import)
#define amdgpu_bo_va_op_raw (*kdrm_p_amdgpu_bo_va_op_raw)
#define amdgpu_bo_wait_for_idle (*kdrm_p_amdgpu_bo_wait_for_idle)
#define amdgpu_create_bo_from_user_mem (*kdrm_p_amdgpu_create_bo_from_user_mem)
#define amdgpu_device_deinitialize (*kdrm_p_amdgpu_device_deinitialize)
#define amdgpu_device_get_fd (*kdrm_p_amdgpu_device_get_fd)
#define amdgpu_device_initialize (*kdrm_p_amdgpu_device_initialize)
#define amdgpu_query_gpu_info (*kdrm_p_amdgpu_query_gpu_info)
#define amdgpu_query_heap_info (*kdrm_p_amdgpu_query_heap_info)
#define amdgpu_query_info (*kdrm_p_amdgpu_query_info)
#define amdgpu_va_range_alloc (*kdrm_p_amdgpu_va_range_alloc)
#define amdgpu_va_range_free (*kdrm_p_amdgpu_va_range_free)
#endif

#endif /* KMTSHIM_DRM_AMDGPU_LIB_H */
