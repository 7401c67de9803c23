/* Wine 8.0 has no bcryptprimitives.dll, whose ProcessPrng Rust's std (1.78+) imports on
 * Windows: without it every Rust .exe fails to start under Wine. This one-function DLL is
 * copied into the Wine prefix used by scripts/cross.sh (never shipped). It fills the buffer
 * with advapi32's RtlGenRandom (SystemFunction036), in chunks because that takes a ULONG. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
