/*
 * Scenarios that drive reference_umd and broken_umd through the kmtumd host
 * and check what the runtime's checker says.  The same code runs natively
 * (test_umd_host, Check, .so UMDs) and as a Windows program under Wine
 * (test_umd.exe, DLL UMDs): each harness supplies umd_check_at() and the
 * configuration (tests/umd/README in docs/umd.md):
 *
 *   UMDRIVERNAME DX9  -> reference_umd
 *   UMDRIVERNAME DX10 -> broken_umd
 *   UMDRIVERNAME DX11 -> a file that does not exist
 *   UMDRIVERNAME DX12 -> a module without an OpenAdapter export
 */
#ifndef KMTSHIM_UMD_SCENARIOS_H
#define KMTSHIM_UMD_SCENARIOS_H

#include "kmtumd.h"

#define UMD_REFERENCE KMTUMDVERSION_DX9
#define UMD_BROKEN KMTUMDVERSION_DX10
#define UMD_MISSING KMTUMDVERSION_DX11
#define UMD_NO_EXPORT KMTUMDVERSION_DX12

/* From the harness: records a check (a failure stops nothing). */
void umd_check_at(const char *file, int line, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define UMD_CHECK(cond, ...) umd_check_at(__FILE__, __LINE__, !!(cond), __VA_ARGS__)

/* The UMD file names the harness configured ("reference_umd.dll" / ".so"). */
extern const char *umd_reference_name;
extern const char *umd_broken_name;

struct umd_scenario {
    const char *name;
    void (*run)(void);
};

extern const struct umd_scenario umd_scenarios[];
extern const unsigned umd_scenario_count;

#endif /* KMTSHIM_UMD_SCENARIOS_H */
