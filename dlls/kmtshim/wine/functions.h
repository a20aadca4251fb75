/*
 * The D3DKMT functions kmtshim.dll implements: one line each, no include
 * guard (an X-macro list, included several times).
 *
 *     KMT_FUNC(Name, DescriptorType)      the PE half passes the caller's
 *                                         descriptor straight to the Linux half
 *     KMT_FUNC_PE(Name, DescriptorType)   the PE half has a wrapper pe_<Name>()
 *                                         (the descriptor holds a Windows object
 *                                         or name: pe/thunks.c, pe/display.c)
 *     KMT_FUNC_EVENT(Name, DescriptorType)
 *                                         the descriptor may carry a Win32 event:
 *                                         the PE wrapper pe_<Name>() (pe/events.c)
 *                                         duplicates it, the Linux entry
 *                                         unix_<Name>() (unix/events.c) registers
 *                                         it (see docs/wine.md, "Events")
 *     KMT_FUNC_UNIX(Name, DescriptorType) straight through the PE half; the
 *                                         Linux entry unix_<Name>() is written
 *                                         by hand (unix/events.c)
 *     KMT_FUNC_CUSTOM(Name, void)         not one descriptor (no argument, two
 *                                         or five arguments, a BOOLEAN result):
 *                                         the PE export (pe/custom.c) and the
 *                                         Linux entry (unix/custom.c,
 *                                         unix/nt_handles.c) are written by hand
 *     KMT_FUNC_NT_IN(Name, DescriptorType)
 *                                         straight through the PE half; the
 *                                         generated Linux entry turns the
 *                                         descriptor's hNtHandle, a Wine handle,
 *                                         into the core's fd for the call
 *     KMT_FUNC_NT_OUT(Name, DescriptorType)
 *                                         the same for a call that returns an NT
 *                                         handle in hNtHandle: the core's fd
 *                                         becomes a Wine handle (unix/nt_handles.h)
 *
 * This list drives everything else.  gen-exports.sh makes from it the
 * checked-in files that name each function: the exports D3DKMT<Name> and
 * NtGdiDdDDI<Name> (kmtshim.def), the PE thunks (pe/thunks_gen.c), the Linux
 * entries (unix/entries_gen.c) and the stubs for every other name (stubs.h:
 * a name listed here is no longer a stub), plus the gdi32 proxy's routing
 * list.  Included, it gives the unix-call codes (unixlib.h) and the order of
 * the Linux half's dispatch table (unix/unixlib.c).  DescriptorType must
 * match the prototype in include/kmtshim/d3dkmthk.h (the compiler checks).
 * Adding a thunk that the core implements is one line here, then `make
 * refresh-wine-exports`.
 */
