/*
 * Wine-style debug channels (see kmt_debug.h).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "kmtshim/kmt_ntstatus.h"
#include "base/kmt_debug.h"

KMT_DEFINE_DEBUG_CHANNEL(d3dkmt);
KMT_DEFINE_DEBUG_CHANNEL(dxgk);
KMT_DEFINE_DEBUG_CHANNEL(hmgr);
KMT_DEFINE_DEBUG_CHANNEL(softgpu);
KMT_DEFINE_DEBUG_CHANNEL(drm);
KMT_DEFINE_DEBUG_CHANNEL(broker);

#define DEFAULT_FLAGS ((1u << KMT_DBG_ERR) | (1u << KMT_DBG_FIXME))

static const char *const class_names[] = { "err", "warn", "fixme", "trace" };

/* Bumped by kmt_debug_reset() so channels re-parse lazily. */
unsigned char kmt_debug_generation = 1;
unsigned char kmt_debug_quiet;

/* Applies one "[class]+channel" / "[class]-channel" item to `flags` if it
 * names this channel (or "all", or the umbrella "kmtshim"). */
static unsigned apply_item(const char *item, size_t len, const char *channel, unsigned flags)
{
    const char *op = NULL;
    unsigned mask = 0xf;
    size_t name_len;
    const char *name;

    for (size_t i = 0; i < len; i++)
        if (item[i] == '+' || item[i] == '-') { op = item + i; break; }
    if (!op) {
        /* bare channel name means +channel */
        name = item;
        name_len = len;
        if ((name_len == strlen(channel) && !strncmp(name, channel, name_len)) ||
            (name_len == 3 && !strncmp(name, "all", 3)) ||
            (name_len == 7 && !strncmp(name, "kmtshim", 7)))
            return flags | mask;
        return flags;
    }
    if (op != item) {
        mask = 0;
        for (unsigned c = 0; c < 4; c++)
            if ((size_t)(op - item) == strlen(class_names[c]) &&
                !strncmp(item, class_names[c], op - item))
                mask = 1u << c;
        if (!mask)
            return flags;
    }
    name = op + 1;
    name_len = len - (size_t)(name - item);
    if ((name_len == strlen(channel) && !strncmp(name, channel, name_len)) ||
        (name_len == 3 && !strncmp(name, "all", 3)) ||
        (name_len == 7 && !strncmp(name, "kmtshim", 7)))
        return *op == '+' ? (flags | mask) : (flags & ~mask);
    return flags;
}

static unsigned parse_spec(const char *spec, const char *channel, unsigned flags)
{
    while (spec && *spec) {
        const char *end = strchr(spec, ',');
        size_t len = end ? (size_t)(end - spec) : strlen(spec);
        if (len)
            flags = apply_item(spec, len, channel, flags);
        spec = end ? end + 1 : NULL;
    }
    return flags;
}

#define CHANNEL_NAME(ch) #ch,
static const char *const channel_names[] = { KMT_DEBUG_CHANNELS(CHANNEL_NAME) };
#undef CHANNEL_NAME

/* Sets kmt_debug_quiet when no channel traces under the settings of
 * generation `gen`: every channel of both halves, by name. */
static void settle_quiet(unsigned gen)
{
    for (size_t i = 0; i < KMT_DEBUG_CHANNEL_COUNT; i++)
        if (parse_spec(getenv("KMTSHIM_DEBUG"), channel_names[i],
                       parse_spec(getenv("WINEDEBUG"), channel_names[i], DEFAULT_FLAGS)) &
            (1u << KMT_DBG_TRACE))
            return;
    __atomic_store_n(&kmt_debug_quiet, 1, __ATOMIC_SEQ_CST);
    /* a reset in between: its clear may have come before our set */
    if (__atomic_load_n(&kmt_debug_generation, __ATOMIC_SEQ_CST) != gen)
        __atomic_store_n(&kmt_debug_quiet, 0, __ATOMIC_SEQ_CST);
}

