/*
 * Per-thread spares: the last freed object of a kind, kept for the next
 * create of that kind on the same thread.  A program that creates and
 * destroys devices in turn then reuses one block with no trip through
 * malloc() and free() (each costs more than the rest of the pair's
 * bookkeeping).  The slot is the thread's own: no lock, no atomic.  A
 * thread's spares are freed when it exits, and the calling thread's by
 * kmt_spare_drain() (process teardown).
 *
 * Off under AddressSanitizer and ThreadSanitizer: a reused block would
 * hide a use after free from the one, and keep the old object's clocks
 * for the other, hiding a race on the new one.
 */
#ifndef KMTSHIM_BASE_KMT_SPARE_H
#define KMTSHIM_BASE_KMT_SPARE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_alloc.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define KMT_SPARES_OFF 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#  define KMT_SPARES_OFF 1
# endif
#endif
#ifndef KMT_SPARES_OFF
# define KMT_SPARES_OFF 0
#endif

enum kmt_spare_kind {
    KMT_SPARE_DEVICE,                    /* struct dxgk_device */
    KMT_SPARE_SOFT_DEVICE,               /* the soft miniport's device */
    KMT_SPARE_KINDS
};

struct kmt_spare {
    void *block;
    size_t size;                         /* its size, which a zalloc must ask for */
};

struct kmt_spares {
    struct kmt_spare slot[KMT_SPARE_KINDS];
    signed char state;                   /* 0: not set up, 1: on, -1: off */
};

extern __thread __attribute__((tls_model("initial-exec"))) struct kmt_spares kmt_spares_self;

/* Sets this thread's spares up (its exit frees them); false: keep none. */
bool kmt_spare_setup(struct kmt_spares *s);

/* A zeroed block of `size` bytes: the thread's spare of `kind` if it has
 * one of that size (a kind's blocks have one size; a block of another
 * stays the spare and malloc() gives this one). */
static inline void *kmt_spare_zalloc(enum kmt_spare_kind kind, size_t size)
{
    struct kmt_spare *spare = &kmt_spares_self.slot[kind];
    void *p = spare->block;

    if (!p || __builtin_expect(spare->size != size, 0))
        return kmt_zalloc(size);
    spare->block = NULL;
    memset(p, 0, size);
    return p;
}

/* Frees p, a block of `kind` and `size` bytes, or keeps it as the
 * thread's spare. */
static inline void kmt_spare_free(enum kmt_spare_kind kind, void *p, size_t size)
{
    struct kmt_spares *s = &kmt_spares_self;

    if (__builtin_expect(s->state <= 0, 0) && !kmt_spare_setup(s)) {
        free(p);
        return;
    }
    if (s->slot[kind].block) {
        free(p);
    } else {
        s->slot[kind].block = p;
        s->slot[kind].size = size;
    }
}

/* Frees the calling thread's spares. */
void kmt_spare_drain(void);

#endif /* KMTSHIM_BASE_KMT_SPARE_H */
