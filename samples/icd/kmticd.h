/*
 * kmticd.dll: an "ICD-shaped" DLL.  It exports the entry points opengl32
 * looks for in an OpenGL installable client driver (DrvValidateVersion,
 * DrvCreateContext, DrvSetContext, DrvReleaseContext, DrvDeleteContext,
 * DrvGetProcAddress, ...), but it is no OpenGL implementation: its context
 * is a D3DKMT device on kmtshim's software adapter, and the one function
 * DrvGetProcAddress hands out does a D3DKMT round trip on it.
 *
 * Shared by the DLL and its loader, kmticdload.exe.
 */
#ifndef KMTSHIM_KMTICD_H
#define KMTSHIM_KMTICD_H

#include "kmtshim/d3dkmthk.h"

/* The OpenGL ICD version this ICD accepts in DrvValidateVersion: the
 * adapter's KMTQAITYPE_UMOPENGLINFO Version must say so. */
#define KMTICD_DRIVER_VERSION 0x00010001u

/* A driver context handle (what opengl32 keeps per HGLRC). */
typedef ULONG_PTR KMTICD_DHGLRC;

/* What DrvSetContext returns: opengl32 expects a GLCLTPROCTABLE here; this
 * ICD's table has one entry, the round trip. */
typedef BOOL (APIENTRY *PFN_KMTICD_ROUNDTRIP)(UINT value);
typedef struct _KMTICD_PROCTABLE {
    int cEntries;
    PFN_KMTICD_ROUNDTRIP Entries[1];
} KMTICD_PROCTABLE;

/* kmtshim extension: opengl32 would reach the adapter through the HDC
 * (D3DKMTOpenAdapterFromHdc); this loader has no window and names the
 * adapter by LUID before DrvCreateContext. */
typedef BOOL (APIENTRY *PFN_KMTICDSETADAPTERLUID)(const LUID *luid);

typedef BOOL (APIENTRY *PFN_DRVVALIDATEVERSION)(ULONG version);
typedef KMTICD_DHGLRC (APIENTRY *PFN_DRVCREATECONTEXT)(HDC hdc);
typedef const KMTICD_PROCTABLE *(APIENTRY *PFN_DRVSETCONTEXT)(HDC hdc, KMTICD_DHGLRC context, void *set_proc_table);
typedef BOOL (APIENTRY *PFN_DRVRELEASECONTEXT)(KMTICD_DHGLRC context);
typedef BOOL (APIENTRY *PFN_DRVDELETECONTEXT)(KMTICD_DHGLRC context);
typedef PROC (APIENTRY *PFN_DRVGETPROCADDRESS)(LPCSTR name);

/* The name DrvGetProcAddress knows: fill part of a buffer on the GPU, wait
 * on a monitored fence, check every word.  TRUE when all were right. */
#define KMTICD_ROUNDTRIP_NAME "kmtIcdFillAndCheck"

#endif /* KMTSHIM_KMTICD_H */
