// Tensor intrinsics: a hardware instruction (or a hand-written micro-kernel) declared by
// its behaviour in the tensor language plus its lowering. `s[C].tensorize(axis, intrin)`
// (schedule.hpp) replaces the loop nest of C from `axis` inward by the intrinsic, after
// checking that the nest computes exactly what the description computes.
//
//   // 16 int32 lanes += dot products of 4 u8 with 4 s8 each: AVX-512 VNNI's vpdpbusd.
//   Tensor a = placeholder({4}, u8, "a"), b = placeholder({16, 4}, i8, "b");
//   IterVar k = reduce_axis(0, 4, "k");
//   Tensor c = compute({16}, [&](Expr j) { return sum(cast(i32, a(k)) * cast(i32, b(j, k)), {k}); }, "c");
//   TensorIntrin dot = decl_tensor_intrin(c, [](const TensorIntrinCall& x) {
//       Expr acc = x.output({0}, 16), av = reinterpret(i32, x.input(0, {0}, 4));
//       Expr bv = reinterpret(i32.with_lanes(16), x.input(1, {0, 0}, 64));
//       return x.store({0}, call_llvm_intrin(acc.type(), "llvm.x86.avx512.vpdpbusd.512", {acc, broadcast(av, 16), bv}));
//   }, "vnni_dot_16x4");
//
// topi/x86.hpp declares the ones weft ships (VNNI, AVX512_BF16).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/ir/stmt.hpp"
#include "weft/te/operation.hpp"

namespace weft::te {

// What a lowering sees: where the matched loop nest's region of each operand starts.
// Indices are relative to that origin, one per dimension of the description's operand.
class TensorIntrinCall {
public:
    struct Operand {
        Tensor tensor;                 // the tensor of the scheduled computation
        std::vector<Expr> origin;      // its indices at the region's origin (all dimensions)
        std::vector<Expr> intrin_shape;  // the description's operand shape (trailing dimensions)
    };

    // A read of input i (in the order the description first reads them). lanes > 1: that
    // many consecutive elements from there, one dense vector load; it may run across the
    // operand's trailing dimensions when they are laid out compactly (all 64 bytes of a
    // 16x4 block), which is checked.
    Expr input(int i, const std::vector<Expr>& index, int lanes = 1) const;
    // The output (accumulator) at index: read it, and write a value there.
    Expr output(const std::vector<Expr>& index, int lanes = 1) const;
    ir::Stmt store(const std::vector<Expr>& index, Expr value) const;
    int num_inputs() const { return int(inputs.size()); }

    std::vector<Operand> inputs;
    Operand out;
    std::string intrin_name;
};

using TensorIntrinLowering = std::function<ir::Stmt(const TensorIntrinCall&)>;

struct TensorIntrinNode : ir::Object {
    std::string name;
    Tensor desc;                  // what it computes, over placeholders
    std::vector<Tensor> inputs;   // desc's placeholders, in order of first read
    // Emits the code. For a reduction it accumulates into the output (weft initializes the
    // output before the reduction loops, as for any reduction); otherwise it writes it.
    TensorIntrinLowering lower;
    TensorIntrinNode(std::string n, Tensor d, std::vector<Tensor> in, TensorIntrinLowering l)
        : ir::Object(ir::NodeKind::Object), name(std::move(n)), desc(std::move(d)), inputs(std::move(in)),
          lower(std::move(l)) {}
};

class TensorIntrin : public ir::Handle<TensorIntrinNode> {
public:
    using Handle::Handle;
    const std::string& name() const { return ptr_->name; }
};

// Declares (and registers by name, so schedules that use it replay from JSON) an intrinsic.
// `desc` must be a compute whose inputs are all placeholders; a second declaration with the
// same name replaces the first.
TensorIntrin decl_tensor_intrin(const Tensor& desc, TensorIntrinLowering lower, std::string name);
// A registered intrinsic, or a weft::Error listing the registered names.
TensorIntrin lookup_tensor_intrin(const std::string& name);

}  // namespace weft::te

namespace weft {
using te::decl_tensor_intrin;
using te::lookup_tensor_intrin;
using te::TensorIntrin;
using te::TensorIntrinCall;
}  // namespace weft
