// weft_amx_run: weft's GEMMs and ResNet-50's convolutions on AMX tiles (topi::schedule_matmul_bf16_amx
// / _u8s8_amx, schedule_conv2d_nchwc_bf16 / _u8s8 for an AMX target) against oneDNN's (brgemm on
// AMX) and weft's AVX-512 ones (vdpbf16ps / vpdpbusd), bf16 and int8, 1 and 2 threads, in one
// process: per case 7 alternating repetitions, medians. The cases of
// bf16_bench.cpp and int8_bench.cpp, in a binary light enough to carry to an AMX machine
// (weft_bench links Halide and its LLVM 14). Prints "no AMX" and exits 0 elsewhere.
// benchmarks/RESULTS.md, "AMX tiles on an Intel Xeon".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tuple>
#include <vector>

#include "dot_cases.hpp"
#include <weft/weft.hpp>

extern "C" void omp_set_num_threads(int);  // libgomp, which oneDNN links

using namespace weft;
using bench::Runner;
using bench::dot::Kind;

namespace {

double ms_per_run(const Runner& r, int iters) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) r();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iters;
}

// weft's AVX-512 kernel, its AMX one and oneDNN's, alternating 7 times; medians.
void compare(const char* label, int threads, double ops, const std::vector<Runner>& runners) {
    const int iters = std::max(3, int(2e9 / ops));
    std::vector<std::vector<double>> t(runners.size());
    for (const Runner& r : runners) ms_per_run(r, 2);
    for (int rep = 0; rep < 7; ++rep)
        for (size_t i = 0; i < runners.size(); ++i) t[i].push_back(ms_per_run(runners[i], iters));
    std::vector<double> med;
    for (auto& v : t) {
        std::sort(v.begin(), v.end());
        med.push_back(v[v.size() / 2]);
    }
    std::printf("%d thread(s) %s: AVX-512 %.1f G/s, AMX %.1f, oneDNN %.1f; AMX / oneDNN %.2f, AMX / AVX-512 %.2f\n",
                threads, label, ops / med[0] / 1e6, ops / med[1] / 1e6, ops / med[2] / 1e6, med[2] / med[1],
                med[0] / med[1]);
    std::fflush(stdout);
}

void compare_gemm(const char* kind, const Kind& k, int threads, int64_t M, int64_t N, int64_t K) {
    const std::string label = std::string(kind) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    compare(label.c_str(), threads, 2.0 * double(M) * double(N) * double(K),
            {bench::dot::weft_gemm(k, M, N, K), bench::dot::weft_gemm(k, M, N, K, true), bench::dot::onednn_gemm(k, M, N, K)});
}

void compare_conv(const char* kind, const Kind& k, int threads, const bench::dot::Conv& cv) {
    const std::string label = std::string(kind) + " conv " + cv.name;
    compare(label.c_str(), threads, cv.ops(),
            {bench::dot::weft_blocked_conv(k, cv), bench::dot::weft_blocked_conv(k, cv, true), bench::dot::onednn_conv(k, cv)});
}

}  // namespace

int main() {
    if (!topi::has_amx_bf16(Target::host()) || !topi::has_amx_int8(Target::host())) {
        std::printf("no AMX\n");
        return 0;
    }
    using bench::dot::Conv;
    // ResNet-50's convolutions (bench::dot::Conv: C, O, H, K, stride, pad).
    const Conv convs[] = {{"64x56x56_3x3", 64, 64, 56, 3, 1, 1},      {"128x28x28_3x3", 128, 128, 28, 3, 1, 1},
                          {"256x14x14_3x3", 256, 256, 14, 3, 1, 1},   {"512x7x7_3x3", 512, 512, 7, 3, 1, 1},
                          {"256x56x56_1x1_to64", 256, 64, 56, 1, 1, 0}, {"1024x14x14_1x1_to256", 1024, 256, 14, 1, 1, 0},
                          {"512x28x28_1x1_s2_to1024", 512, 1024, 28, 1, 2, 0}};
    for (int threads : {1, 2}) {
        set_num_threads(threads);
        omp_set_num_threads(threads);
        for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256}, {1024, 1024, 1024}, {3136, 64, 576}})
            compare_gemm("bf16", bench::dot::kBf16, threads, M, N, K);
        for (int64_t n : {256, 1024}) compare_gemm("int8", bench::dot::kInt8, threads, n, n, n);
        for (const Conv& cv : convs) compare_conv("bf16", bench::dot::kBf16, threads, cv);
        for (const Conv& cv : convs) compare_conv("int8", bench::dot::kInt8, threads, cv);
    }
}
