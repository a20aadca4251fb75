/*
 * Loading a UMD by the UTF-16 path the adapter reports: LoadLibraryW in a
 * Windows program, dlopen (of the path in UTF-8) natively.
 */
#include <stdlib.h>
#include <string.h>

#include "portable.h"

#ifndef _WIN32
# include <dlfcn.h>
#endif

/* UTF-16 -> UTF-8; a lone surrogate becomes U+FFFD.  Always terminated. */
static void utf16_to_utf8(const WCHAR *w, char *out, size_t size)
{
    size_t n = 0;

    if (!size)
        return;
    for (; *w; w++) {
        unsigned cp = *w;
        char buf[4];
        size_t len;

        if (cp >= 0xd800 && cp <= 0xdbff && w[1] >= 0xdc00 && w[1] <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (w[1] - 0xdc00);
            w++;
        } else if (cp >= 0xd800 && cp <= 0xdfff) {
            cp = 0xfffd;
        }
        if (cp < 0x80) { buf[0] = (char)cp; len = 1; }
        else if (cp < 0x800) { buf[0] = (char)(0xc0 | cp >> 6); buf[1] = (char)(0x80 | (cp & 0x3f)); len = 2; }
        else if (cp < 0x10000) {
            buf[0] = (char)(0xe0 | cp >> 12); buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
            buf[2] = (char)(0x80 | (cp & 0x3f)); len = 3;
        } else {
            buf[0] = (char)(0xf0 | cp >> 18); buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
            buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); buf[3] = (char)(0x80 | (cp & 0x3f)); len = 4;
        }
        if (n + len >= size)
            break;
        memcpy(out + n, buf, len);
        n += len;
    }
    out[n] = 0;
}

void kmtumd_module_basename(const WCHAR *path, char *out, size_t size)
{
    const WCHAR *base = path;

    for (const WCHAR *p = path; *p; p++)
        if (*p == '\\' || *p == '/')
            base = p + 1;
    utf16_to_utf8(base, out, size);
}

#ifdef _WIN32

void *kmtumd_module_load(const WCHAR *path)
{
    return LoadLibraryW(path);
}

void *kmtumd_module_symbol(void *module, const char *name)
{
    FARPROC proc = GetProcAddress(module, name);
    void *sym;

    memcpy(&sym, &proc, sizeof(sym));
    return sym;
}

void kmtumd_module_unload(void *module)
{
    FreeLibrary(module);
}

#else

void *kmtumd_module_load(const WCHAR *path)
{
    char utf8[4 * 260];

    utf16_to_utf8(path, utf8, sizeof(utf8));
    return dlopen(utf8, RTLD_NOW | RTLD_LOCAL);
}

void *kmtumd_module_symbol(void *module, const char *name)
{
    return dlsym(module, name);
}

void kmtumd_module_unload(void *module)
{
    dlclose(module);
}

#endif
