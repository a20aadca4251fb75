/*
 * Connecting to the broker, starting it on demand (spawn.h).
 *
 * The start runs under an flock on the directory's lock file: the first
 * process to find no listener starts the broker while the others wait on
 * the lock, then find it listening.  The broker binds and listens before
 * it detaches (its first process exits once the socket is ready), so the
 * starter waits for that exit, then connects.  The broker runs in its own
 * session (POSIX_SPAWN_SETSID, then its own fork): it is never the
 * program's child nor in its process group, so a shell's Ctrl-C or a
 * program's waitpid(-1) does not reach it.  An exiting broker takes the
 * same lock to unlink its socket, so it never removes a successor's.
 *
 * The fds made here (the socket being connected, the start lock) are
 * recorded as they are made, with fork() held off meanwhile, so that a
 * child closes them (forget_in_child): a child keeping the parent's lock
 * would hold it after the parent let go, and every start in the session
 * would wait for the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/kmt_debug.h"
#include "broker/dir.h"
#include "broker/protocol.h"
#include "broker/spawn.h"

#ifndef KMT_BROKER_PATH
# define KMT_BROKER_PATH "/usr/local/libexec/kmtshim/kmtshim-broker"
#endif

extern char **environ;

enum { PENDING_SOCK, PENDING_LOCK, PENDING_COUNT };

static pthread_mutex_t fork_guard = PTHREAD_MUTEX_INITIALIZER;
static int pending[PENDING_COUNT] = { -1, -1 };  /* under fork_guard */

static void hold_forks(void)
{
    pthread_mutex_lock(&fork_guard);
}

static void let_forks(void)
{
    pthread_mutex_unlock(&fork_guard);
}

/* In the child: what a connect of the parent had open is the parent's. */
static void forget_in_child(void)
{
    for (int i = 0; i < PENDING_COUNT; i++) {
        if (pending[i] >= 0)
            close(pending[i]);
        pending[i] = -1;
    }
    let_forks();                         /* this thread took it to fork */
}

__attribute__((constructor)) static void guard_forks(void)
{
    pthread_atfork(hold_forks, let_forks, forget_in_child);
}

static int new_socket(void)
{
    int fd;

    hold_forks();
    fd = pending[PENDING_SOCK] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    let_forks();
    return fd;
}

static int open_lock(const char *path)
{
    int fd;

    hold_forks();
    fd = pending[PENDING_LOCK] = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    let_forks();
    return fd;
}

/* Closes a pending fd, keeping errno. */
static void close_pending(int slot)
{
    int err = errno;

    hold_forks();
    if (pending[slot] >= 0)
        close(pending[slot]);
    pending[slot] = -1;
    let_forks();
    errno = err;
}

void kmt_broker_connect_done(int sock)
{
    hold_forks();
    if (pending[PENDING_SOCK] == sock)
        pending[PENDING_SOCK] = -1;
    let_forks();
}

uint64_t kmt_broker_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(unsigned ms)
{
    struct timespec ts = { 0, (long)ms * 1000000 };

    nanosleep(&ts, NULL);
}

static bool out_of_fds(int err)
{
    return err == EMFILE || err == ENFILE;
}

/* 1: connected; 0: nothing listens; -1: the socket was refused for
 * another reason (errno). */
static int try_connect(const char *path, uint64_t deadline_ms, int *sock_out)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int sock;

    strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
    if ((sock = new_socket()) < 0)
        return -1;
    for (;;) {
        if (!connect(sock, (struct sockaddr *)&addr, sizeof(addr))) {
            *sock_out = sock;
            return 1;
        }
        if (errno == EINTR)
            continue;
        /* a full backlog: the broker is busy (or stopped); wait for room */
        if (errno == EAGAIN && kmt_broker_now_ms() < deadline_ms) {
            nap_ms(1);
            continue;
        }
        break;
    }
    close_pending(PENDING_SOCK);
    return errno == ECONNREFUSED || errno == ENOENT ? 0 : -1;
}

/* Starts the broker; 0 once its first process exited successfully (it
 * listens then), or when the program reaped it first. */
