/*
 * test_umd.exe: the UMD scenarios (umd_scenarios.c) as a Windows program
 * under Wine.  The host loads reference_umd.dll / broken_umd.dll with
 * LoadLibraryW by the names QueryAdapterInfo(UMDRIVERNAME) gives (the
 * runner's configuration file), and reaches the kernel through kmtshim.dll.
 * Output in Wine's test style (tests/wine/kmtwtest.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "kmtwtest.h"
#include "umd_scenarios.h"

const char *umd_reference_name = "reference_umd.dll";
const char *umd_broken_name = "broken_umd.dll";

void umd_check_at(const char *file, int line, int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    kmtw_at(file, line);
    kmtw_ok(ok, "%s\n", msg);
}

/* Every scenario leaves the UMD DLLs unloaded (FreeLibrary per host). */
static void modules_unloaded(void)
{
    ok(!GetModuleHandleW(L"reference_umd.dll"), "reference_umd.dll is still loaded\n");
    ok(!GetModuleHandleW(L"broken_umd.dll"), "broken_umd.dll is still loaded\n");
}

int main(int argc, char **argv)
{
    struct kmtw_test tests[32];
    unsigned n = 0;

    for (unsigned i = 0; i < umd_scenario_count && n < ARRAY_SIZE(tests) - 1; i++) {
        tests[n].name = umd_scenarios[i].name;
        tests[n++].func = umd_scenarios[i].run;
    }
    tests[n].name = "modules_unloaded";
    tests[n++].func = modules_unloaded;
    return kmtw_run("test_umd", tests, n, argc, argv);
}
