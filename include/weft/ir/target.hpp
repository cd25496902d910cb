// What to compile for: a CPU (the host, by default) or a CUDA device, and what a schedule
// may size itself by. Schedules (topi's, a tuner's templates) read only the Target they are
// given, never the host: Target::host() describes this machine, Target::x86_avx2() and
// Target::x86_avx512() (or fields written by hand) another one.
#pragma once
#include <cstdint>
#include <string>

namespace weft {

struct Target {
    enum class Kind { CPU, CUDA };
    Kind kind = Kind::CPU;
    std::string triple;    // LLVM target triple, e.g. "x86_64-pc-linux-gnu"
    std::string cpu;       // e.g. "cascadelake"
    std::string features;  // LLVM feature string, e.g. "+avx512f,+avx512vnni,..."
    int vector_bits = 128; // widest vector registers the code should use (512 with AVX-512)
    std::string arch;      // CUDA: "sm_90"

    // What schedules size themselves by (CPU). Not part of str(): they change the schedule,
    // which the lowered program (the kernel cache's key) already shows, not code generation.
    int num_threads = 1;          // threads the kernel's parallel loops will run on
    int64_t l1d_bytes = 32 << 10; // per core
    int64_t l2_bytes = 1 << 20;   // per core
    int64_t l3_bytes = 0;         // shared; 0: unknown

    // The machine this process runs on (detected through LLVM's host queries; caches from
    // the C library; num_threads is the thread pool's size at the time of the call).
    static Target host();
    // Generic x86-64 CPUs for building (or planning schedules) for another machine:
    // AVX2 + FMA (Haswell and later, Zen), and AVX-512 (F, CD, BW, DQ, VL) + FMA. Code built
    // for one runs only on a CPU that has its features.
    static Target x86_avx2(int threads = 1);
    static Target x86_avx512(int threads = 1);
    static Target cuda(const std::string& arch = "sm_90") {
        Target t;
        t.kind = Kind::CUDA;
        t.arch = arch;
        return t;
    }
    bool is_cpu() const { return kind == Kind::CPU; }
    bool is_cuda() const { return kind == Kind::CUDA; }
    // A 64-bit x86 CPU (where x86-only code paths apply: libmvec, streaming stores).
    bool is_x86() const { return is_cpu() && triple.rfind("x86_64", 0) == 0; }
    // Whether `features` enables `name` ("avx512f": "+avx512f" as a whole entry, so that
    // "+avx512fp16" does not count); as LLVM reads them, a later "-avx512f" turns it off again.
    bool has_feature(const std::string& name) const {
        bool on = false;
        for (size_t at = 0; at <= features.size();) {
            size_t end = features.find(',', at);
            if (end == std::string::npos) end = features.size();
            if (end - at == name.size() + 1 && features.compare(at + 1, name.size(), name) == 0) {
                if (features[at] == '+') on = true;
                if (features[at] == '-') on = false;
            }
            at = end + 1;
        }
        return on;
    }
    // Whether code for this target may use AVX-512's 512-bit vectors.
    bool uses_avx512() const { return is_x86() && vector_bits >= 512 && has_feature("avx512f"); }
    // Number of float32 lanes in one vector register.
    int natural_lanes(int element_bits = 32) const { return vector_bits / element_bits; }
    // Architectural vector registers a kernel may keep values in: 32 with AVX-512, else 16
    // (x86-64's xmm/ymm registers; AArch64's 32 NEON registers are not modelled yet).
    int vector_registers() const { return uses_avx512() ? 32 : 16; }
    // A stable description of every field that changes the generated code: part of the kernel
    // cache's keys (in memory, on disk, and build()'s per-schedule memo).
    std::string str() const {
        if (kind == Kind::CUDA) return "cuda -arch=" + arch;
        return "llvm -mtriple=" + triple + " -mcpu=" + cpu + " -mattr=" + features +
               " -vector-bits=" + std::to_string(vector_bits);
    }
};

}  // namespace weft
