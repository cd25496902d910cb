// Definitions of the C runtime functions of ir/abi.hpp (except weft_runtime_parallel_for,
// which lives with the pool in impl/thread_pool.hpp, and weft_runtime_check_arguments, in
// impl/check_arguments.hpp) and of take_last_error().
// Every extern "C" function here is noexcept: it is called from JIT-compiled frames, which
// carry no unwind tables, so an exception must never cross it.
#pragma once
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <sys/mman.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "weft/runtime/buffer.hpp"
#include "weft/runtime/c_runtime.hpp"

namespace weft::runtime::detail {

// This thread's pending error message. The thread pool moves a worker's message to the
// thread that called parallel_for, so the caller always finds the message of the failure.
inline std::string& last_error_slot() {
    thread_local std::string message;
    return message;
}

}  // namespace weft::runtime::detail

namespace weft::runtime {

std::string take_last_error() {
    std::string message = std::move(detail::last_error_slot());
    detail::last_error_slot().clear();
    return message;
}

}  // namespace weft::runtime

extern "C" {

void weft_runtime_set_error(const char* message) {
    try {
        weft::runtime::detail::last_error_slot() = message ? message : "(no message)";
    } catch (...) {
        // Out of memory while reporting an error: the kernel still returns its non-zero
        // code, and the runtime reports it without the message.
    }
}

int32_t weft_runtime_request_amx(void) {
    // Linux 5.16+: the AMX tile data is a dynamically enabled state a process must ask for
    // before its first tile instruction (else SIGILL). Asked once; the answer kept.
    static const long granted = [] {
#if defined(__linux__) && defined(__x86_64__)
        constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata);
#else
        return -1L;
#endif
    }();
    if (granted == 0) return 0;
    weft_runtime_set_error("weft: the kernel uses AMX tiles, but Linux refused this process the AMX state "
                           "(arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) failed: an older kernel or a CPU "
                           "without AMX); build for a target without amx-tile");
    return -1;
}

// Alignment of kernel heap buffers and Buffer<T> storage: a cache line, and the widest
// vector (AVX-512) loads and stores. Allocations of 2 MiB and more are aligned to 2 MiB and
// asked to be backed by transparent huge pages (where the kernel leaves THP to madvise, as
// Debian does): a streaming kernel over 16 MiB then walks 8 pages instead of 4096. Measured
// on topi's softmax 4096x1024, 1 thread: best of 200 calls 1.44-1.47 ms with huge pages
// against 1.51-2.14 on 4 KiB pages (four processes each).
void* weft_runtime_alloc(int64_t bytes) {
    constexpr int64_t kAlign = 64, kHugePage = ::weft::kHugePageBytes;
    if (bytes < 0) {
        weft_runtime_set_error("weft: a kernel asked for a negative allocation size");
        return nullptr;
    }
    const int64_t align = bytes >= kHugePage ? kHugePage : kAlign;
    // aligned_alloc wants a multiple of the alignment; 0 bytes still yields a unique pointer.
    int64_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    void* p = std::aligned_alloc(static_cast<size_t>(align), static_cast<size_t>(rounded));
    if (!p) {
        weft_runtime_set_error("weft: out of memory in a kernel's heap allocation");
        return nullptr;
    }
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    return p;
}

void weft_runtime_free(void* p) { std::free(p); }

}  // extern "C"

#include "weft/runtime/impl/check_arguments.hpp"
