/*
 * Global handle values.  Windows' layout with low bits 2, indices from
 * 2^23 (the upper half, as local handles: the lower half is Wine's).
 *
 * The index counts up, modulo 2^23, so a value comes back only after
 * 2^23 creations, and then only when no live object holds it.  The
 * counter survives the broker: DIR/globals holds the end of the block of
 * indices this broker may use, written before it uses them, and a
 * successor (the broker died, the next client started another) starts
 * there.  A global handle of a dead broker's object therefore never names
 * an object of its successor.  A fresh directory starts at a point taken
 * from the clock.
 *
 * Test hooks, for the wrap: KMTSHIM_BROKER_TEST_GLOBAL_COUNT shrinks the
 * index space (1 .. 2^23 indices) and KMTSHIM_BROKER_TEST_GLOBAL_FIRST
 * sets the first index of a fresh directory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "broker/dir.h"
#include "daemon.h"

#define GLOBALS_FILE "globals"
#define INDEX_BASE (1u << 23)
#define INDEX_COUNT (1u << 23)
#define BLOCK 4096u                      /* indices reserved per write of the file */

static uint32_t count = INDEX_COUNT;     /* the index space */
static uint32_t next;                    /* the next index, < count */
static uint32_t reserved;                /* indices from `next` on the file's word */
static int file = -1;

static uint32_t handle_of(uint32_t index)
{
    return 0x40000000u | ((INDEX_BASE + index) << 6) | 2;
}

/* A test hook's value in [min, max], else fallback. */
static uint32_t hook(const char *name, uint32_t min, uint32_t max, uint32_t fallback)
{
    const char *env = getenv(name);
    char *end;
    unsigned long v;

    if (!env || !*env)
        return fallback;
    v = strtoul(env, &end, 0);
    return !*end && v >= min && v <= max ? (uint32_t)v : fallback;
}

/* The predecessor's end of block, when the file has one. */
static bool read_file(uint32_t *index)
{
    char buf[16] = { 0 }, *end;
    unsigned long v;

    if (pread(file, buf, sizeof(buf) - 1, 0) <= 0)
        return false;
    v = strtoul(buf, &end, 10);
    if (end == buf || v >= count)
        return false;
    *index = (uint32_t)v;
    return true;
}

/* Reserves the next block: a successor starts after it. */
static void reserve(void)
{
    uint32_t block = count < BLOCK ? count : BLOCK;
    char buf[16];
    int len = snprintf(buf, sizeof(buf), "%7u\n", (next + block) % count);

    if (file >= 0 && pwrite(file, buf, len, 0) != len)
        BROKER_ERR("cannot write %s: a successor may reuse global handles\n", GLOBALS_FILE);
    reserved = block;
}

void globals_init(const char *dir)
{
    char path[4096];
    struct timespec ts;

    count = hook("KMTSHIM_BROKER_TEST_GLOBAL_COUNT", 1, INDEX_COUNT, INDEX_COUNT);
    clock_gettime(CLOCK_REALTIME, &ts);
    next = (uint32_t)(((uint64_t)ts.tv_sec * 1000000u + ts.tv_nsec / 1000) % count);
    next = hook("KMTSHIM_BROKER_TEST_GLOBAL_FIRST", 0, count - 1, next);
    if (!kmt_broker_dir_file(dir, GLOBALS_FILE, path, sizeof(path)))
        file = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (file < 0)
        BROKER_ERR("cannot open %s/%s: a successor may reuse global handles\n", dir, GLOBALS_FILE);
    else
        read_file(&next);
    reserve();
}

uint32_t globals_take(void)
{
    /* of live+1 indices in a row, one is free */
    for (uint64_t tries = 0; tries <= broker.stats.global_handles && tries < count; tries++) {
        uint32_t handle = handle_of(next);

        if (!reserved)
            reserve();
        next = (next + 1) % count;
        reserved--;
        if (!books_find_global(handle))
            return handle;
    }
    return 0;
}
