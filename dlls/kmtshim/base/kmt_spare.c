/*
 * Per-thread spares (kmt_spare.h): setting a thread up and its exit.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kmt_spare.h"

__thread __attribute__((tls_model("initial-exec"))) struct kmt_spares kmt_spares_self;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool usable;                      /* the key exists and spares are wanted */

static void drain(struct kmt_spares *s)
{
    for (int i = 0; i < KMT_SPARE_KINDS; i++) {
        free(s->slot[i].block);
        s->slot[i].block = NULL;
    }
}

static void thread_exit(void *arg)
{
    struct kmt_spares *s = arg;

    drain(s);
    s->state = -1;                       /* a destructor that frees later frees at once */
}

static void init(void)
{
#if KMT_SPARES_OFF
    usable = false;
#else
    usable = !pthread_key_create(&exit_key, thread_exit);
#endif
}

bool kmt_spare_setup(struct kmt_spares *s)
{
    if (s->state)
        return s->state > 0;
    pthread_once(&once, init);
    s->state = usable && !pthread_setspecific(exit_key, s) ? 1 : -1;
    return s->state > 0;
}

void kmt_spare_drain(void)
{
    drain(&kmt_spares_self);
}
