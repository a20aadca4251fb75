/*
 * A shared object that looks like a miniport plugin but lacks
 * KmtMiniportDriverEntry: loading it must fail cleanly.
 */
#include "kmtshim/d3dkmddi.h"

__attribute__((visibility("default"))) NTSTATUS APIENTRY KmtMiniportDriverEntryMisspelt(void);

NTSTATUS APIENTRY KmtMiniportDriverEntryMisspelt(void)
{
    return STATUS_SUCCESS;
}
