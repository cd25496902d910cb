// CodeGenCUDA: the lowered GPU kernel as CUDA C. One statement of IR becomes one or a few
// lines of C, so the output reads like the printed loop program:
//  - the kernel is `extern "C" __global__ void __launch_bounds__(threads) name(float* __restrict__ A,
//    ..., int n)`; thread_index(tag) is threadIdx.x / blockIdx.y / ...;
//  - "shared" buffers are __shared__ arrays, "local" ones per-thread arrays (registers when
//    the compiler can index them statically);
//  - vector code (Ramp/Broadcast, from vectorize) is written per lane, except that a
//    contiguous load or store of 2 or 4 lanes of a 4-byte type at an index provably a
//    multiple of the lanes is one float2/float4/int2/int4 access (aligned: kernel
//    arguments are assumed 16-byte aligned, as cudaMalloc gives, and local/shared arrays
//    are declared __align__(16));
//  - integer / and % are floor division (ir/expr.hpp): plain C operators where both sides
//    are provably non-negative (index arithmetic), weft_floordiv/weft_floormod otherwise;
//  - float16 is __half (cuda_fp16.h) and bfloat16 __nv_bfloat16 (cuda_bf16.h); their math
//    functions compute in float;
//  - index arithmetic (loop counters, thread indices) is 32-bit when every tensor argument
//    has a constant shape of fewer than 2^31 elements, 64-bit otherwise.
//
// The member functions are defined by topic in the files next to this one: names (C names
// of variables, buffers and the kernel; C types), emit_expr (expressions, literals, math
// and other calls), emit_memory (vector indices, float4-style accesses, stores), emit_stmt
// (statements) and emit_kernel (the whole kernel: launch extents, parameters, headers).
#pragma once
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/module.hpp"

namespace weft::codegen::cuda_detail {

using ir::Expr;
using ir::Stmt;
using ir::Var;

class CodeGenCUDA {
public:
    CodeGenCUDA(const ir::PrimFunc& f, const Target& target) : f_(f), target_(target) {}
    // The kernel's DeviceCode, without ptx (emit_kernel.hpp).
    DeviceCode generate();

private:
    // ---- names and types (names.hpp) ----
    static std::string identifier(const std::string& s);
    static std::string kernel_identifier(const std::string& s);
    std::string bind_name(const Var& v, const std::string& hint = "");
    const std::string& name_of(const Var& v);
    std::string type_name(DataType t);
    std::string index_type_name() const;
    bool is_half(DataType t) const;
    std::string to_float(DataType t, const std::string& v) const;
    std::string from_float(DataType t, const std::string& v);
    bool index_fits_int32() const;

    // ---- expressions (emit_expr.hpp) ----
    // e as a C expression; lane picks one lane of a vector expression (-1 for a scalar).
    std::string expr(const Expr& e, int lane = -1);
    std::string call(const ir::Call* op, int lane);
    std::string call_math(const ir::Call* op, int lane);
    std::string bit_intrinsic(const ir::Call* op, int lane);
    std::string vector_reduce(const ir::Call* op);
    std::string min_max(bool is_min, DataType t, const std::string& x, const std::string& y);
    std::string binary(const char* op, const Expr& a, const Expr& b, int lane);
    std::string int_literal(DataType t, int64_t v) const;
    std::string float_literal(DataType t, double v);
    bool nonneg(const Expr& e) const;

    // ---- vector accesses and stores (emit_memory.hpp) ----
    static Expr normalize_vector_index(const Expr& e);
    std::string vector_type(DataType t, const Expr& index) const;
    void hoist_vector_loads(const Expr& e);
    void emit_store(const ir::Store* op);

    // ---- statements (emit_stmt.hpp) ----
    std::ostream& line();  // a new line of the body, indented (emit_memory.hpp writes with it too)
    void emit_stmt(const Stmt& s);

    // ---- the kernel (emit_kernel.hpp) ----
    static std::string floordiv_helpers();

    const ir::PrimFunc& f_;
    const Target& target_;
    std::ostringstream body_;
    int indent_ = 0;
    bool narrow_index_ = false, uses_f16_ = false, uses_bf16_ = false, uses_floordiv_ = false;
    std::unordered_map<const ir::Object*, std::string> names_;
    std::set<std::string> used_names_;
    std::unordered_map<const ir::Object*, DataType> buffer_types_;
    std::unordered_set<const ir::Object*> nonneg_;       // variables known >= 0
    std::unordered_set<const ir::Object*> vector_vars_;  // lets of vector values: arrays
    std::unordered_map<const ir::Object*, std::string> hoisted_;  // vector loads read into a temporary
    std::unordered_map<std::string, std::string> hoisted_by_address_;
    int temp_counter_ = 0;
};

}  // namespace weft::codegen::cuda_detail
