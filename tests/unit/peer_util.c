/*
 * Peer programs of multi-process tests (peer_util.h).
 */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peer_util.h"

extern char **environ;

void kmt_test_peer_start(struct kmt_test_peer *p, const char *program, const int *inherit,
                         unsigned inherit_count, const char *const *args)
{
    const char *builddir = getenv("KMTSHIM_TEST_BUILDDIR");
    char path[PATH_MAX];
    const char *argv[32];
    posix_spawn_file_actions_t fa;
    int out[2], in[2];
    unsigned n = 0;

    ck_assert_ptr_nonnull(builddir);
    snprintf(path, sizeof(path), "%s/tests/unit/%s", builddir, program);
    argv[n++] = path;
    while (*args && n < 31)
        argv[n++] = *args++;
    argv[n] = NULL;
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    for (unsigned i = 0; i < inherit_count; i++)
        posix_spawn_file_actions_adddup2(&fa, inherit[i], 10 + i);
    ck_assert_int_eq(posix_spawn(&p->pid, path, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(in[0]);
    p->out = fdopen(out[0], "r");
    p->in = in[1];
}

char *kmt_test_peer_line(struct kmt_test_peer *p, const char *prefix)
{
    static char line[256];

    ck_assert_msg(fgets(line, sizeof(line), p->out), "the peer ended before printing \"%s\"", prefix);
    line[strcspn(line, "\n")] = 0;
    ck_assert_msg(!strncmp(line, prefix, strlen(prefix)), "peer printed \"%s\", expected \"%s...\"", line,
                  prefix);
    return line + strlen(prefix);
}

int kmt_test_peer_end(struct kmt_test_peer *p)
{
    int status;

    close(p->in);
    ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
    fclose(p->out);
    return status;
}

void kmt_peer_say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

D3DKMT_HANDLE kmt_peer_open_device(void)
{
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    D3DKMT_OPENADAPTERFROMLUID o = { 0 };
    D3DKMT_CREATEDEVICE d = { 0 };

    if (D3DKMTEnumAdapters2(&e) || !e.NumAdapters)
        return 0;
    o.AdapterLuid = info[0].AdapterLuid;
    if (D3DKMTOpenAdapterFromLuid(&o))
        return 0;
    d.hAdapter = o.hAdapter;
    return D3DKMTCreateDevice(&d) ? 0 : d.hDevice;
}