unsigned kmt_debug_channel_flags(struct kmt_debug_channel *ch)
{
    /* flags byte: low nibble classes, high nibble generation tag */
    unsigned gen = __atomic_load_n(&kmt_debug_generation, __ATOMIC_RELAXED) & 0xf;
    unsigned cur = __atomic_load_n(&ch->flags, __ATOMIC_RELAXED);

    if (cur != 0xff && (cur >> 4) == gen)
        return cur & 0xf;
    if (!__atomic_load_n(&kmt_debug_quiet, __ATOMIC_RELAXED))
        settle_quiet(__atomic_load_n(&kmt_debug_generation, __ATOMIC_SEQ_CST));
    cur = DEFAULT_FLAGS;
    cur = parse_spec(getenv("WINEDEBUG"), ch->name, cur);
    cur = parse_spec(getenv("KMTSHIM_DEBUG"), ch->name, cur);
    __atomic_store_n(&ch->flags, (unsigned char)((gen << 4) | (cur & 0xf)), __ATOMIC_RELAXED);
    return cur & 0xf;
}

void kmt_debug_reset(void)
{
    unsigned gen = __atomic_load_n(&kmt_debug_generation, __ATOMIC_SEQ_CST);
    /* generation tags are 4 bits and never 0xf (which 0xff would alias) */
    __atomic_store_n(&kmt_debug_generation, (unsigned char)(gen % 14 + 1), __ATOMIC_SEQ_CST);
    __atomic_store_n(&kmt_debug_quiet, 0, __ATOMIC_SEQ_CST);
}

void kmt_debug_log(struct kmt_debug_channel *ch, enum kmt_debug_class cls,
                   const char *func, const char *fmt, ...)
{
    char line[1024];
    int n;
    va_list ap;

    n = snprintf(line, sizeof(line), "%04x:%04x:%s:%s:%s ", (unsigned)getpid(),
                 (unsigned)syscall(SYS_gettid), class_names[cls], ch->name, func);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(line)) {
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    n = (int)strlen(line);
    if (n && line[n - 1] != '\n' && (size_t)n + 1 < sizeof(line)) {
        line[n++] = '\n';
        line[n] = 0;
    }
    /* one write per line keeps lines of concurrent threads whole */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}

const char *kmt_debugstr_status(int status)
{
    switch ((NTSTATUS)status) {
#define S(x) case x: return #x
    S(STATUS_SUCCESS);
    S(STATUS_TIMEOUT);
    S(STATUS_PENDING);
    S(STATUS_ABANDONED);
    S(STATUS_UNSUCCESSFUL);
    S(STATUS_NOT_IMPLEMENTED);
    S(STATUS_INVALID_HANDLE);
    S(STATUS_INVALID_PARAMETER);
    S(STATUS_NO_MEMORY);
    S(STATUS_BUFFER_TOO_SMALL);
    S(STATUS_OBJECT_NAME_NOT_FOUND);
    S(STATUS_OBJECT_NAME_COLLISION);
    S(STATUS_OBJECT_TYPE_MISMATCH);
    S(STATUS_ACCESS_DENIED);
    S(STATUS_PORT_DISCONNECTED);
    S(STATUS_IO_TIMEOUT);
    S(STATUS_NAME_TOO_LONG);
    S(STATUS_NOT_SUPPORTED);
    S(STATUS_DEVICE_REMOVED);
    S(STATUS_RESOURCE_IN_USE);
    S(STATUS_ILLEGAL_INSTRUCTION);
    S(STATUS_PRIVILEGED_INSTRUCTION);
    S(STATUS_GRAPHICS_NO_VIDEO_MEMORY);
    S(STATUS_GRAPHICS_ALLOCATION_BUSY);
    S(STATUS_GRAPHICS_TOO_MANY_REFERENCES);
    S(STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE);
    S(STATUS_GRAPHICS_DRIVER_MISMATCH);
    S(STATUS_PRIVILEGE_NOT_HELD);
    S(STATUS_GRAPHICS_PRESENT_OCCLUDED);
    S(STATUS_GRAPHICS_INVALID_VIDEO_PRESENT_SOURCE);
    S(STATUS_GRAPHICS_VIDPN_SOURCE_IN_USE);
#undef S
    default: {
        static __thread char buf[16];
        snprintf(buf, sizeof(buf), "0x%08x", (unsigned)status);
        return buf;
    }
    }
}
