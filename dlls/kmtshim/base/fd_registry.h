/*
 * The file descriptors the library opened for itself (DRM device files,
 * memfds behind allocations and fences, eventfds), so that a child of
 * fork() can close them.  The child is a new process: it must not keep the
 * parent's GPU files open (they hold the parent's buffers and sync objects
 * alive, and every GEM handle on them is the parent's too), nor use them.
 *
 * A bitmap indexed by fd number, updated with atomic bit operations: no
 * lock, so a fork() at any moment leaves a consistent set.  Numbers past
 * KMT_FD_REGISTRY_MAX are not tracked (a forked child keeps those open).
 */
#ifndef KMTSHIM_FD_REGISTRY_H
#define KMTSHIM_FD_REGISTRY_H

#define KMT_FD_REGISTRY_MAX (1 << 20)    /* Linux's default hard RLIMIT_NOFILE */

/* After the library opened fd; a negative fd is ignored. */
void kmt_fd_track(int fd);
/* Forgets fd and closes it (the library closes its fds only this way). */
void kmt_fd_close(int fd);
/* In a fork() child only: closes every tracked fd (async-signal-safe);
 * returns how many. */
unsigned kmt_fd_close_all_tracked(void);

#endif /* KMTSHIM_FD_REGISTRY_H */
