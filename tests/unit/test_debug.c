/*
 * The debug channels' quiet flag (base/kmt_debug.h): while no channel of
 * either half traces, one load stands for every hot path's trace check.
 * Each channel traced alone, by either variable, clears it, as does the
 * umbrella name; the defaults and "-all" set it.
 */
#include "test_util.h"
#include "base/kmt_debug.h"

/* The core's channels (the unix half's, kmtshim, is not linked here). */
static struct kmt_debug_channel *const core_channels[] = {
    &kmt_dbch_d3dkmt, &kmt_dbch_dxgk, &kmt_dbch_hmgr, &kmt_dbch_softgpu, &kmt_dbch_drm, &kmt_dbch_broker,
};
#define CORE_CHANNELS (sizeof(core_channels) / sizeof(core_channels[0]))

/* Sets one variable to spec (NULL: neither set) and has the channels
 * re-read them. */
static void settings(const char *variable, const char *spec)
{
    unsetenv("WINEDEBUG");
    unsetenv("KMTSHIM_DEBUG");
    if (spec)
        setenv(variable, spec, 1);
    kmt_debug_reset();
}

/* Whether the channels now trace nothing, as the hot paths see it: the
 * first check after a reset parses a channel, which settles the flag. */
static bool quiet_after_a_check(void)
{
    (void)kmt_debug_on(&kmt_dbch_d3dkmt, KMT_DBG_ERR);
    return __atomic_load_n(&kmt_debug_quiet, __ATOMIC_RELAXED);
}

START_TEST(each_channel_traced_alone_is_traced)
{
    static const char *const variables[] = { "WINEDEBUG", "KMTSHIM_DEBUG" };
    char spec[64];

    for (unsigned v = 0; v < 2; v++)
        for (unsigned i = 0; i < CORE_CHANNELS; i++) {
            snprintf(spec, sizeof(spec), "+%s", core_channels[i]->name);
            settings(variables[v], spec);
            ck_assert_msg(!quiet_after_a_check(), "%s=%s left the quiet flag set", variables[v], spec);
            ck_assert_msg(kmt_trace_on(core_channels[i]), "%s=%s: %s does not trace", variables[v], spec,
                          core_channels[i]->name);
            for (unsigned j = 0; j < CORE_CHANNELS; j++)
                if (j != i)
                    ck_assert_msg(!kmt_trace_on(core_channels[j]), "%s=%s: %s traces too", variables[v], spec,
                                  core_channels[j]->name);
        }
    settings(NULL, NULL);
}
END_TEST

/* The unix half's channel, which the core does not link, and the
 * umbrella: the core's checks must not take them for silence. */
START_TEST(the_unix_half_and_umbrella_clear_quiet)
{
    settings("WINEDEBUG", "trace+kmtshim");
    ck_assert(!quiet_after_a_check());
    for (unsigned i = 0; i < CORE_CHANNELS; i++)
        ck_assert(kmt_trace_on(core_channels[i]));
    settings("KMTSHIM_DEBUG", "+all");
    ck_assert(!quiet_after_a_check());
    settings(NULL, NULL);
}
END_TEST

START_TEST(nothing_traced_sets_quiet)
{
    settings(NULL, NULL);
    ck_assert(quiet_after_a_check());
    settings("WINEDEBUG", "-all");
    ck_assert(quiet_after_a_check());
    settings("KMTSHIM_DEBUG", "warn+dxgk,+hmgr,-hmgr");
    ck_assert(quiet_after_a_check());
    for (unsigned i = 0; i < CORE_CHANNELS; i++)
        ck_assert(!kmt_trace_on(core_channels[i]));
    ck_assert(kmt_debug_on(&kmt_dbch_dxgk, KMT_DBG_WARN));
    settings(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("debug");
    TCase *tc = tcase_create("quiet");

    tcase_add_test(tc, each_channel_traced_alone_is_traced);
    tcase_add_test(tc, the_unix_half_and_umbrella_clear_quiet);
    tcase_add_test(tc, nothing_traced_sets_quiet);
    suite_add_tcase(s, tc);
    return kmt_test_run(s);
}
