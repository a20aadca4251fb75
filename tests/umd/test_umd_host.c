/*
 * The UMD scenarios (umd_scenarios.c) natively: the host loads
 * reference_umd.so / broken_umd.so with dlopen, by the names a
 * configuration file gives QueryAdapterInfo(UMDRIVERNAME), on the software
 * adapter.  Each case runs in its own process and ends with no core object
 * left.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"
#include "umd_scenarios.h"

const char *umd_reference_name = "reference_umd.so";
const char *umd_broken_name = "broken_umd.so";

void umd_check_at(const char *file, int line, int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (ok)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ck_assert_msg(0, "%s:%d: %s", file, line, msg);
}

static char conf[64];

/* The four UMD names of umd_scenarios.h, as built in this tree; written
 * once, before the cases fork, and removed after the last. */
static void write_configuration(void)
{
    const char *build = getenv("KMTSHIM_TEST_BUILDDIR");
    FILE *f;
    int fd;

    if (!build)
        build = ".";
    snprintf(conf, sizeof(conf), "/tmp/kmt-umd-conf.XXXXXX");
    if ((fd = mkstemp(conf)) < 0 || !(f = fdopen(fd, "w"))) {
        perror("kmt-umd-conf");
        exit(EXIT_FAILURE);
    }
    fprintf(f, "[adapter miniport=soft]\n"
               "umd_dx9 = %s/dlls/kmtumd/.libs/reference_umd.so\n"
               "umd_dx10 = %s/dlls/kmtumd/.libs/broken_umd.so\n"
               "umd_dx11 = %s/dlls/kmtumd/.libs/no_such_umd.so\n"
               "umd_dx12 = %s/tests/miniports/.libs/record_noentry.so\n",
            build, build, build, build);
    if (fclose(f)) {
        perror("kmt-umd-conf");
        exit(EXIT_FAILURE);
    }
    setenv("KMTSHIM_CONFIG", conf, 1);
}

START_TEST(scenario)
{
    kmt_test_use_miniport("soft");
    umd_scenarios[_i].run();
    kmt_test_shutdown_no_leaks();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("umd_host");
    int rc;

    for (unsigned i = 0; i < umd_scenario_count; i++) {
        TCase *tc = tcase_create(umd_scenarios[i].name);

        tcase_set_timeout(tc, 30);
        tcase_add_loop_test(tc, scenario, (int)i, (int)i + 1);
        suite_add_tcase(s, tc);
    }
    write_configuration();
    rc = kmt_test_run(s);
    unlink(conf);
    return rc;
}
