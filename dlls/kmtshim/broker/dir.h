/*
 * The broker's directory: where its socket and lock file live, and the
 * checks that keep other users out of it.  Both the client and the
 * daemon use it.
 */
#ifndef KMTSHIM_BROKER_DIR_H
#define KMTSHIM_BROKER_DIR_H

#include <stddef.h>

/* $KMTSHIM_BROKER_DIR, else $XDG_RUNTIME_DIR/kmtshim, else
 * /tmp/kmtshim-<uid>.  0, -1 when it does not fit in len, or -2 when
 * $KMTSHIM_BROKER_DIR is not an absolute path. */
int kmt_broker_dir_path(char *buf, size_t len);

/* Creates the directory (0700) if it is missing, then checks that it is
 * a directory, not a link, owned by this uid, with no access for group or
 * others.  0, or -1 with a reason in why. */
int kmt_broker_dir_prepare(const char *dir, char *why, size_t why_len);

/* dir/name into buf: 0, or -1 when it does not fit (nor in a sun_path). */
int kmt_broker_dir_file(const char *dir, const char *name, char *buf, size_t len);

#endif /* KMTSHIM_BROKER_DIR_H */
