// The calling convention between weft's runtime and the kernels it generates. Plain C so
// that JIT-compiled code, ahead-of-time objects and the C++ runtime agree on it.
//
// A kernel is  int32_t kernel(const WeftValue* args, const int32_t* type_codes, int32_t n).
// Tensor arguments pass a WeftTensorArg* in v_handle. The kernel's entry checks every
// argument (count, kind, rank, dtype, shape, strides) before touching memory, by calling
// weft_runtime_check_arguments with a table of what it expects; on a mismatch the kernel
// returns non-zero with the message set (weft_runtime_set_error), and the runtime throws
// weft::Error with that message. The LLVM backend also exports `name.unchecked`, the same
// kernel past that check, which Kernel::call runs after checking in C++.
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
// The kernel entry's argument checks, as data: count, kind, rank, dtype, shape, strides and
// alignment of every argument against `spec` (layout below, made by lower's argument_spec).
// Returns 1 when they all hold; else calls weft_runtime_set_error with a message naming the
// kernel, the argument and what differs, and returns 0. One call and one table instead of
// a branch per check keeps the entry small: the inline checks were a quarter to half of
// the JIT time of a kernel (the tiled GEMM: 8 ms of 30).
int32_t weft_runtime_check_arguments(const WeftValue* args, const int32_t* type_codes, int32_t num_args,
                                     const int64_t* spec, const char* names);
// Runs body over [0, n) on the thread pool, cut into contiguous chunks whose bounds depend
// only on n and the chunk count; returns the first non-zero code a chunk returned.
// work_per_iteration is the estimated work of one iteration (lowering's element stores,
// ir::attr::parallel_work; <= 0: unknown): a loop too small to pay for a second thread runs
// on the calling thread alone.
int32_t weft_runtime_parallel_for(WeftParallelBody body, void* closure, int64_t n, int64_t work_per_iteration);
// Asks Linux, once per process, for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM,
// XTILEDATA) that a kernel's AMX instructions need; returns 0 when granted, else sets the
// error (weft_runtime_set_error) and returns -1.
int32_t weft_runtime_request_amx(void);
// 64-byte aligned heap memory for "global" allocations inside a kernel.
void* weft_runtime_alloc(int64_t bytes);
void weft_runtime_free(void* p);
}

// The argument spec: int64 words. [number of arguments], then per argument its expected
// type code (WeftArgCode) and
//   a scalar: [how its value relates to a dimension seen before: WeftDimRule, a, b]
//   a tensor: [ndim, dtype code, dtype bits, dtype lanes, alignment in bytes (1: none)],
//             then per dimension [WeftDimRule, a, b].
// Strides are not in the spec: a tensor must be compact (row-major), which its own shape
// decides. `names` holds the kernel's name, then each argument's, each ending in '\0'.
enum WeftDimRule : int64_t {
    WEFT_DIM_IS_CONSTANT = 0,       // the extent is a
    WEFT_DIM_BINDS_SYMBOL = 1,      // first sight of a symbolic extent: any positive value
    WEFT_DIM_SAME_AS_DIM = 2,       // equals argument a's dimension b
    WEFT_DIM_SAME_AS_SCALAR = 3,    // equals scalar argument a
    WEFT_DIM_CHECKED_IN_KERNEL = 4  // an expression of symbols: an assert in the kernel checks it
};

// Intrinsics (ir::Call, CallKind::Intrinsic) the argument checks use to read the arguments.
// All take constant int64 argument positions:
//   weft.num_args()                -> int32
//   weft.arg_type_code(i)          -> int32
//   weft.arg_int(i)                -> int64      weft.arg_float(i) -> float64
//   weft.arg_data(i)               -> handle     weft.arg_ndim(i)  -> int32
//   weft.arg_shape(i, d)           -> int64      weft.arg_stride(i, d) -> int64
//   weft.arg_dtype_code(i), weft.arg_dtype_bits(i), weft.arg_dtype_lanes(i) -> int32
//   weft.assume_aligned(p, bytes)  -> p, known to be aligned (the runtime checked it)
//   weft.check_arguments()         -> bool: weft_runtime_check_arguments on the kernel's own
//                                     signature (false: it has set the error message)
// Other intrinsics: if_then_else(c, t, f) (only one branch evaluated), truncdiv, truncmod,
//   weft.prefetch(buffer, index) (Evaluate only), weft.amx_tdpbf16ps / weft.amx_tdpbusd(...)
//   (Evaluate only: AMX tile products, codegen/llvm/impl/emit_amx.hpp).