static int start_broker(const char *dir, uint64_t deadline_ms)
{
    const char *path = getenv("KMTSHIM_BROKER");
    char *argv[] = { NULL, "--dir", (char *)dir, NULL };
    char log[sizeof(((struct sockaddr_un *)0)->sun_path)];
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none, all;
    pid_t pid;
    int err, status;

    if (!path || !*path)
        path = KMT_BROKER_PATH;
    argv[0] = (char *)path;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    /* The broker outlives the program: keeping the program's stderr would
     * hold its pipe open (`$(prog 2>&1)` would wait for the broker).  Its
     * messages go to broker.log in its directory, or to the program's
     * stderr while the broker channel is traced. */
    if (!kmt_debug_on(&kmt_dbch_broker, KMT_DBG_TRACE)) {
        if (kmt_broker_dir_file(dir, KMT_BROKER_LOG_NAME, log, sizeof(log)))
            strcpy(log, "/dev/null");
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    }
    err = posix_spawn(&pid, path, &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (err) {
        ERR_(broker, "cannot start %s: %s (set KMTSHIM_BROKER to its path)\n", path, strerror(err));
        return -1;
    }
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid) {
            if (WIFEXITED(status) && !WEXITSTATUS(status))
                return 0;
            ERR_(broker, "%s failed to start (status 0x%x)\n", path, status);
            return -1;
        }
        if (r < 0 && errno != EINTR)
            return 0;                    /* reaped by the program: the connect loop decides */
        if (kmt_broker_now_ms() >= deadline_ms) {
            ERR_(broker, "%s did not start in time\n", path);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        nap_ms(1);
    }
}

/* Takes the start lock, giving up at the deadline. */
static int lock_start(const char *dir, uint64_t deadline_ms)
{
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int fd;

    if (kmt_broker_dir_file(dir, KMT_BROKER_LOCK_NAME, path, sizeof(path)))
        return -1;
    fd = open_lock(path);
    if (fd < 0) {
        int err = errno;

        ERR_(broker, "cannot open %s: %s\n", path, strerror(err));
        errno = err;
        return -1;
    }
    while (flock(fd, LOCK_EX | LOCK_NB)) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || kmt_broker_now_ms() >= deadline_ms) {
            ERR_(broker, "cannot lock %s: %s\n", path, errno == EWOULDBLOCK ? "timed out" : strerror(errno));
            close_pending(PENDING_LOCK);
            errno = ETIMEDOUT;
            return -1;
        }
        nap_ms(1);
    }
    return fd;
}

int kmt_broker_connect(const char *dir, uint64_t deadline_ms, NTSTATUS *status)
{
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)], why[512];
    int sock = -1, lock, r;

    if (kmt_broker_dir_prepare(dir, why, sizeof(why))) {
        ERR_(broker, "refusing the broker directory: %s\n", why);
        *status = STATUS_ACCESS_DENIED;
        return -1;
    }
    if (kmt_broker_dir_file(dir, KMT_BROKER_SOCKET_NAME, path, sizeof(path))) {
        ERR_(broker, "broker directory path too long: %s\n", dir);
        *status = STATUS_NAME_TOO_LONG;
        return -1;
    }
    if ((r = try_connect(path, deadline_ms, &sock)) > 0)
        return sock;
    if (r < 0)
        goto refused;
    if ((lock = lock_start(dir, deadline_ms)) < 0) {
        *status = out_of_fds(errno) ? STATUS_INSUFFICIENT_RESOURCES : STATUS_IO_TIMEOUT;
        return -1;
    }
    r = try_connect(path, deadline_ms, &sock);
    if (!r && !start_broker(dir, deadline_ms)) {
        /* listening now, unless the program reaped the starter early */
        while (!(r = try_connect(path, deadline_ms, &sock)) && kmt_broker_now_ms() < deadline_ms)
            nap_ms(1);
    }
    close_pending(PENDING_LOCK);
    if (r > 0)
        return sock;
    if (r < 0)
        goto refused;
    *status = STATUS_PORT_DISCONNECTED;
    return -1;

refused:
    r = errno;
    ERR_(broker, "cannot connect to %s: %s\n", path, strerror(r));
    *status = r == EACCES || r == EPERM ? STATUS_ACCESS_DENIED
            : out_of_fds(r)             ? STATUS_INSUFFICIENT_RESOURCES
                                        : STATUS_PORT_DISCONNECTED;
    return -1;
}
