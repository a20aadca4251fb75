/*
 * The two C library functions the compiler may call on its own (struct
 * copies and initializers).  The PE halves link no C runtime: they load
 * inside gdi32's place in every process that enables the proxy, so they
 * import nothing but kernel32 and ntdll.
 */
#include <stddef.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

/* Keep gcc from recognising the loops as memcpy/memset (infinite recursion). */
#define NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

NO_LIBCALL void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    while (n--)
        *d++ = *s++;
    return dst;
}

NO_LIBCALL void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;

    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}
