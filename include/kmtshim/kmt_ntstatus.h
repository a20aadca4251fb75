/*
 * NTSTATUS values used by the D3DKMT thunks and the miniport DDIs.
 *
 * Windows builds take them from the toolchain's <ntstatus.h>; every name is
 * also declared here under #ifndef so native Linux code (and toolchains whose
 * ntstatus.h lacks the graphics range) sees the same values.
 */
#ifndef KMTSHIM_KMT_NTSTATUS_H
#define KMTSHIM_KMT_NTSTATUS_H

#include "kmt_wintypes.h"

#if defined(_WIN32) && !defined(_NTSTATUS_) && !defined(STATUS_INVALID_PARAMETER)
/* windows.h already declared the few STATUS_* winnt.h carries; silence the
 * duplicates ntstatus.h would bring. */
# ifndef WIN32_NO_STATUS
#  define WIN32_NO_STATUS
#  define KMT_UNDEF_WIN32_NO_STATUS
# endif
# include <ntstatus.h>
# ifdef KMT_UNDEF_WIN32_NO_STATUS
#  undef WIN32_NO_STATUS
#  undef KMT_UNDEF_WIN32_NO_STATUS
# endif
#endif


#ifndef STATUS_SUCCESS
# define STATUS_SUCCESS                   ((NTSTATUS)0x00000000L)
#endif
#ifndef STATUS_WAIT_0
# define STATUS_WAIT_0                    ((NTSTATUS)0x00000000L)
#endif
#ifndef STATUS_ABANDONED
# define STATUS_ABANDONED                 ((NTSTATUS)0x00000080L)
#endif
#ifndef STATUS_TIMEOUT
# define STATUS_TIMEOUT                   ((NTSTATUS)0x00000102L)
#endif
#ifndef STATUS_PENDING
# define STATUS_PENDING                   ((NTSTATUS)0x00000103L)
#endif
#ifndef STATUS_UNSUCCESSFUL
# define STATUS_UNSUCCESSFUL              ((NTSTATUS)0xC0000001L)
#endif
#ifndef STATUS_NOT_IMPLEMENTED
# define STATUS_NOT_IMPLEMENTED           ((NTSTATUS)0xC0000002L)
#endif
#ifndef STATUS_INVALID_HANDLE
# define STATUS_INVALID_HANDLE            ((NTSTATUS)0xC0000008L)
#endif
#ifndef STATUS_INVALID_PARAMETER
# define STATUS_INVALID_PARAMETER         ((NTSTATUS)0xC000000DL)
#endif
#ifndef STATUS_NO_MEMORY
# define STATUS_NO_MEMORY                 ((NTSTATUS)0xC0000017L)
#endif
#ifndef STATUS_BUFFER_TOO_SMALL
# define STATUS_BUFFER_TOO_SMALL          ((NTSTATUS)0xC0000023L)
#endif
#ifndef STATUS_OBJECT_TYPE_MISMATCH
# define STATUS_OBJECT_TYPE_MISMATCH      ((NTSTATUS)0xC0000024L)
#endif
#ifndef STATUS_OBJECT_NAME_NOT_FOUND
# define STATUS_OBJECT_NAME_NOT_FOUND     ((NTSTATUS)0xC0000034L)
#endif
#ifndef STATUS_INSUFFICIENT_RESOURCES
# define STATUS_INSUFFICIENT_RESOURCES    ((NTSTATUS)0xC000009AL)
#endif
#ifndef STATUS_NOT_SUPPORTED
# define STATUS_NOT_SUPPORTED             ((NTSTATUS)0xC00000BBL)
#endif
#ifndef STATUS_INTERNAL_ERROR
# define STATUS_INTERNAL_ERROR            ((NTSTATUS)0xC00000E5L)
#endif
#ifndef STATUS_DLL_NOT_FOUND
# define STATUS_DLL_NOT_FOUND             ((NTSTATUS)0xC0000135L)
#endif
#ifndef STATUS_PROCEDURE_NOT_FOUND
# define STATUS_PROCEDURE_NOT_FOUND       ((NTSTATUS)0xC000007AL)
#endif
#ifndef STATUS_DEVICE_REMOVED
# define STATUS_DEVICE_REMOVED            ((NTSTATUS)0xC00002B6L)
#endif
#ifndef STATUS_RESOURCE_IN_USE
# define STATUS_RESOURCE_IN_USE           ((NTSTATUS)0xC0000708L)
#endif
#ifndef STATUS_REVISION_MISMATCH
# define STATUS_REVISION_MISMATCH         ((NTSTATUS)0xC0000059L)
#endif
#ifndef STATUS_ILLEGAL_INSTRUCTION
# define STATUS_ILLEGAL_INSTRUCTION       ((NTSTATUS)0xC000001DL)
#endif
#ifndef STATUS_PRIVILEGED_INSTRUCTION
# define STATUS_PRIVILEGED_INSTRUCTION    ((NTSTATUS)0xC0000096L)
#endif
#ifndef STATUS_GRAPHICS_NO_VIDEO_MEMORY
# define STATUS_GRAPHICS_NO_VIDEO_MEMORY  ((NTSTATUS)0xC01E0100L)
#endif
#ifndef STATUS_GRAPHICS_ALLOCATION_BUSY
# define STATUS_GRAPHICS_ALLOCATION_BUSY  ((NTSTATUS)0xC01E0102L)
#endif
#ifndef STATUS_GRAPHICS_TOO_MANY_REFERENCES
# define STATUS_GRAPHICS_TOO_MANY_REFERENCES ((NTSTATUS)0xC01E0103L)
#endif
#ifndef STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE
# define STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE ((NTSTATUS)0xC01E0114L)
#endif
#ifndef STATUS_GRAPHICS_DRIVER_MISMATCH
# define STATUS_GRAPHICS_DRIVER_MISMATCH  ((NTSTATUS)0x401E0117L)
#endif

#endif /* KMTSHIM_KMT_NTSTATUS_H */
