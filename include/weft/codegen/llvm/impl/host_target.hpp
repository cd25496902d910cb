// Target::host() (declared in ir/target.hpp): the CPU this process runs on, through LLVM's
// host queries.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include "weft/ir/abi.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/c_runtime.hpp"
#include "weft/runtime/thread_pool.hpp"

namespace weft {

Target Target::host() {
    // The host does not change while the process runs: detect it once.
    static const Target detected = [] {
        Target t;
        t.kind = Kind::CPU;
        t.triple = llvm::sys::getProcessTriple();
        t.cpu = llvm::sys::getHostCPUName().str();
        std::vector<std::string> features;
        bool avx512f = false, avx2 = false;
        for (const auto& f : llvm::sys::getHostCPUFeatures()) {
            features.push_back((f.second ? "+" : "-") + f.first().str());
            if (f.second && f.first() == "avx512f") avx512f = true;
            if (f.second && f.first() == "avx2") avx2 = true;
        }
        // AMX tiles only where Linux grants this process their state (kernels older than 5.16,
        // or a sandbox that refuses arch_prctl): else its kernels could not run.
        if (std::find(features.begin(), features.end(), "+amx-tile") != features.end() &&
            weft_runtime_request_amx() != 0) {
            (void)runtime::take_last_error();
            for (std::string& f : features)
                if (f.rfind("+amx-", 0) == 0) f[0] = '-';
        }
        std::sort(features.begin(), features.end());  // a stable string: part of cache keys
        for (size_t i = 0; i < features.size(); ++i) t.features += (i ? "," : "") + features[i];
        t.vector_bits = avx512f ? 512 : avx2 ? 256 : 128;
        // glibc reads the sizes from CPUID or sysfs; a VM may report 0 (unknown): keep the
        // defaults then.
        auto cache = [](int name, int64_t fallback) {
            long v = ::sysconf(name);
            return v > 0 ? int64_t(v) : fallback;
        };
        t.l1d_bytes = cache(_SC_LEVEL1_DCACHE_SIZE, t.l1d_bytes);
        t.l2_bytes = cache(_SC_LEVEL2_CACHE_SIZE, t.l2_bytes);
        t.l3_bytes = cache(_SC_LEVEL3_CACHE_SIZE, t.l3_bytes);
        return t;
    }();
    Target t = detected;
    t.num_threads = std::max(1, ::weft::num_threads());  // the pool can be resized at any time
    return t;
}

namespace {
Target generic_x86(const char* cpu, const char* features, int vector_bits, int threads) {
    Target t;
    t.kind = Target::Kind::CPU;
    t.triple = "x86_64-pc-linux-gnu";
    t.cpu = cpu;
    t.features = features;
    t.vector_bits = vector_bits;
    t.num_threads = std::max(1, threads);
    return t;
}
}  // namespace

Target Target::x86_avx2(int threads) {
    return generic_x86("haswell", "+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+popcnt,+sse4.1,+sse4.2,+ssse3",
                       256, threads);
}

Target Target::x86_avx512(int threads) {
    return generic_x86("skylake-avx512",
                       "+avx,+avx2,+avx512bw,+avx512cd,+avx512dq,+avx512f,+avx512vl,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,"
                       "+popcnt,+sse4.1,+sse4.2,+ssse3",
                       512, threads);
}

}  // namespace weft
