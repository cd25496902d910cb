// Definitions for topi/x86.hpp's AMX parts: the tile intrinsics of matmuls and convolutions
// and the schedules that take them (codegen/llvm/impl/emit_amx.hpp lowers their calls).
#pragma once
#include "weft/ir/target.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"
#include "weft/topi/impl/nn_detail.hpp"
#include "weft/topi/injective.hpp"
#include "weft/topi/x86.hpp"

namespace weft::topi {
namespace amx_detail {

// The call topi's AMX intrinsics lower to (codegen/llvm/impl/emit_amx.hpp has its arguments).
ir::Stmt amx_call(const char* name, std::vector<Expr> args) {
    return ir::Evaluate::make(ir::Call::make(i32, name, std::move(args), ir::Call::CallKind::Intrinsic));
}

// An AMX tile intrinsic: C[16 rows, 16 cols blocks] (`acc`) += A[16 rows, K] (`a`) x B
// packed [cols blocks, K/step, 16, step] (`b`: that many panels of pack_dot_weight's layout),
// one weft.amx_* call over K's steps of 64 bytes, block by block (docs: topi/x86.hpp).
TensorIntrin amx_tile(int64_t K, int64_t rows, int64_t cols, int64_t blocks, int64_t step, DataType a_type,
                      DataType b_type, DataType acc, const char* call, const std::string& name) {
    const int64_t per_step = 64 / a_type.bytes();
    WEFT_CHECK(K >= per_step && K % per_step == 0, name, ": K must be a positive multiple of ", per_step, ", got ", K);
    WEFT_CHECK(rows >= 1 && rows <= 2 && cols >= 1 && cols <= 2 && blocks >= 1, name,
               ": blocks of 1 or 2 x 1 or 2 tiles, at least one, got ", blocks, " of ", rows, " x ", cols);
    Tensor a = placeholder({16 * rows, K}, a_type, "a"), b = placeholder({cols * blocks, K / step, 16, step}, b_type, "b");
    IterVar k = reduce_axis(0, K, "k");
    Tensor c = compute({16 * rows, 16 * cols * blocks}, [&](Expr i, Expr j) {
        return sum(cast(acc, a(i, k)) * cast(acc, b(j / 16, k / step, j % 16, k % step)), {k});
    }, "c", {"i", "j"});
    return decl_tensor_intrin(c, [K, per_step, step, rows, cols, blocks, call](const TensorIntrinCall& x) {
        Expr zero = make_int(0);
        // Rows of C and A: their tensors' last dimensions apart (whole tensors, row-major).
        Expr ldc = x.out.tensor.shape().back(), lda = x.inputs[0].tensor.shape().back();
        return amx_call(call, {x.output({zero, zero}), ldc, 16 * ldc, x.input(0, {zero, zero}), lda, 16 * lda,
                               x.input(1, {zero, zero, zero, zero}), make_int(16 * step), make_int(16 * K),
                               make_int(16), make_int(64), make_int(rows), make_int(cols), make_int(blocks),
                               make_int(K / per_step), make_int(per_step)});
    }, name + "_" + std::to_string(16 * rows) + "x" + std::to_string(16 * cols * blocks) + "x" + std::to_string(K) +
           (blocks > 1 ? "_" + std::to_string(blocks) + "_blocks" : ""));
}

}  // namespace amx_detail

TensorIntrin amx_bf16_tile(int64_t K, int64_t rows, int64_t cols, int64_t blocks) {
    return amx_detail::amx_tile(K, rows, cols, blocks, 2, bf16, bf16, f32, "weft.amx_tdpbf16ps", "x86.amx_bf16");
}

TensorIntrin amx_u8s8_tile(int64_t K, int64_t rows, int64_t cols, int64_t blocks) {
    return amx_detail::amx_tile(K, rows, cols, blocks, 4, u8, i8, i32, "weft.amx_tdpbusd", "x86.amx_u8s8");
}

bool has_amx_bf16(const Target& target) { return target.has_feature("amx-tile") && target.has_feature("amx-bf16"); }

bool has_amx_int8(const Target& target) { return target.has_feature("amx-tile") && target.has_feature("amx-int8"); }

namespace amx_detail {

// Whether op's extents are constants that AMX tiles fit (M and N multiples of 16, K of
// k_step), into m, n and k.
bool amx_fits(const Tensor& op, int64_t k_step, int64_t* m, int64_t* n, int64_t* k) {
    return nn_detail::const_extent(op.shape()[0], m) && nn_detail::const_extent(op.shape()[1], n) &&
           nn_detail::const_extent(op.reduce_axis(0).dom().extent, k) && *m % 16 == 0 && *n % 16 == 0 &&
           *k % k_step == 0;
}

// C in rows of blocks of 2 x 2 AMX tiles (32 x 32; 2 x 1, 1 x 2 or one tile where M or N is
// not a multiple of 32): each row of blocks one tensorized intrinsic over the whole K
// (`intrin`, whose steps take `k_step` elements of K), the rows in parallel. A block loads two
// A and two B tiles per step for four tdp instructions (a lone tile: two for one); a row's
// blocks share one tile configuration. `out` is op or op followed by element-wise operators:
// those run on each row of blocks right after its tiles, while the sums are in cache (as
// schedule_amx_conv's; the sums' buffer then holds whole rows, the strides the tiles take).
void schedule_amx_tiles(Schedule& s, const Tensor& op, const Tensor& out, int64_t k_step,
                        TensorIntrin (*intrin)(int64_t, int64_t, int64_t, int64_t), const char* name) {
    int64_t M = 0, N = 0, K = 0;
    WEFT_CHECK(amx_fits(op, k_step, &M, &N, &K), name, ": '", op.name(), "' is ", op.shape()[0], " x ",
               op.shape()[1], " over K = ", ir::arith::simplify(op.reduce_axis(0).dom().extent),
               "; AMX tiles need M and N multiples of 16 and K of ", k_step, " (pad, or schedule it without AMX)");
    const int64_t rows = M % 32 == 0 ? 2 : 1, cols = N % 32 == 0 ? 2 : 1;
    auto [io, ii] = s[op].split(op.axis(0), 16 * rows);
    s[op].tensorize(ii, intrin(K, rows, cols, N / (16 * cols)));
    if (out.same_as(op)) {
        s[op].parallel(io);
        return;
    }
    auto [oo, oi] = s[out].split(out.axis(0), 16 * rows);
    auto [jo, ji] = s[out].split(out.axis(1), 16);
    s[out].parallel(oo);
    s[out].vectorize(ji);
    s[op].compute_at(s[out], oo);
}

}  // namespace amx_detail

void schedule_matmul_bf16_amx(Schedule& s, const Tensor& c) {
    conv_detail::check_epilogue("schedule_matmul_bf16_amx", c, c);
    amx_detail::schedule_amx_tiles(s, c, c, 32, amx_bf16_tile, "schedule_matmul_bf16_amx");
}

void schedule_matmul_u8s8_amx(Schedule& s, const Tensor& c) {
    conv_detail::check_epilogue("schedule_matmul_u8s8_amx", c, c);
    amx_detail::schedule_amx_tiles(s, c, c, 64, amx_u8s8_tile, "schedule_matmul_u8s8_amx");
}

namespace amx_detail {

// A convolution's tile program: C [rows output rows, m pixels, 16 cols blocks channels] of
// one output block over the whole reduction (input channel blocks, kernel rows and columns,
// the block's channels in steps of 64 bytes, or of 32 where a block holds no multiple of 64:
// half a tile product's work, still far more than a vector's).
// Or, `flat` (conv2d_nchwc_bf16 / _u8s8's narrow layers of stride 1): C [16 rows pixels of the
// padded-width plane, ...], the input a flattened copy whose rows are `row` pixels wide.
struct ConvTiles {
    int64_t CB, KH, KW, ib, sh, sw;  // input blocks, kernel, channels a block, strides
    int64_t m, rows, cols, blocks;   // pixels a tile, tile rows, tile columns a block, blocks
    int64_t step_bytes;              // 64 or 32
    bool flat = false;
    int64_t row = 0;                 // flat: the padded input's width
};

// conv2d_nchwc_bf16 / _u8s8's stage over one tile program: the weight [CB, KH, KW, ib/step,
// 16 cols blocks, step] and the data: rows of pixels, [CB, rows sh + KH, m sw + KW, ib] (the
// padded input's window; C [rows, m, 16 cols blocks]), or flat, [CB, 16 rows + (KH - 1) row +
// KW - 1, ib] (the flattened copy from the tile's first pixel on; C [16 rows, 16 cols blocks]).
TensorIntrin amx_conv_tile(const ConvTiles& t, int64_t step, DataType a_type, DataType b_type, DataType acc,
                           const char* call, const std::string& name) {
    const int64_t per_step = t.step_bytes / a_type.bytes(), width = 16 * t.cols * t.blocks, pixels = 16 * t.rows;
    Tensor a = t.flat ? placeholder({t.CB, pixels + (t.KH - 1) * t.row + t.KW - 1, t.ib}, a_type, "a")
                      : placeholder({t.CB, (t.rows - 1) * t.sh + t.KH, (t.m - 1) * t.sw + t.KW, t.ib}, a_type, "a");
    Tensor b = placeholder({t.CB, t.KH, t.KW, t.ib / step, width, step}, b_type, "b");
    IterVar ic = reduce_axis(0, t.CB, "icb"), kh = reduce_axis(0, t.KH, "kh"), kw = reduce_axis(0, t.KW, "kw"),
            ip = reduce_axis(0, t.ib / step, "icp"), lane = reduce_axis(0, step, "ici");
    auto dot = [&](const Expr& in, const Expr& j) {
        return sum(cast(acc, in) * cast(acc, b(ic, kh, kw, ip, j, lane)), {ic, kh, kw, ip, lane});
    };
    Tensor c = t.flat ? compute({pixels, width}, [&](Expr q, Expr j) {
        return dot(a(ic, q + kh * t.row + kw, ip * step + lane), j);
    }, "c", {"q", "j"}) : compute({t.rows, t.m, width}, [&](Expr r, Expr i, Expr j) {
        return dot(a(ic, r * t.sh + kh, i * t.sw + kw, ip * step + lane), j);
    }, "c", {"r", "i", "j"});
    std::string id = name + (t.flat ? "_flat_conv_" : "_conv_") + std::to_string(t.rows) + "x" + std::to_string(t.m) +
                     "x" + std::to_string(width);
    for (int64_t v : {t.CB, t.KH, t.KW, t.ib, t.sh, t.sw, t.row, t.cols, t.step_bytes}) id += "_" + std::to_string(v);
    return decl_tensor_intrin(c, [t, step, per_step, call](const TensorIntrinCall& x) {
        // Whole tensors, row-major: out [.., OH, OW, ob] (flat: [.., Q, ob]), data [.., Hp, Wp,
        // ib] (flat: [.., F, ib]), weight [.., ib/step, ob, step].
        auto dim = [](const Tensor& u, size_t from_end) { return u.shape()[u.shape().size() - from_end]; };
        auto origin = [](const TensorIntrinCall::Operand& o) { return std::vector<Expr>(o.intrin_shape.size(), make_int(0)); };
        const Tensor &out = x.out.tensor, &in = x.inputs[0].tensor, &w = x.inputs[1].tensor;
        Expr ob = dim(out, 1), row = t.flat ? Expr(make_int(t.row * t.ib)) : dim(in, 2) * t.ib;
        // A tile's rows: pixels sw apart; the next tile row: 16 pixels on (flat) or sh rows down.
        Expr lda = make_int(t.sw * t.ib), a_next = t.flat ? Expr(make_int(16 * t.ib)) : t.sh * row;
        Expr c_next = t.flat ? 16 * ob : dim(out, 2) * ob, block = t.flat ? dim(in, 2) * t.ib : dim(in, 3) * row;
        return amx_call(call, {x.output(origin(x.out)), ob, c_next, x.input(0, origin(x.inputs[0])), lda, a_next,
                               x.input(1, origin(x.inputs[1])), dim(w, 2) * step, make_int(16 * step), make_int(t.m),
                               make_int(t.step_bytes), make_int(t.rows), make_int(t.cols), make_int(t.blocks),
                               make_int(t.CB), block, make_int(t.KH), row, make_int(t.KW), make_int(t.ib),
                               make_int(t.ib / per_step), make_int(per_step)});
    }, id);
}

int64_t const_int(const Expr& e) {
    int64_t v = -1;
    return nn_detail::const_extent(e, &v) ? v : -1;
}

// Whether the convolution stage `op` (conv2d_nchwc_bf16 / _u8s8: out [N, OB, OH, OW, ob],
// summed over data [N, CB, H, W, ib] read in place without padding or from a padded copy,
// and the packed weight) fits AMX tiles over data of `bytes` a channel: constant extents, ib
// channels 32 or a multiple of 64 bytes, ob a multiple of 16, no taps left out of the sum (a
// padded input is read from its copy); into `t`.
bool conv_fits(const Tensor& op, int64_t bytes, ConvTiles* t) {
    const auto* reduce = op.op()->body.empty() ? nullptr : op.op()->body[0].as<ir::Reduce>();
    const size_t dims = op.ndim();  // 5: [N, OB, OH, OW, ob]; 4: flat, [N, OB, Q, ob]
    if (!reduce || (dims != 5 && dims != 4) || reduce->axis.size() != 5) return false;
    int64_t truth = 0;
    if (reduce->condition.defined() && !(ir::as_const_int(reduce->condition, &truth) && truth)) return false;
    const ir::ProducerLoad* data = nullptr;
    ir::post_order_visit(reduce->source[0], [&](const ir::Object* n) {
        if (n->kind == ir::NodeKind::ProducerLoad && static_cast<const ir::ProducerLoad*>(n)->indices.size() == dims)
            data = static_cast<const ir::ProducerLoad*>(n);
    });
    if (!data) return false;
    // The strides: how far the data's row and column move with one output row and column
    // (flat: with one pixel, and one kernel row).
    auto moves = [&](const Expr& index, const IterVar& axis) {
        std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> one{{axis.var(), make_int(1)}}, zero{{axis.var(), make_int(0)}};
        return const_int(ir::arith::simplify(ir::substitute(index, one) - ir::substitute(index, zero)));
    };
    const auto& ax = op.op()->axis;
    t->flat = dims == 4;
    t->CB = const_int(reduce->axis[0].dom().extent);
    t->KH = const_int(reduce->axis[1].dom().extent);
    t->KW = const_int(reduce->axis[2].dom().extent);
    const int64_t steps = const_int(reduce->axis[3].dom().extent), lanes = const_int(reduce->axis[4].dom().extent);
    t->ib = steps * lanes;
    t->sh = moves(data->indices[2], ax[2]);
    t->sw = t->flat ? t->sh : moves(data->indices[3], ax[3]);
    t->row = t->flat ? moves(data->indices[2], reduce->axis[1]) : 0;
    // OW: the pixels a tile's rows run over (flat: all of them).
    const int64_t OH = t->flat ? 1 : const_int(op.shape()[2]), OW = const_int(op.shape()[dims - 2]),
                  ob = const_int(op.shape()[dims - 1]);
    t->step_bytes = t->ib * bytes % 64 == 0 ? 64 : 32;
    if (std::min({t->CB, t->KH, t->KW, steps, lanes, t->sh, t->sw, OH, OW, ob}) < 1 ||
        t->ib * bytes % t->step_bytes != 0 || ob % 16 != 0 || (t->flat && (t->sh != 1 || t->row < t->KW || OW < 16)))
        return false;
    // A computed input (the padded copy) must hold exactly the rows and columns the windows
    // read: bound inference realizes no more than that, and the tiles step through its rows.
    for (const Tensor& in : op.op().input_tensors())
        if (in.ndim() == dims && in.op()->is_compute() &&
            (t->flat ? const_int(in.shape()[2]) != OW + (t->KH - 1) * t->row + t->KW - 1
                     : const_int(in.shape()[2]) != (OH - 1) * t->sh + t->KH ||
                           const_int(in.shape()[3]) != (OW - 1) * t->sw + t->KW))
            return false;
    // Tiles of a divisor of the row's pixels (at most 16, a tile's rows), two output rows a
    // block where the height is even (flat: tiles of 16 pixels, two a block where 32 fit, the
    // last block shifted back onto the one before); two 16-channel columns a block where ob
    // allows.
    t->m = t->flat ? 16 : conv_detail::largest_divisor_at_most(OW, 16);
    t->rows = t->flat ? (OW >= 32 ? 2 : 1) : OH % 2 == 0 ? 2 : 1;
    t->cols = ob % 32 == 0 ? 2 : 1;
    t->blocks = ob / (16 * t->cols);
    return true;
}

// The convolution on AMX tiles (conv_fits): a padded copy of the input first (its rows in
// parallel), then per output block and `rows` output rows (a task) the tile programs of their
// pixels, and `out`'s epilogue right after them over the same rows, while the float32 / int32
// sums are in cache (at the root, the sums made a round trip through memory that cost the
// 1x1 layers of ResNet-50, whose reduction is short, half their time). The sums' buffer then
// holds the task's rows: whole rows of whole blocks, the strides the tile program takes from
// the tensor's shape.
void schedule_amx_conv(Schedule& s, const Tensor& op, const Tensor& out, const ConvTiles& t, const TensorIntrin& intrin) {
    for (auto& in : op.op().input_tensors())
        if (in.op()->is_compute() && in.ndim() == 5) {
            s[in].compute_root();
            s[in].parallel(s[in].fuse(s[in].fuse(in.axis(0), in.axis(1)), in.axis(2)));
            s[in].vectorize(in.axis(4));
        }
    auto [oyo, oyi] = s[op].split(op.axis(2), t.rows);
    auto [oxo, oxi] = s[op].split(op.axis(3), t.m);
    s[op].reorder({op.axis(0), op.axis(1), oyo, oxo, oyi, oxi, op.axis(4)});
    s[op].tensorize(oyi, intrin);
    if (out.same_as(op)) {
        s[op].parallel(s[op].fuse(s[op].fuse(op.axis(0), op.axis(1)), oyo));
        return;
    }
    auto [yo, yi] = s[out].split(out.axis(2), t.rows);
    auto [co, ci] = s[out].split(out.axis(4), 16);
    s[out].reorder({out.axis(0), out.axis(1), yo, yi, out.axis(3), co, ci});
    IterVar task = s[out].fuse(s[out].fuse(out.axis(0), out.axis(1)), yo);
    s[out].parallel(task);
    s[out].vectorize(ci);
    s[op].compute_at(s[out], task);
}

// The flat convolution on AMX tiles (conv_fits with `flat`): the flattened copy of the input
// first, then the sums over the padded-width plane at the root (a narrow layer's: small), each
// output block's tile pairs in parallel; `unflat` (the output pixels read from the sums) inlined
// into `out`'s epilogue, or `out` itself.
void schedule_amx_flat_conv(Schedule& s, const Tensor& unflat, const Tensor& ext, const Tensor& out, const ConvTiles& t,
                            const TensorIntrin& intrin) {
    for (auto& in : ext.op().input_tensors())
        if (in.op()->is_compute() && in.ndim() == 4) {
            s[in].compute_root();
            s[in].parallel(s[in].fuse(in.axis(0), in.axis(1)));
            s[in].vectorize(in.axis(3));
        }
    s[ext].compute_root();
    // (The last tiles start where they end with the plane, recomputing a few pixels: the
    // whole reduction is in each call, after the pixels' sums are zeroed.)
    auto [qo, qi] = s[ext].split(ext.axis(2), 16 * t.rows, TailStrategy::ShiftInwards);
    s[ext].parallel(s[ext].fuse(s[ext].fuse(ext.axis(0), ext.axis(1)), qo));
    s[ext].tensorize(qi, intrin);
    if (!out.same_as(unflat)) s[unflat].compute_inline();
    auto [co, ci] = s[out].split(out.axis(4), 16);
    s[out].parallel(s[out].fuse(s[out].fuse(out.axis(0), out.axis(1)), out.axis(2)));
    s[out].vectorize(ci);
}

}  // namespace amx_detail

}  // namespace weft::topi
