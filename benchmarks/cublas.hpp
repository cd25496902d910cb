// cuBLAS for weft_cuda_bench's matmul peers, opened with dlopen so the binary builds and
// starts without a GPU (or without cuBLAS: the cuBLAS cases then say why they are skipped).
// The library: WEFT_LIBCUBLAS, else libcublas from the toolkit CMake found, else the loader's
// search path. The handful of declarations are cublas_api.h / library_types.h's values.
//
// Row-major C[M, N] = A[M, K] x B[K, N] is column-major C^T = B^T x A^T: gemm(N, N, n=N,
// m=M, k=K, B, ldb=N, A, lda=K, C, ldc=N), which is what sgemm / gemm_f16_f32 do.
#pragma once
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef WEFT_BENCH_CUDA_LIB_DIR
#define WEFT_BENCH_CUDA_LIB_DIR ""
#endif

// The values above, checked against the toolkit's headers where the build has them.
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
static_assert(CUBLAS_OP_N == 0 && CUDA_R_32F == 0 && CUDA_R_16F == 2 && CUBLAS_COMPUTE_32F == 68 &&
              CUBLAS_GEMM_DEFAULT == -1 && CUBLAS_DEFAULT_MATH == 0 && CUBLAS_STATUS_SUCCESS == 0);
static_assert(sizeof(cublasOperation_t) == sizeof(int) && sizeof(cudaDataType) == sizeof(int) &&
              sizeof(cublasComputeType_t) == sizeof(int) && sizeof(cublasGemmAlgo_t) == sizeof(int));
#endif

namespace cuda_bench {

class Cublas {
public:
    // cuBLAS with a handle on the current device (its primary context), or throws
    // std::runtime_error saying why not.
    static Cublas& get() {
        static Cublas cublas;
        if (!cublas.error_.empty()) throw std::runtime_error(cublas.error_);
        return cublas;
    }

    // C f32 = A f32 x B f32 (row major), pure float32 math (no TF32: CUBLAS_DEFAULT_MATH).
    void sgemm(int64_t M, int64_t N, int64_t K, const void* A, const void* B, void* C) const {
        const float one = 1, zero = 0;
        check(sgemm_(handle_, kOpN, kOpN, int(N), int(M), int(K), &one, B, int(N), A, int(K), &zero, C, int(N)),
              "cublasSgemm_v2");
    }
    // C f32 = A f16 x B f16 (row major), products summed in float32 (CUBLAS_COMPUTE_32F):
    // what topi::cuda::matmul_tensorcore computes.
    void gemm_f16_f32(int64_t M, int64_t N, int64_t K, const void* A, const void* B, void* C) const {
        const float one = 1, zero = 0;
        check(gemm_ex_(handle_, kOpN, kOpN, int(N), int(M), int(K), &one, B, kR16F, int(N), A, kR16F, int(K), &zero,
                       C, kR32F, int(N), kCompute32F, kGemmDefault),
              "cublasGemmEx");
    }
    std::string version() const {
        int v = 0;
        if (get_version_ && get_version_(handle_, &v) == 0)
            return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
        return "?";
    }
    const std::string& library() const { return library_; }

private:
    static constexpr int kOpN = 0, kR32F = 0, kR16F = 2, kCompute32F = 68, kGemmDefault = -1, kDefaultMath = 0;
    using Handle = void*;

    Cublas() {
        std::vector<std::string> candidates;
        if (const char* env = std::getenv("WEFT_LIBCUBLAS"); env && *env) candidates.push_back(env);
        if (*WEFT_BENCH_CUDA_LIB_DIR) candidates.push_back(std::string(WEFT_BENCH_CUDA_LIB_DIR) + "/libcublas.so");
        for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12"}) candidates.push_back(name);
        std::string tried;
        for (const std::string& name : candidates) {
            if ((lib_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
                library_ = name;
                break;
            }
            tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
        }
        if (!lib_) {
            error_ = "libcublas not found (set WEFT_LIBCUBLAS): " + tried;
            return;
        }
        int (*create)(Handle*) = nullptr;
        int (*set_math)(Handle, int) = nullptr;
        if (!find(create, "cublasCreate_v2") || !find(sgemm_, "cublasSgemm_v2") || !find(gemm_ex_, "cublasGemmEx") ||
            !find(set_math, "cublasSetMathMode")) {
            error_ = library_ + " lacks cublasCreate_v2, cublasSgemm_v2, cublasGemmEx or cublasSetMathMode";
            return;
        }
        find(get_version_, "cublasGetVersion_v2");
        if (int rc = create(&handle_); rc != 0) {
            error_ = "cublasCreate_v2 failed: cublasStatus_t " + std::to_string(rc);
            return;
        }
        if (int rc = set_math(handle_, kDefaultMath); rc != 0)
            error_ = "cublasSetMathMode failed: cublasStatus_t " + std::to_string(rc);
    }
    template <typename F>
    bool find(F& f, const char* symbol) {
        f = reinterpret_cast<F>(dlsym(lib_, symbol));
        return f != nullptr;
    }
    static void check(int rc, const char* what) {
        if (rc != 0) throw std::runtime_error(std::string(what) + " failed: cublasStatus_t " + std::to_string(rc));
    }

    void* lib_ = nullptr;
    Handle handle_ = nullptr;
    std::string library_, error_;
    int (*sgemm_)(Handle, int, int, int, int, int, const float*, const void*, int, const void*, int, const float*,
                  void*, int) = nullptr;
    int (*gemm_ex_)(Handle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                    const void*, void*, int, int, int, int) = nullptr;
    int (*get_version_)(Handle, int*) = nullptr;
};

}  // namespace cuda_bench
