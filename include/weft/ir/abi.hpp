// The calling convention between weft's runtime and the kernels it generates. Plain C so
// that JIT-compiled code, ahead-of-time objects and the C++ runtime agree on it.
//
// A kernel is  int32_t kernel(const WeftValue* args, const int32_t* type_codes, int32_t n).
// Tensor arguments pass a WeftTensorArg* in v_handle. The kernel's entry checks every
// argument (count, kind, rank, dtype, shape, strides) before touching memory; on a mismatch
// it calls weft_runtime_set_error(message) and returns non-zero, and the runtime throws
// weft::Error with that message.
#pragma once
#include <cstdint>

extern "C" {

struct WeftTensorArg {
    void* data;
    const int64_t* shape;
    const int64_t* strides;  // in elements
    int32_t ndim;
    uint8_t dtype_code;  // DataType::Code
    uint8_t dtype_bits;
    uint16_t dtype_lanes;
};

union WeftValue {
    int64_t v_int;
    double v_float;
    void* v_handle;
};

enum WeftArgCode : int32_t { WEFT_ARG_INT = 0, WEFT_ARG_FLOAT = 1, WEFT_ARG_TENSOR = 2 };

typedef int32_t (*WeftKernelFn)(const WeftValue* args, const int32_t* type_codes, int32_t num_args);

// The body of a parallel loop: runs iterations [begin, end) of it.
typedef int32_t (*WeftParallelBody)(int64_t begin, int64_t end, void* closure);

// Runtime functions the generated code calls (registered with the JIT by address).
void weft_runtime_set_error(const char* message);
// Runs body over [0, n) split statically into one contiguous chunk per worker; returns the
// first non-zero code a chunk returned.
int32_t weft_runtime_parallel_for(WeftParallelBody body, void* closure, int64_t n);
// 64-byte aligned heap memory for "global" allocations inside a kernel.
void* weft_runtime_alloc(int64_t bytes);
void weft_runtime_free(void* p);
}

// Intrinsics (ir::Call, CallKind::Intrinsic) the argument checks use to read the arguments.
// All take constant int64 argument positions:
//   weft.num_args()                -> int32
//   weft.arg_type_code(i)          -> int32
//   weft.arg_int(i)                -> int64      weft.arg_float(i) -> float64
//   weft.arg_data(i)               -> handle     weft.arg_ndim(i)  -> int32
//   weft.arg_shape(i, d)           -> int64      weft.arg_stride(i, d) -> int64
//   weft.arg_dtype_code(i), weft.arg_dtype_bits(i), weft.arg_dtype_lanes(i) -> int32
//   weft.is_aligned(p, bytes)      -> bool       weft.assume_aligned(p, bytes) -> p, known aligned
// Other intrinsics: if_then_else(c, t, f) (only one branch evaluated), truncdiv, truncmod,
//   weft.prefetch(buffer, index) (Evaluate only).
