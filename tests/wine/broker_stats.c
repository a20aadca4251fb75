/*
 * The session broker's books for the Wine suite's programs, which cannot
 * call kmt_broker_query_stats: a Windows program starts this native
 * program (Wine runs a Linux executable that CreateProcess names) and
 * reads what it wrote.
 *
 *     broker_stats FILE
 *
 * writes "clients objects global_handles nt_shares names fds" (decimal,
 * one line) into FILE, relative to the working directory the Windows
 * program gave it, through a temporary name and rename() so a reader
 * never sees half a line; "error 0x<NTSTATUS>" when the broker cannot be
 * asked.  It is one of the broker's clients while it asks: it hangs up
 * before it writes, so the broker has seen it go by the time a caller
 * that waits for FILE asks again.
 */
#include <stdio.h>
#include <string.h>

#include "broker/broker.h"

int main(int argc, char **argv)
{
    struct kmt_broker_stats s;
    char tmp[4096];
    NTSTATUS status;
    FILE *f;

    if (argc != 2 || snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= (int)sizeof(tmp)) {
        fprintf(stderr, "usage: broker_stats FILE\n");
        return 2;
    }
    if (!(f = fopen(tmp, "w")))
        return 1;
    status = kmt_broker_query_stats(&s);
    kmt_broker_forget();
    if (status)
        fprintf(f, "error %#x\n", (unsigned)status);
    else
        fprintf(f, "%u %u %u %u %u %u\n", s.clients, s.objects, s.global_handles, s.nt_shares, s.names, s.fds);
    if (fclose(f) || rename(tmp, argv[1]))
        return 1;
    return status ? 1 : 0;
}
