// weft_amx_run: weft's GEMMs on AMX tiles (topi::schedule_matmul_bf16_amx / _u8s8_amx) against
// oneDNN's (brgemm on AMX) and weft's AVX-512 ones (vdpbf16ps / vpdpbusd), bf16 and int8, 1 and
// 2 threads, in one process: per case 7 alternating repetitions, medians. The cases of
// bf16_bench.cpp and int8_bench.cpp, in a binary light enough to carry to an AMX machine
// (weft_bench links Halide and its LLVM 14). Prints "no AMX" and exits 0 elsewhere.
// benchmarks/RESULTS.md, "AMX tiles on an Intel Xeon".
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

extern "C" void omp_set_num_threads(int);  // libgomp, which oneDNN links

using namespace weft;
using Runner = std::function<void()>;

namespace {

// One GEMM's types: A x B -> C, B packed by `pack`, scheduled by `plain` or `amx`.
struct Kind {
    DataType a, b;
    Tensor (*pack)(const Tensor&, std::string);
    Tensor (*matmul)(const Tensor&, const Tensor&, std::string);
    void (*plain)(Schedule&, const Tensor&);
    void (*amx)(Schedule&, const Tensor&);
    int64_t step;  // K elements per packed group (2 bf16, 4 int8)
    dnnl::memory::data_type da, db, dc;
};

const Kind kBf16{bf16, bf16, topi::pack_bf16_weight, topi::matmul_bf16, topi::schedule_matmul_bf16,
                 topi::schedule_matmul_bf16_amx, 2, dnnl::memory::data_type::bf16, dnnl::memory::data_type::bf16,
                 dnnl::memory::data_type::f32};
const Kind kInt8{u8, i8, topi::pack_vnni_weight, topi::matmul_u8s8, topi::schedule_matmul_u8s8,
                 topi::schedule_matmul_u8s8_amx, 4, dnnl::memory::data_type::u8, dnnl::memory::data_type::s8,
                 dnnl::memory::data_type::s32};

// Random values in every byte of `n` (written: fresh pages left untouched would all read the
// kernel's one zero page, which flatters whoever reads them). bfloat16: |v| in [1/8, 2);
// 8-bit: 0..15.
void fill(void* data, int64_t n, bool bf, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    auto* bytes = static_cast<uint8_t*>(data);
    for (int64_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        bytes[i] = bf ? (i % 2 ? uint8_t(0x3e + (x >> 30) % 2) | uint8_t((x >> 20) & 0x80) : uint8_t(x >> 24))
                      : uint8_t(x >> 24) % 16;
    }
}

Runner weft_gemm(const Kind& k, int64_t M, int64_t N, int64_t K, bool amx) {
    Tensor A = placeholder({M, K}, k.a, "A"), B = placeholder({K, N}, k.b, "B");
    Tensor Bp = k.pack(B, "b_packed");
    Tensor Bpi = placeholder({N / 16, K / k.step, 16, k.step}, k.b, "Bp");
    Tensor C = k.matmul(A, Bpi, "c");
    Schedule s = create_schedule(C);
    (amx ? k.amx : k.plain)(s, C);
    auto gemm = std::make_shared<Kernel>(build(s, {A, Bpi, C}));
    Kernel pack = build(create_schedule(Bp), {B, Bp});
    auto a = std::make_shared<BufferRef>(BufferRef::allocate(k.a, {M, K}));
    BufferRef b = BufferRef::allocate(k.b, {K, N});
    auto bp = std::make_shared<BufferRef>(BufferRef::allocate(k.b, {N / 16, K / k.step, 16, k.step}));
    auto c = std::make_shared<BufferRef>(BufferRef::allocate(C.dtype(), {M, N}));
    fill(a->data(), a->size() * k.a.bytes(), k.a == bf16, 1);
    fill(b.data(), b.size() * k.b.bytes(), k.b == bf16, 2);
    pack(b, *bp);  // weights packed once, like oneDNN's reorder
    return [=] { (*gemm)(*a, *bp, *c); };
}

Runner onednn_gemm(const Kind& k, int64_t M, int64_t N, int64_t K) {
    using namespace dnnl;
    using tag = memory::format_tag;
    auto eng = std::make_shared<engine>(engine::kind::cpu, 0);
    auto st = std::make_shared<stream>(*eng);
    memory::desc a_md({M, K}, k.da, tag::ab), b_any({K, N}, k.db, tag::any), c_md({M, N}, k.dc, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a_md, b_any, c_md), *eng);
    std::printf("  oneDNN: %s\n", pd.impl_info_str());
    auto a = std::make_shared<memory>(a_md, *eng);
    auto c = std::make_shared<memory>(c_md, *eng);
    memory b_user({{K, N}, k.db, tag::ab}, *eng);
    fill(a->get_data_handle(), M * K * k.a.bytes(), k.a == bf16, 1);
    fill(b_user.get_data_handle(), K * N * k.b.bytes(), k.b == bf16, 2);
    auto b = std::make_shared<memory>(pd.weights_desc(), *eng);
    reorder(b_user, *b).execute(*st, b_user, *b);
    st->wait();
    auto p = std::make_shared<matmul>(pd);
    return [=] {
        p->execute(*st, {{DNNL_ARG_SRC, *a}, {DNNL_ARG_WEIGHTS, *b}, {DNNL_ARG_DST, *c}});
        st->wait();
    };
}

double ms_per_run(const Runner& r, int iters) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) r();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iters;
}

// weft's AVX-512 kernel, its AMX one and oneDNN's, alternating 7 times; medians.
void compare(const char* label, const Kind& k, int threads, int64_t M, int64_t N, int64_t K) {
    const std::vector<Runner> runners{weft_gemm(k, M, N, K, false), weft_gemm(k, M, N, K, true), onednn_gemm(k, M, N, K)};
    const double ops = 2.0 * double(M) * double(N) * double(K);
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
    std::printf("%d thread(s) %s %ldx%ldx%ld: AVX-512 %.1f G/s, AMX %.1f, oneDNN %.1f; AMX / oneDNN %.2f, "
                "AMX / AVX-512 %.2f\n",
                threads, label, long(M), long(N), long(K), ops / med[0] / 1e6, ops / med[1] / 1e6, ops / med[2] / 1e6,
                med[2] / med[1], med[0] / med[1]);
}

}  // namespace

int main() {
    if (!topi::has_amx_bf16(Target::host()) || !topi::has_amx_int8(Target::host())) {
        std::printf("no AMX\n");
        return 0;
    }
    for (int threads : {1, 2}) {
        set_num_threads(threads);
        omp_set_num_threads(threads);
        for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256}, {1024, 1024, 1024}, {3136, 64, 576}})
            compare("bf16", kBf16, threads, M, N, K);
        for (int64_t n : {256, 1024}) compare("int8", kInt8, threads, n, n, n);
    }
}
