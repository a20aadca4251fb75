/*
 * What the runtime and the host need from the platform: a statically
 * initialisable lock and a module loader (LoadLibraryW on Windows, dlopen
 * natively).
 */
#ifndef KMTSHIM_KMTUMD_PORTABLE_H
#define KMTSHIM_KMTUMD_PORTABLE_H

#include "kmtshim/kmt_wintypes.h"

#ifdef _WIN32
typedef SRWLOCK kmtumd_lock;
# define KMTUMD_LOCK_INIT SRWLOCK_INIT
# define kmtumd_lock_init(l) InitializeSRWLock(l)
# define kmtumd_lock_enter(l) AcquireSRWLockExclusive(l)
# define kmtumd_lock_leave(l) ReleaseSRWLockExclusive(l)
# define kmtumd_lock_destroy(l) ((void)(l))
#else
# include <pthread.h>
typedef pthread_mutex_t kmtumd_lock;
# define KMTUMD_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
# define kmtumd_lock_init(l) pthread_mutex_init(l, NULL)
# define kmtumd_lock_enter(l) pthread_mutex_lock(l)
# define kmtumd_lock_leave(l) pthread_mutex_unlock(l)
# define kmtumd_lock_destroy(l) pthread_mutex_destroy(l)
#endif

/* Loads the module a UTF-16 path names; NULL on failure. */
void *kmtumd_module_load(const WCHAR *path);
void *kmtumd_module_symbol(void *module, const char *name);
void kmtumd_module_unload(void *module);

/* The last component of a UTF-16 path as UTF-8 ("C:\x\umd.dll" -> "umd.dll"). */
void kmtumd_module_basename(const WCHAR *path, char *out, size_t size);

#endif /* KMTSHIM_KMTUMD_PORTABLE_H */