#ifndef KMT_FUNC_PE
# define KMT_FUNC_PE KMT_FUNC
#endif
#ifndef KMT_FUNC_EVENT
# define KMT_FUNC_EVENT KMT_FUNC_PE
#endif
#ifndef KMT_FUNC_UNIX
# define KMT_FUNC_UNIX KMT_FUNC
#endif
#ifndef KMT_FUNC_CUSTOM
# define KMT_FUNC_CUSTOM KMT_FUNC
#endif
#ifndef KMT_FUNC_NT_IN
# define KMT_FUNC_NT_IN KMT_FUNC
#endif
#ifndef KMT_FUNC_NT_OUT
# define KMT_FUNC_NT_OUT KMT_FUNC
#endif
KMT_FUNC(EnumAdapters, D3DKMT_ENUMADAPTERS)
KMT_FUNC(EnumAdapters2, D3DKMT_ENUMADAPTERS2)
KMT_FUNC(EnumAdapters3, D3DKMT_ENUMADAPTERS3)
KMT_FUNC(OpenAdapterFromLuid, D3DKMT_OPENADAPTERFROMLUID)
KMT_FUNC_PE(OpenAdapterFromGdiDisplayName, D3DKMT_OPENADAPTERFROMGDIDISPLAYNAME)
KMT_FUNC_PE(OpenAdapterFromHdc, D3DKMT_OPENADAPTERFROMHDC)
KMT_FUNC_PE(OpenAdapterFromDeviceName, D3DKMT_OPENADAPTERFROMDEVICENAME)
KMT_FUNC(CloseAdapter, const D3DKMT_CLOSEADAPTER)
KMT_FUNC(QueryAdapterInfo, const D3DKMT_QUERYADAPTERINFO)
KMT_FUNC_PE(QueryVideoMemoryInfo, D3DKMT_QUERYVIDEOMEMORYINFO)
KMT_FUNC_PE(QueryStatistics, const D3DKMT_QUERYSTATISTICS)
KMT_FUNC(QueryClockCalibration, D3DKMT_QUERYCLOCKCALIBRATION)
KMT_FUNC(CreateDevice, D3DKMT_CREATEDEVICE)
KMT_FUNC_PE(DestroyDevice, const D3DKMT_DESTROYDEVICE)
KMT_FUNC(CreateAllocation, D3DKMT_CREATEALLOCATION)
KMT_FUNC(CreateAllocation2, D3DKMT_CREATEALLOCATION)
KMT_FUNC(DestroyAllocation, const D3DKMT_DESTROYALLOCATION)
KMT_FUNC(DestroyAllocation2, const D3DKMT_DESTROYALLOCATION2)
KMT_FUNC(Lock, D3DKMT_LOCK)
KMT_FUNC(Unlock, const D3DKMT_UNLOCK)
KMT_FUNC(Lock2, D3DKMT_LOCK2)
KMT_FUNC(Unlock2, const D3DKMT_UNLOCK2)
KMT_FUNC(Escape, const D3DKMT_ESCAPE)
KMT_FUNC(CreateContext, D3DKMT_CREATECONTEXT)
KMT_FUNC(CreateContextVirtual, D3DKMT_CREATECONTEXTVIRTUAL)
KMT_FUNC(DestroyContext, const D3DKMT_DESTROYCONTEXT)
KMT_FUNC(GetDeviceState, D3DKMT_GETDEVICESTATE)
KMT_FUNC(SubmitCommand, const D3DKMT_SUBMITCOMMAND)
KMT_FUNC(Present, D3DKMT_PRESENT)
KMT_FUNC(Render, D3DKMT_RENDER)
KMT_FUNC(CreateSynchronizationObject, D3DKMT_CREATESYNCHRONIZATIONOBJECT)
KMT_FUNC_EVENT(CreateSynchronizationObject2, D3DKMT_CREATESYNCHRONIZATIONOBJECT2)
KMT_FUNC_UNIX(DestroySynchronizationObject, const D3DKMT_DESTROYSYNCHRONIZATIONOBJECT)
KMT_FUNC(SignalSynchronizationObject, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT)
KMT_FUNC_EVENT(SignalSynchronizationObject2, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECT2)
KMT_FUNC(WaitForSynchronizationObject, const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT)
KMT_FUNC(WaitForSynchronizationObject2, const D3DKMT_WAITFORSYNCHRONIZATIONOBJECT2)
KMT_FUNC(SignalSynchronizationObjectFromCpu, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU)
KMT_FUNC_EVENT(WaitForSynchronizationObjectFromCpu, const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU)
KMT_FUNC(SignalSynchronizationObjectFromGpu, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU)
KMT_FUNC_EVENT(SignalSynchronizationObjectFromGpu2, const D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMGPU2)
KMT_FUNC(WaitForSynchronizationObjectFromGpu, const D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMGPU)
KMT_FUNC(OpenSynchronizationObject, D3DKMT_OPENSYNCHRONIZATIONOBJECT)
KMT_FUNC_NT_IN(OpenSyncObjectFromNtHandle, D3DKMT_OPENSYNCOBJECTFROMNTHANDLE)
KMT_FUNC_NT_IN(OpenSyncObjectFromNtHandle2, D3DKMT_OPENSYNCOBJECTFROMNTHANDLE2)
KMT_FUNC_NT_OUT(OpenSyncObjectNtHandleFromName, D3DKMT_OPENSYNCOBJECTNTHANDLEFROMNAME)
KMT_FUNC(SetVidPnSourceOwner, const D3DKMT_SETVIDPNSOURCEOWNER)
KMT_FUNC(SetVidPnSourceOwner1, const D3DKMT_SETVIDPNSOURCEOWNER1)
KMT_FUNC(SetVidPnSourceOwner2, const D3DKMT_SETVIDPNSOURCEOWNER2)
KMT_FUNC(CheckVidPnExclusiveOwnership, const D3DKMT_CHECKVIDPNEXCLUSIVEOWNERSHIP)
KMT_FUNC(CheckOcclusion, const D3DKMT_CHECKOCCLUSION)
KMT_FUNC(GetOverlayState, D3DKMT_GETOVERLAYSTATE)
KMT_FUNC(SetQueuedLimit, D3DKMT_SETQUEUEDLIMIT)
KMT_FUNC(WaitForVerticalBlankEvent, const D3DKMT_WAITFORVERTICALBLANKEVENT)
KMT_FUNC_PE(WaitForVerticalBlankEvent2, const D3DKMT_WAITFORVERTICALBLANKEVENT2)
KMT_FUNC(GetScanLine, D3DKMT_GETSCANLINE)
KMT_FUNC(PollDisplayChildren, const D3DKMT_POLLDISPLAYCHILDREN)
KMT_FUNC(QueryResourceInfo, D3DKMT_QUERYRESOURCEINFO)
KMT_FUNC(OpenResource, D3DKMT_OPENRESOURCE)
KMT_FUNC(OpenResource2, D3DKMT_OPENRESOURCE)
KMT_FUNC_NT_IN(QueryResourceInfoFromNtHandle, D3DKMT_QUERYRESOURCEINFOFROMNTHANDLE)
KMT_FUNC_NT_IN(OpenResourceFromNtHandle, D3DKMT_OPENRESOURCEFROMNTHANDLE)
KMT_FUNC_NT_OUT(OpenNtHandleFromName, D3DKMT_OPENNTHANDLEFROMNAME)
KMT_FUNC_CUSTOM(CheckExclusiveOwnership, void)
KMT_FUNC_CUSTOM(SetProcessSchedulingPriorityClass, void)
KMT_FUNC_CUSTOM(GetProcessSchedulingPriorityClass, void)
KMT_FUNC_CUSTOM(ShareObjects, void)
KMT_FUNC(CreateKeyedMutex, D3DKMT_CREATEKEYEDMUTEX)
KMT_FUNC(CreateKeyedMutex2, D3DKMT_CREATEKEYEDMUTEX2)
KMT_FUNC(OpenKeyedMutex, D3DKMT_OPENKEYEDMUTEX)
KMT_FUNC(OpenKeyedMutex2, D3DKMT_OPENKEYEDMUTEX2)
KMT_FUNC_NT_IN(OpenKeyedMutexFromNtHandle, D3DKMT_OPENKEYEDMUTEXFROMNTHANDLE)
KMT_FUNC(DestroyKeyedMutex, const D3DKMT_DESTROYKEYEDMUTEX)
KMT_FUNC(AcquireKeyedMutex, D3DKMT_ACQUIREKEYEDMUTEX)
KMT_FUNC(AcquireKeyedMutex2, D3DKMT_ACQUIREKEYEDMUTEX2)
KMT_FUNC(ReleaseKeyedMutex, D3DKMT_RELEASEKEYEDMUTEX)
KMT_FUNC(ReleaseKeyedMutex2, D3DKMT_RELEASEKEYEDMUTEX2)
#undef KMT_FUNC
#undef KMT_FUNC_PE
#undef KMT_FUNC_EVENT
#undef KMT_FUNC_UNIX
#undef KMT_FUNC_CUSTOM
#undef KMT_FUNC_NT_IN
#undef KMT_FUNC_NT_OUT
