/*
 * Base Windows types for kmtshim's ABI headers.
 *
 * On Windows compilers (mingw-w64, MSVC) the system headers are used.  On
 * Linux the types are declared here with the widths Windows x64 gives them
 * (LLP64: LONG and ULONG are 32-bit, WCHAR is 16-bit), so a struct declared
 * with them has the same layout in a Linux object and in a PE image.
 */
#ifndef KMTSHIM_KMT_WINTYPES_H
#define KMTSHIM_KMT_WINTYPES_H

#if defined(_WIN32)

# ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
# endif
# include <windows.h>
# include <winternl.h>
/* A DDK type: the user-mode SDK headers lack it. */
# if !defined(_WDMDDK_) && !defined(_NTDDK_) && !defined(KMT_DEFINE_PHYSICAL_ADDRESS)
#  define KMT_DEFINE_PHYSICAL_ADDRESS
typedef LARGE_INTEGER PHYSICAL_ADDRESS;
# endif

#else /* Linux / native */

# include <stddef.h>
# include <stdint.h>

typedef uint8_t   BYTE, UCHAR, BOOLEAN;
typedef uint16_t  WORD, USHORT, WCHAR;
typedef int32_t   INT, LONG, BOOL, NTSTATUS, HRESULT;
typedef uint32_t  UINT, UINT32, ULONG, DWORD;
/* Windows aligns 64-bit integers to 8 inside structures on i386 too, where
 * the System V i386 ABI aligns them to 4: the attribute gives a 32-bit Linux
 * build the layout a 32-bit Windows program passes. */
# if defined(__i386__)
#  define KMT_ALIGN64 __attribute__((aligned(8)))
# else
#  define KMT_ALIGN64
# endif
typedef int64_t   INT64 KMT_ALIGN64, LONGLONG KMT_ALIGN64, LONG64 KMT_ALIGN64;
typedef uint64_t  UINT64 KMT_ALIGN64, ULONGLONG KMT_ALIGN64, ULONG64 KMT_ALIGN64;
typedef uintptr_t ULONG_PTR, UINT_PTR, SIZE_T;
typedef intptr_t  LONG_PTR, INT_PTR;
typedef void      VOID;
typedef void     *HANDLE, *PVOID;
typedef const void *PCVOID;
typedef HANDLE    HDC, HWND;

typedef struct _LUID {
    ULONG LowPart;
    LONG  HighPart;
} LUID, *PLUID;

typedef struct _RECT {
    LONG left;
    LONG top;
    LONG right;
    LONG bottom;
} RECT;

typedef struct _GUID {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t  Data4[8];
} GUID;

typedef union _LARGE_INTEGER {
    struct {
        DWORD LowPart;
        LONG  HighPart;
    };
    LONGLONG QuadPart;
} LARGE_INTEGER, PHYSICAL_ADDRESS;

/* Names of NT objects (ShareObjects, OpenNtHandleFromName): counted UTF-16,
 * Length and MaximumLength in bytes. */
typedef struct _UNICODE_STRING {
    USHORT Length;
    USHORT MaximumLength;
    WCHAR *Buffer;
} UNICODE_STRING, *PUNICODE_STRING;

typedef struct _OBJECT_ATTRIBUTES {
    ULONG Length;                       /* sizeof(OBJECT_ATTRIBUTES) */
    HANDLE RootDirectory;
    UNICODE_STRING *ObjectName;
    ULONG Attributes;                   /* OBJ_* */
    PVOID SecurityDescriptor;
    PVOID SecurityQualityOfService;
} OBJECT_ATTRIBUTES, *POBJECT_ATTRIBUTES;

# define OBJ_CASE_INSENSITIVE 0x00000040L

# ifndef TRUE
#  define TRUE 1
#  define FALSE 0
# endif
# ifndef APIENTRY
#  define APIENTRY
# endif
# ifndef WINAPI
#  define WINAPI
# endif
# ifndef CALLBACK
#  define CALLBACK
# endif
# define NT_SUCCESS(s) ((NTSTATUS)(s) >= 0)

#endif /* _WIN32 */

#ifndef NT_SUCCESS
# define NT_SUCCESS(s) ((NTSTATUS)(s) >= 0)
#endif

/* Compile-time layout checks: x86_64 layouts, and i386 ones. */
/* Registry value types (winnt.h), as KMTQAITYPE_QUERYREGISTRY names them. */
#ifndef REG_SZ
# define REG_NONE 0
# define REG_SZ 1
# define REG_EXPAND_SZ 2
# define REG_BINARY 3
# define REG_DWORD 4
# define REG_MULTI_SZ 7
# define REG_QWORD 11
#endif

#if defined(__x86_64__) || defined(_M_X64)
# define KMT_ABI_X86_64 1
#endif

#if defined(__cplusplus)
# define KMT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
# define KMT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#ifdef KMT_ABI_X86_64
# define KMT_CHECK_SIZE(type, size) \
    KMT_STATIC_ASSERT(sizeof(type) == (size), "sizeof(" #type ") != " #size)
# define KMT_CHECK_OFFSET(type, field, off) \
    KMT_STATIC_ASSERT(offsetof(type, field) == (off), \
                      "offsetof(" #type ", " #field ") != " #off)
#else
# define KMT_CHECK_SIZE(type, size)
# define KMT_CHECK_OFFSET(type, field, off)
#endif

/* The same for the i386 layout (i686 mingw-w64, gcc -m32): every structure
 * pinned for x86_64 is pinned for 32-bit Windows too. */
#if defined(__i386__) || defined(_M_IX86)
# include <stddef.h>
# define KMT_CHECK_SIZE_I386(type, size) \
    KMT_STATIC_ASSERT(sizeof(type) == (size), "i386: sizeof(" #type ") != " #size)
# define KMT_CHECK_OFFSET_I386(type, field, off) \
    KMT_STATIC_ASSERT(offsetof(type, field) == (off), \
                      "i386: offsetof(" #type ", " #field ") != " #off)
#else
# define KMT_CHECK_SIZE_I386(type, size)
# define KMT_CHECK_OFFSET_I386(type, field, off)
#endif

KMT_CHECK_SIZE(UNICODE_STRING, 0x10);
KMT_CHECK_OFFSET(UNICODE_STRING, Buffer, 0x08);
KMT_CHECK_SIZE_I386(UNICODE_STRING, 0x08);
KMT_CHECK_OFFSET_I386(UNICODE_STRING, Buffer, 0x04);
KMT_CHECK_SIZE(OBJECT_ATTRIBUTES, 0x30);
KMT_CHECK_OFFSET(OBJECT_ATTRIBUTES, RootDirectory, 0x08);
KMT_CHECK_OFFSET(OBJECT_ATTRIBUTES, ObjectName, 0x10);
KMT_CHECK_OFFSET(OBJECT_ATTRIBUTES, Attributes, 0x18);
KMT_CHECK_OFFSET(OBJECT_ATTRIBUTES, SecurityDescriptor, 0x20);
KMT_CHECK_OFFSET(OBJECT_ATTRIBUTES, SecurityQualityOfService, 0x28);
KMT_CHECK_SIZE_I386(OBJECT_ATTRIBUTES, 0x18);
KMT_CHECK_OFFSET_I386(OBJECT_ATTRIBUTES, ObjectName, 0x08);
KMT_CHECK_OFFSET_I386(OBJECT_ATTRIBUTES, SecurityQualityOfService, 0x14);

#endif /* KMTSHIM_KMT_WINTYPES_H */
