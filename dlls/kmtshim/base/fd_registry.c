/*
 * The library's own file descriptors (fd_registry.h).
 */
#include <stdatomic.h>
#include <unistd.h>

#include "fd_registry.h"

#define WORD_BITS 64u

static _Atomic unsigned long long tracked[KMT_FD_REGISTRY_MAX / WORD_BITS];

void kmt_fd_track(int fd)
{
    if (fd >= 0 && fd < KMT_FD_REGISTRY_MAX)
        atomic_fetch_or(&tracked[fd / WORD_BITS], 1ull << (fd % WORD_BITS));
}

void kmt_fd_close(int fd)
{
    if (fd < 0)
        return;
    /* forgotten first: a fork() between the two leaves the child an fd it
     * does not close, never one that is no longer ours */
    if (fd < KMT_FD_REGISTRY_MAX)
        atomic_fetch_and(&tracked[fd / WORD_BITS], ~(1ull << (fd % WORD_BITS)));
    close(fd);
}

unsigned kmt_fd_close_all_tracked(void)
{
    unsigned closed = 0;

    for (unsigned w = 0; w < KMT_FD_REGISTRY_MAX / WORD_BITS; w++) {
        unsigned long long bits = atomic_exchange(&tracked[w], 0);

        while (bits) {
            unsigned b = (unsigned)__builtin_ctzll(bits);

            bits &= bits - 1;
            close((int)(w * WORD_BITS + b));
            closed++;
        }
    }
    return closed;
}
