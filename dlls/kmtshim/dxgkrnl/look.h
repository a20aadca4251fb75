/*
 * Looking before sleeping: a blocking wait whose answer comes from a
 * process running on another CPU polls for it a moment before it sleeps
 * in the kernel (shared fences: wait.c; keyed mutexes:
 * keyed_mutex_page.c).  A hand-over that lands during the look costs
 * neither side a system call, nor the wake-up of a halted CPU.  When the
 * answer would come from this CPU, nothing can arrive while we poll: no
 * look at all.
 *
 * The look lasts about twice what the last wait took in all (look and
 * sleep), within DXGK_LOOK_MIN_NS and DXGK_LOOK_MAX_NS; a wait that took
 * longer, or found nothing, halves it.  The first look is the longest.
 */
#ifndef KMTSHIM_DXGKRNL_LOOK_H
#define KMTSHIM_DXGKRNL_LOOK_H

#include <sched.h>
#include <stdint.h>

#define DXGK_LOOK_MAX_NS 16000u
#define DXGK_LOOK_MIN_NS 250u
/* what a wait that found nothing took: the budget halves */
#define DXGK_LOOK_FOUND_NOTHING UINT64_MAX

#if defined(__x86_64__) || defined(__i386__)
# define dxgk_look_pause() __builtin_ia32_pause()
#else
# define dxgk_look_pause() do { } while (0)
#endif

/* A stored budget (0: none yet) as the next look's length in ns. */
static inline unsigned dxgk_look_budget(unsigned stored)
{
    return stored ? stored : DXGK_LOOK_MAX_NS;
}

/* The budget after a wait that took `took_ns` in all. */
static inline unsigned dxgk_look_learn(unsigned stored, uint64_t took_ns)
{
    unsigned budget = dxgk_look_budget(stored);

    if (took_ns <= DXGK_LOOK_MAX_NS)
        budget = (unsigned)took_ns * 2 + DXGK_LOOK_MIN_NS;
    else
        budget /= 2;
    return budget < DXGK_LOOK_MIN_NS ? DXGK_LOOK_MIN_NS : budget > DXGK_LOOK_MAX_NS ? DXGK_LOOK_MAX_NS : budget;
}

/* 1 + the calling thread's CPU (0: not known), as the pages record it:
 * sched_getcpu() reads rseq, no system call. */
static inline uint32_t dxgk_look_cpu(void)
{
    return (uint32_t)(sched_getcpu() + 1);
}

#endif /* KMTSHIM_DXGKRNL_LOOK_H */
