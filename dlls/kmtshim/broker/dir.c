/*
 * The broker's directory (dir.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/dir.h"

int kmt_broker_dir_path(char *buf, size_t len)
{
    const char *env = getenv("KMTSHIM_BROKER_DIR");
    int n;

    if (env && *env) {
        /* the broker runs in "/": a relative path would name another place */
        if (*env != '/')
            return -2;
        n = snprintf(buf, len, "%s", env);
    }
    else if ((env = getenv("XDG_RUNTIME_DIR")) && *env)
        n = snprintf(buf, len, "%s/kmtshim", env);
    else
        n = snprintf(buf, len, "/tmp/kmtshim-%u", (unsigned)geteuid());
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int kmt_broker_dir_prepare(const char *dir, char *why, size_t why_len)
{
    struct stat st;

    if (mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(why, why_len, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st)) {
        snprintf(why, why_len, "cannot stat %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "%s is not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, why_len, "%s belongs to uid %u, not to this user (%u)", dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(why, why_len, "%s is open to group or others (mode %03o); it must be 0700", dir,
                 (unsigned)(st.st_mode & 0777));
        return -1;
    }
    return 0;
}

int kmt_broker_dir_file(const char *dir, const char *name, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return -1;
    return 0;
}
