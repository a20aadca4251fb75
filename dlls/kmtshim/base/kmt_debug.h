/*
 * Wine-style debug channels for both halves of kmtshim.
 *
 * Enabled with WINEDEBUG (as under Wine) or KMTSHIM_DEBUG, same syntax:
 *     WINEDEBUG=+d3dkmt            trace the thunks
 *     WINEDEBUG=+kmtshim           trace every kmtshim channel
 *     WINEDEBUG=warn+dxgk,-hmgr    classes and negation as in Wine
 * Channels: d3dkmt (thunk calls, arguments, NTSTATUS), dxgk (core and the
 * DDI calls it makes), hmgr (handle table), softgpu, drm, broker (the
 * session broker's client).  err and fixme are
 * on by default, as in Wine; "-all" silences everything.
 */
#ifndef KMTSHIM_BASE_DEBUG_H
#define KMTSHIM_BASE_DEBUG_H

#include <stdbool.h>

enum kmt_debug_class {
    KMT_DBG_ERR = 0,
    KMT_DBG_WARN = 1,
    KMT_DBG_FIXME = 2,
    KMT_DBG_TRACE = 3,
};

struct kmt_debug_channel {
    const char *name;
    unsigned char flags;                 /* bit per class; 0xff: not parsed yet */
};

/* Every channel of both halves, once (kmtshim is the unix half's, and
 * also the umbrella name): the declarations below, the check that a
 * defined channel is listed, and the quiet flag's look at every channel
 * (kmt_debug.c) all come from this list. */
#define KMT_DEBUG_CHANNELS(X) X(d3dkmt) X(dxgk) X(hmgr) X(softgpu) X(drm) X(broker) X(kmtshim)

#define KMT_DEBUG_CHANNEL_ID(ch) KMT_DBCH_ID_##ch,
enum kmt_debug_channel_id { KMT_DEBUG_CHANNELS(KMT_DEBUG_CHANNEL_ID) KMT_DEBUG_CHANNEL_COUNT };
#undef KMT_DEBUG_CHANNEL_ID

#define KMT_DECLARE_DEBUG_CHANNEL(ch) \
    extern struct kmt_debug_channel kmt_dbch_##ch
/* A channel missing from KMT_DEBUG_CHANNELS does not compile: the quiet
 * flag would mute it. */
#define KMT_DEFINE_DEBUG_CHANNEL(ch) \
    _Static_assert(KMT_DBCH_ID_##ch < KMT_DEBUG_CHANNEL_COUNT, #ch " is in KMT_DEBUG_CHANNELS"); \
    struct kmt_debug_channel kmt_dbch_##ch = { #ch, 0xff }

#define KMT_DEBUG_CHANNEL_DECL(ch) KMT_DECLARE_DEBUG_CHANNEL(ch);
KMT_DEBUG_CHANNELS(KMT_DEBUG_CHANNEL_DECL)
#undef KMT_DEBUG_CHANNEL_DECL

/* The parsed flags carry the generation they were parsed in (high nibble,
 * 1..14; 0xff is "never parsed"): the hot path is one compare. */
extern unsigned char kmt_debug_generation;
unsigned kmt_debug_channel_flags(struct kmt_debug_channel *ch);

static inline bool kmt_debug_on(struct kmt_debug_channel *ch, enum kmt_debug_class cls)
{
    unsigned cur = __atomic_load_n(&ch->flags, __ATOMIC_RELAXED);

    if (__builtin_expect((cur >> 4) != __atomic_load_n(&kmt_debug_generation, __ATOMIC_RELAXED), 0))
        cur = kmt_debug_channel_flags(ch);
    return cur & (1u << cls);
}
/* Nonzero while no channel of kmtshim traces under the current settings
 * (computed when a channel is parsed, cleared by kmt_debug_reset()): the
 * trace checks of the hot paths are then one load, and a zero only means
 * "ask the channel". */
extern unsigned char kmt_debug_quiet;

static inline bool kmt_trace_on(struct kmt_debug_channel *ch)
{
    if (__builtin_expect(__atomic_load_n(&kmt_debug_quiet, __ATOMIC_RELAXED), 1))
        return false;
    return kmt_debug_on(ch, KMT_DBG_TRACE);
}
void kmt_debug_log(struct kmt_debug_channel *ch, enum kmt_debug_class cls,
                   const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Re-reads the environment (tests change it at run time). */
void kmt_debug_reset(void);

#define KMT_LOG(ch, cls, ...) \
    do { if ((cls) == KMT_DBG_TRACE ? kmt_trace_on(&kmt_dbch_##ch) : kmt_debug_on(&kmt_dbch_##ch, cls)) \
             kmt_debug_log(&kmt_dbch_##ch, cls, __func__, __VA_ARGS__); } while (0)

#define KMT_TRACE_ON(ch) kmt_trace_on(&kmt_dbch_##ch)
#define TRACE_(ch, ...) KMT_LOG(ch, KMT_DBG_TRACE, __VA_ARGS__)
#define WARN_(ch, ...)  KMT_LOG(ch, KMT_DBG_WARN, __VA_ARGS__)
#define FIXME_(ch, ...) KMT_LOG(ch, KMT_DBG_FIXME, __VA_ARGS__)
#define ERR_(ch, ...)   KMT_LOG(ch, KMT_DBG_ERR, __VA_ARGS__)

/* A short name for an NTSTATUS, for traces ("STATUS_INVALID_PARAMETER"). */
const char *kmt_debugstr_status(int status);

#endif /* KMTSHIM_BASE_DEBUG_H */
