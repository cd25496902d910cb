// Definitions for topi/x86.hpp.
#include <functional>

#include "weft/ir/target.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"
#include "weft/topi/impl/nn_detail.hpp"
#include "weft/topi/impl/x86_amx.hpp"
#include "weft/topi/injective.hpp"
#include "weft/topi/x86.hpp"

namespace weft::topi::conv_detail {
// conv_checks.hpp, compiled with the convolutions.
Expr inside_input(const Expr& y, const Expr& x, Pad2d pad, const Expr& H, const Expr& W);
Tensor pad_spatial(const Tensor& data, Pad2d pad, int h_axis, const std::string& name, int64_t channel_block,
                   const Expr& pad_value);
}  // namespace weft::topi::conv_detail

namespace weft::topi {
namespace {

int64_t const_dim(const Tensor& t, int d, const char* op) {
    int64_t v = 0;
    WEFT_CHECK(ir::as_const_int(t.shape()[size_t(d)], &v), op, ": dimension ", d, " of '", t.name(),
               "' must be a constant");
    return v;
}

void check_dtype(const Tensor& t, DataType want, const char* op, const char* role) {
    WEFT_CHECK(t.dtype() == want, op, ": ", role, " '", t.name(), "' must be ", want.str(), ", got ", t.dtype().str());
}

}  // namespace

TensorIntrin vnni_dot_16x4() {
    static const TensorIntrin intrin = [] {
        Tensor a = placeholder({4}, u8, "a"), b = placeholder({16, 4}, i8, "b");
        IterVar k = reduce_axis(0, 4, "k");
        Tensor c = compute({16}, [&](Expr j) { return sum(cast(i32, a(k)) * cast(i32, b(j, k)), {k}); }, "c", {"j"});
        return decl_tensor_intrin(c, [](const TensorIntrinCall& x) {
            Expr zero = make_int(0);
            Expr acc = x.output({zero}, 16);
            Expr quad = reinterpret(i32, x.input(0, {zero}, 4));  // the 4 bytes of a as one int32
            Expr bytes = reinterpret(i32.with_lanes(16), x.input(1, {zero, zero}, 64));
            return x.store({zero}, call_llvm_intrin(acc.type(), "llvm.x86.avx512.vpdpbusd.512",
                                                    {acc, broadcast(quad, 16), bytes}));
        }, "x86.vnni_dot_16x4");
    }();
    return intrin;
}

bool host_has_vnni() { return Target::host().has_feature("avx512vnni"); }

TensorIntrin bf16_dot_16x2() {
    static const TensorIntrin intrin = [] {
        Tensor a = placeholder({2}, bf16, "a"), b = placeholder({16, 2}, bf16, "b");
        IterVar k = reduce_axis(0, 2, "k");
        Tensor c = compute({16}, [&](Expr j) { return sum(cast(f32, a(k)) * cast(f32, b(j, k)), {k}); }, "c", {"j"});
        return decl_tensor_intrin(c, [](const TensorIntrinCall& x) {
            Expr zero = make_int(0);
            Expr acc = x.output({zero}, 16);
            Expr pair = reinterpret(i32, x.input(0, {zero}, 2));  // a's 2 bfloat16 as one int32
            Expr pairs = reinterpret(bf16.with_lanes(32), broadcast(pair, 16));
            Expr columns = x.input(1, {zero, zero}, 32);
            return x.store({zero}, call_llvm_intrin(acc.type(), "llvm.x86.avx512bf16.dpbf16ps.512",
                                                    {acc, pairs, columns}));
        }, "x86.bf16_dot_16x2");
    }();
    return intrin;
}

bool host_has_avx512_bf16() { return Target::host().has_feature("avx512bf16"); }

namespace {

// The weights of a dot-product instruction that reduces `step` elements into each of 16
// lanes: B [K, N] -> [N/16, K/step, 16, step].
Tensor pack_dot_weight(const Tensor& b, int64_t step, DataType dtype, const char* op, std::string name) {
    WEFT_CHECK(b.ndim() == 2, op, ": '", b.name(), "' must be 2-D [K, N], has ", b.ndim(), " dimensions");
    check_dtype(b, dtype, op, "weight");
    int64_t K = const_dim(b, 0, op), N = const_dim(b, 1, op);
    WEFT_CHECK(K % step == 0 && N % 16 == 0, op, ": '", b.name(), "' is ", K, " x ", N, "; K must be a multiple of ",
               step, " and N of 16 (pad the weight)");
    return compute({N / 16, K / step, int64_t(16), step},
                   [&](Expr no, Expr ko, Expr ni, Expr ki) { return b(ko * step + ki, no * 16 + ni); }, name);
}

// C [M, N] = A [M, K] x B packed by pack_dot_weight, the products and sums in `acc`.
struct DotMatmul {
    int64_t step;
    DataType a, b, acc;
    const char *op, *packer;
};

Tensor dot_matmul(const Tensor& a, const Tensor& bp, const DotMatmul& d, std::string name) {
    const char* op = d.op;
    WEFT_CHECK(a.ndim() == 2, op, ": '", a.name(), "' must be 2-D [M, K], has ", a.ndim(), " dimensions");
    WEFT_CHECK(bp.ndim() == 4, op, ": '", bp.name(), "' must be packed by ", d.packer, " [N/16, K/", d.step, ", 16, ",
               d.step, "]");
    check_dtype(a, d.a, op, "input");
    check_dtype(bp, d.b, op, "weight");
    int64_t K = const_dim(a, 1, op), Ks = const_dim(bp, 1, op);
    WEFT_CHECK(K == d.step * Ks && const_dim(bp, 2, op) == 16 && const_dim(bp, 3, op) == d.step, op, ": '", a.name(),
               "' has K = ", K, " but the packed weight '", bp.name(), "' holds K = ", d.step * Ks);
    IterVar k = reduce_axis(0, K, "k");
    const int64_t step = d.step;
    return compute({a.shape()[0], const_dim(bp, 0, op) * 16}, [&](Expr i, Expr j) {
        return sum(cast(d.acc, a(i, k)) * cast(d.acc, bp(j / 16, k / step, j % 16, k % step)), {k});
    }, name);
}

}  // namespace

Tensor pack_vnni_weight(const Tensor& b, std::string name) { return pack_dot_weight(b, 4, i8, "pack_vnni_weight", name); }

Tensor matmul_u8s8(const Tensor& a, const Tensor& bp, std::string name) {
    return dot_matmul(a, bp, {4, u8, i8, i32, "matmul_u8s8", "pack_vnni_weight"}, std::move(name));
}

Tensor pack_bf16_weight(const Tensor& b, std::string name) { return pack_dot_weight(b, 2, bf16, "pack_bf16_weight", name); }

Tensor matmul_bf16(const Tensor& a, const Tensor& bp, std::string name) {
    return dot_matmul(a, bp, {2, bf16, bf16, f32, "matmul_bf16", "pack_bf16_weight"}, std::move(name));
}

namespace {

// A matmul `op` whose reduction runs in steps of `step` (4 bytes, 2 bfloat16) as `dot`, 16
// columns at a time; `out` is op or op followed by element-wise operators (a fused bias and
// activation, computed from each register tile). Without `dot`, the same tile of FMAs (or
// of int32 multiply-adds).
void schedule_dot_matmul(Schedule& s, const Tensor& op, const Tensor& out, int64_t step, const TensorIntrin* dot,
                         const char* name) {
    conv_detail::check_epilogue(name, op, out);
    const int64_t N = const_dim(out, 1, name);
    const int64_t nr = N % 64 == 0 ? 64 : N % 32 == 0 ? 32 : 16;  // columns per tile (4 zmm)
    Tensor acc = conv_detail::tile_accumulator(s, op, out);
    auto [io, jo, ii, ji] = s[out].tile(out.axis(0), out.axis(1), 6, nr);
    // Column panels outermost: the packed weight panel (nr x K) stays in L2 while every row
    // tile streams past it; panels split across threads, or the row tiles where there is one
    // panel (64 columns or fewer: fusing the two loops cost 2.5x, the row tiles' tail then
    // guarded in every tile).
    s[out].reorder({jo, io, ii, ji});
    s[out].parallel(N / nr > 1 ? jo : io);
    s[out].vectorize(ji);
    s[acc].compute_at(s[out], io);
    auto [cjo, cji] = s[acc].split(acc.axis(1), 16);
    auto [ko, ki] = s[acc].split(acc.reduce_axis(0), step);
    // Up to 8 steps unrolled: a step is one instruction per accumulator, and the loop's
    // counter and address updates took issue slots from them (docs/performance.md, "VNNI
    // schedules: unrolling").
    int64_t K = 0;
    nn_detail::const_extent(op.reduce_axis(0).dom().extent, &K);
    auto [kso, ksi] = s[acc].split(ko, conv_detail::largest_divisor_at_most(K / step, 8));
    s[acc].unroll(ksi);
    s[acc].unroll(acc.axis(0));
    s[acc].unroll(cjo);
    if (dot) {
        s[acc].reorder({kso, ksi, acc.axis(0), cjo, cji, ki});
        s[acc].tensorize(cji, *dot);
    } else {
        s[acc].reorder({kso, ksi, ki, acc.axis(0), cjo, cji});
        s[acc].unroll(ki);
        s[acc].vectorize(cji);
    }
}

}  // namespace

void schedule_matmul_u8s8(Schedule& s, const Tensor& c) {
    const TensorIntrin dot = vnni_dot_16x4();
    schedule_dot_matmul(s, c, c, 4, &dot, "schedule_matmul_u8s8");
}

void schedule_matmul_bf16(Schedule& s, const Tensor& c) {
    const TensorIntrin dot = bf16_dot_16x2();
    schedule_dot_matmul(s, c, c, 2, &dot, "schedule_matmul_bf16");
}

namespace {

// On AMX tiles where the target has them (`amx`) and op's extents fit (K a multiple of
// `amx_k`), an epilogue (`out` after op) after each row of tile blocks; else the register
// tile of dot-product instructions (`dot` where `has_dot`, in steps of `step`), or of FMAs,
// with the epilogue computed from each tile.
void schedule_low_precision_matmul(Schedule& s, const Tensor& op, const Tensor& out, bool amx,
                                   int64_t amx_k, TensorIntrin (*amx_intrin)(int64_t, int64_t, int64_t, int64_t),
                                   int64_t step, const TensorIntrin& dot, bool has_dot, const char* name) {
    int64_t m = 0, n = 0, k = 0;
    if (!amx || !amx_detail::amx_fits(op, amx_k, &m, &n, &k)) return schedule_dot_matmul(s, op, out, step, has_dot ? &dot : nullptr, name);
    conv_detail::check_epilogue(name, op, out);
    amx_detail::schedule_amx_tiles(s, op, out, amx_k, amx_intrin, name);
}

}  // namespace

void schedule_matmul_u8s8(Schedule& s, const Tensor& op, const Tensor& out, const Target& target) {
    schedule_low_precision_matmul(s, op, out, has_amx_int8(target), 64, amx_u8s8_tile, 4, vnni_dot_16x4(),
                                  target.has_feature("avx512vnni"), "schedule_matmul_u8s8");
}

void schedule_matmul_bf16(Schedule& s, const Tensor& op, const Tensor& out, const Target& target) {
    schedule_low_precision_matmul(s, op, out, has_amx_bf16(target), 32, amx_bf16_tile, 2, bf16_dot_16x2(),
                                  target.has_feature("avx512bf16"), "schedule_matmul_bf16");
}

namespace {

// A convolution in conv2d_nchwc's blocked layout whose reduction over input channels runs in
// steps of `step` (2 bfloat16, 4 bytes) as one dot-product instruction per 16 output channels.
struct DotConv {
    int64_t step;
    DataType data, weight, acc;
    const char *op, *packer;
};

// conv2d_nchwc's weight blocks [O/ob, C/wib, KH, KW, wib, ob] -> [O/ob, C/ib, KH, KW, ib/step,
// ob, step] in `dtype` (a cast: rounded to nearest even for bfloat16, the same values for int8).
Tensor pack_conv2d_nchwc_dot_weight(const Tensor& w, int64_t ib, int64_t step, DataType dtype, const char* op,
                                    std::string name) {
    WEFT_CHECK(w.ndim() == 6, op, ": '", w.name(), "' must be conv2d_nchwc's packed weight [O/ob, C/wib, KH, KW, wib, ob]");
    const int64_t OB = const_dim(w, 0, op), WB = const_dim(w, 1, op), KH = const_dim(w, 2, op),
                  KW = const_dim(w, 3, op), wib = const_dim(w, 4, op), ob = const_dim(w, 5, op);
    WEFT_CHECK(ib >= step && ib % step == 0 && wib % ib == 0 && ob % 16 == 0, op, ": '", w.name(), "' has blocks of ",
               wib, " input and ", ob, " output channels; the data's block ", ib, " must be a multiple of ", step,
               " and divide the first, and 16 divide the second");
    const int64_t CB = WB * wib / ib;
    std::vector<Expr> shape{make_int(OB), make_int(CB), make_int(KH), make_int(KW), make_int(ib / step), make_int(ob),
                            make_int(step)};
    return compute(shape, [&](const std::vector<Expr>& i) {
        Expr c = i[1] * ib + i[4] * step + i[6];  // the input channel
        return cast(dtype, w(i[0], c / wib, i[2], i[3], c % wib, i[5]));
    }, name);
}

// Whether AMX's tiles fill more of their rows over a narrow layer's padded-width plane (its
// output rows as wide as the padded input, the extra pixels computed and dropped: tiles of 16
// pixels) than over its rows (tiles of a divisor of the width: a 7-wide row fills 7 of 16).
// Stride 1 only; narrow rows only (a wide layer's sums would go through memory whole).
bool flat_tiles_fill_more(const Size2d& out, int64_t KW, const Conv2dParams& p) {
    if (p.stride.h != 1 || p.stride.w != 1 || out.w >= 16) return false;
    const int64_t row = out.w + KW - 1, Q = (out.h - 1) * row + out.w, tile = Q >= 32 ? 32 : 16;
    if (Q < 16) return false;
    const double flat = double(out.h * out.w) / double((Q + tile - 1) / tile * tile),
                 rows = double(conv_detail::largest_divisor_at_most(out.w, 16)) / 16.0;
    return flat > rows + 0.05;
}

// A dot-product convolution's extents (data [N, CB, H, W, ib], weight [OB, CB, KH, KW,
// ib/step, ob, step]), checked, and its reduction: the sum over input blocks, taps and the
// block's channels of the data's value there (`read`) times the weight's.
struct DotConvSum {
    int64_t N, CB, H, W, ib, OB, KH, KW, ob;
    IterVar ic, kh, kw, ip, lane;

    DotConvSum(const Tensor& data, const Tensor& wp, const Conv2dParams& p, const DotConv& d) {
        const char* op = d.op;
        WEFT_CHECK(data.ndim() == 5, op, ": data '", data.name(), "' must be [N, C/ib, H, W, ib]");
        WEFT_CHECK(wp.ndim() == 7 && const_dim(wp, 6, op) == d.step, op, ": weight '", wp.name(),
                   "' must be [O/ob, C/ib, KH, KW, ib/", d.step, ", ob, ", d.step, "] (", d.packer, ")");
        check_dtype(data, d.data, op, "data");
        check_dtype(wp, d.weight, op, "weight");
        WEFT_CHECK(p.groups == 1 && p.dilation.h == 1 && p.dilation.w == 1, op, ": groups and dilation must be 1");
        N = const_dim(data, 0, op), CB = const_dim(data, 1, op), H = const_dim(data, 2, op), W = const_dim(data, 3, op),
        ib = const_dim(data, 4, op);
        OB = const_dim(wp, 0, op), KH = const_dim(wp, 2, op), KW = const_dim(wp, 3, op), ob = const_dim(wp, 5, op);
        WEFT_CHECK(const_dim(wp, 1, op) == CB && const_dim(wp, 4, op) * d.step == ib, op, ": data has ", CB,
                   " blocks of ", ib, " channels, the weight ", const_dim(wp, 1, op), " of ", const_dim(wp, 4, op) * d.step);
        ic = reduce_axis(0, CB, "icb"), kh = reduce_axis(0, KH, "kh"), kw = reduce_axis(0, KW, "kw"),
        ip = reduce_axis(0, ib / d.step, "icp"), lane = reduce_axis(0, d.step, "ici");
    }
    // read(channel within the block) -> the data's value at this tap.
    Expr operator()(const Tensor& wp, const DotConv& d, const Expr& o, const Expr& oc,
                    const std::function<Expr(Expr)>& read, const Expr& condition = Expr()) const {
        return sum(cast(d.acc, read(ip * d.step + lane)) * cast(d.acc, wp(o, ic, kh, kw, ip, oc, lane)),
                   {ic, kh, kw, ip, lane}, condition);
    }
};

// A stride-1 convolution over its padded-width plane (flat_tiles_fill_more): the input
// flattened into rows of `row` = OW + KW - 1 pixels, padding included ([N, CB, F, ib]); the
// sums over the plane's pixels q = oy row + ox up to the last output pixel ([N, OB, Q, ob],
// `name`_sums: exactly what the output reads, so bound inference realizes them whole); the
// output the first OW pixels of each row.
Tensor flat_dot_conv2d_nchwc(const Tensor& data, const Tensor& wp, const Conv2dParams& p, const DotConv& d,
                             const DotConvSum& c, const Expr& pad_value, const Size2d& out, const std::string& name) {
    const int64_t row = out.w + c.KW - 1, Q = (out.h - 1) * row + out.w, F = Q + (c.KH - 1) * row + c.KW - 1;
    const Pad2d pad = p.padding;
    const Expr zero = pad_value.defined() ? pad_value : ir::make_zero(data.dtype());
    Tensor flat = compute({c.N, c.CB, F, c.ib}, [&](Expr n, Expr b, Expr f, Expr i) {
        Expr y = f / row - pad.top, x = f % row - pad.left;
        Expr inside = y >= 0 && y < c.H && x >= 0 && x < c.W;
        Expr at = data(n, b, min(max(y, Expr(int64_t(0))), Expr(c.H - 1)), min(max(x, Expr(int64_t(0))), Expr(c.W - 1)), i);
        return select(inside, at, zero);
    }, name + "_flat");
    Tensor sums = compute({c.N, c.OB, Q, c.ob}, [&](Expr n, Expr o, Expr q, Expr oc) {
        return c(wp, d, o, oc, [&](Expr i) { return flat(n, c.ic, q + c.kh * row + c.kw, i); });
    }, name + "_sums");
    return compute({c.N, c.OB, out.h, out.w, c.ob},
                   [&](Expr n, Expr o, Expr oy, Expr ox, Expr oc) { return sums(n, o, oy * row + ox, oc); }, name);
}

// The sums a flat convolution's output reads (flat_dot_conv2d_nchwc), or an undefined tensor
// where `op` is a convolution's own reduction.
Tensor flat_conv_sums(const Tensor& op) {
    if (op.op()->body.empty() || op.op()->body[0].as<ir::Reduce>()) return Tensor();
    const auto inputs = op.op().input_tensors();
    return inputs.size() == 1 && inputs[0].ndim() == 4 ? inputs[0] : Tensor();
}

// `pad_value`: what the padding holds (undefined: zero; taps there are left out of the sum
// where the input is read in place, which only zero allows).
Tensor dot_conv2d_nchwc(const Tensor& data, const Tensor& wp, const Conv2dParams& p, const DotConv& d,
                        const Expr& pad_value, bool padded_copy, std::string name) {
    const DotConvSum c(data, wp, p, d);
    const Size2d out = conv2d_out_size(c.H, c.W, c.KH, c.KW, p, d.op);
    const Pad2d pad = p.padding;
    // A strided 1x1 convolution for AMX tiles: over a copy of the pixels it reads, at stride
    // 1 (a narrow layer's then fill whole tiles over its plane: flat_tiles_fill_more).
    if (padded_copy && c.KH == 1 && c.KW == 1 && pad.none() && (p.stride.h > 1 || p.stride.w > 1)) {
        const Size2d st = p.stride;
        Tensor picked = compute({c.N, c.CB, out.h, out.w, c.ib}, [&](Expr n, Expr b, Expr y, Expr x, Expr i) {
            return data(n, b, y * st.h, x * st.w, i);
        }, name + "_strided");
        Conv2dParams unit = p;
        unit.stride = {1, 1};
        return dot_conv2d_nchwc(picked, wp, unit, d, pad_value, padded_copy, name);
    }
    if (padded_copy && flat_tiles_fill_more(out, c.KW, p))
        return flat_dot_conv2d_nchwc(data, wp, p, d, c, pad_value, out, name);
    // Narrow rows read a zero-padded copy of the input: there every tile of a row is at its
    // border, and the taps left out of the sum in place kept a loop over them; wide rows read
    // in place, where the copy cost more than it saved (RESULTS.md, "bfloat16 GEMM with
    // AVX512_BF16"). A padding that is not zero is always a copy, and so is any where the
    // caller asks (`padded_copy`: AMX tiles read whole rows of the window).
    const bool copy = !pad.none() && (out.w <= 16 || pad_value.defined() || padded_copy);
    // The copy holds the rows and columns the windows read, no more (a stride can leave the
    // last ones unread): its shape is then the buffer's, whose rows AMX tiles step through.
    Pad2d read = pad;
    read.bottom = std::max<int64_t>(0, (out.h - 1) * p.stride.h + c.KH - c.H - pad.top);
    read.right = std::max<int64_t>(0, (out.w - 1) * p.stride.w + c.KW - c.W - pad.left);
    const Tensor padded = copy ? conv_detail::pad_spatial(data, read, 2, name + "_pad", 0, pad_value) : data;
    return compute({c.N, c.OB, out.h, out.w, c.ob}, [&](Expr n, Expr o, Expr oy, Expr ox, Expr oc) {
        Expr y = oy * p.stride.h + c.kh, x = ox * p.stride.w + c.kw;
        return c(wp, d, o, oc, [&](Expr i) { return copy ? padded(n, c.ic, y, x, i) : data(n, c.ic, y - pad.top, x - pad.left, i); },
                 copy || pad.none() ? Expr() : conv_detail::inside_input(y, x, pad, c.H, c.W));
    }, name);
}

// A register tile of output columns x ob/16 vectors (at most 24 accumulators), the input's
// steps and kw unrolled; `dot` (the instruction) where given, else the same tile of float32
// FMAs or int32 multiply-adds. `out` is op or op followed by element-wise operators, computed
// from each tile.
void schedule_dot_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const TensorIntrin* dot,
                               const char* name) {
    conv_detail::check_epilogue(name, op, out);
    const int64_t OW = const_dim(out, 3, name), ob = const_dim(out, 4, name);
    // The padded copy of narrow rows, before the convolution: its rows across threads, a
    // block of channels a vector.
    for (auto& in : op.op().input_tensors())
        if (in.op()->is_compute()) {
            s[in].compute_root();
            if (in.ndim() == 5) {
                s[in].parallel(s[in].fuse(s[in].fuse(in.axis(0), in.axis(1)), in.axis(2)));
                s[in].vectorize(in.axis(4));
            }
        }
    // Register tile: ow_b output columns x ob/16 vectors (<= 24 zmm accumulators).
    // A divisor of the row where one is at least half the most that fit, else even tiles with
    // a shorter last one (a 13-wide row: tiles of 1 ran SqueezeNet's last layers 2.5x slower
    // than float32).
    const int64_t vectors = ob / 16, most = std::max<int64_t>(1, 24 / vectors);
    int64_t ow_b = conv_detail::largest_divisor_at_most(OW, most);
    if (2 * ow_b <= most) ow_b = conv_detail::ceil_div(OW, conv_detail::ceil_div(OW, most));
    Tensor acc = conv_detail::tile_accumulator(s, op, out);
    auto ax = [](const Tensor& t, int d) { return t.axis(d); };
    auto [owo, owi] = s[out].split(ax(out, 3), ow_b);
    s[out].reorder({ax(out, 0), ax(out, 1), ax(out, 2), owo, owi, ax(out, 4)});
    IterVar rows = s[out].fuse(s[out].fuse(ax(out, 0), ax(out, 1)), ax(out, 2));
    s[out].parallel(rows);
    s[out].vectorize(ax(out, 4));
    s[acc].compute_at(s[out], owo);
    IterVar icb = acc.reduce_axis(0), kh = acc.reduce_axis(1), kw = acc.reduce_axis(2), ip = acc.reduce_axis(3),
            lane = acc.reduce_axis(4);
    auto [ocv, ocl] = s[acc].split(ax(acc, 4), 16);
    // The input's steps unrolled, the window's taps not: unrolling kw too ran faster alone
    // but made 4x the code in a fused kernel, whose border tiles loop partitioning copies,
    // and ran slower there (ResNet-18's 56x56 layers; RESULTS.md, "bfloat16 GEMM with
    // AVX512_BF16").
    s[acc].unroll(ip);
    s[acc].unroll(ax(acc, 3));
    s[acc].unroll(ocv);
    if (dot) {
        s[acc].reorder({ax(acc, 0), ax(acc, 1), ax(acc, 2), icb, kh, kw, ip, ax(acc, 3), ocv, ocl, lane});
        s[acc].tensorize(ocl, *dot);
    } else {
        s[acc].reorder({ax(acc, 0), ax(acc, 1), ax(acc, 2), icb, kh, kw, ip, lane, ax(acc, 3), ocv, ocl});
        s[acc].unroll(lane);
        s[acc].vectorize(ocl);
    }
}

// AMX's tile programs for a convolution of `step` channels a lane: data of `bytes` a channel.
struct AmxConv {
    int64_t step, bytes;
    DataType a, b, acc;
    const char *call, *name;
};
const AmxConv kAmxBf16{2, 2, bf16, bf16, f32, "weft.amx_tdpbf16ps", "x86.amx_bf16"};
const AmxConv kAmxU8s8{4, 1, u8, i8, i32, "weft.amx_tdpbusd", "x86.amx_u8s8"};

// op (or, flat, the sums it reads) on AMX tiles where it fits them; false where it does not.
bool schedule_amx_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const AmxConv& k) {
    amx_detail::ConvTiles t;
    if (amx_detail::conv_fits(op, k.bytes, &t)) {
        amx_detail::schedule_amx_conv(s, op, out, t, amx_detail::amx_conv_tile(t, k.step, k.a, k.b, k.acc, k.call, k.name));
        return true;
    }
    const Tensor sums = flat_conv_sums(op);
    if (!sums.defined() || !amx_detail::conv_fits(sums, k.bytes, &t) || !t.flat) return false;
    amx_detail::schedule_amx_flat_conv(s, op, sums, out, t, amx_detail::amx_conv_tile(t, k.step, k.a, k.b, k.acc, k.call, k.name));
    return true;
}

// A flat convolution (flat_dot_conv2d_nchwc: op reads its sums) where AMX's tiles do not run
// it (a target without them): the sums vectorized over the output channels, correct and slow.
bool schedule_flat_conv_without_tiles(Schedule& s, const Tensor& op, const Tensor& out) {
    const Tensor sums = flat_conv_sums(op);
    if (!sums.defined()) return false;
    for (auto& in : sums.op().input_tensors())
        if (in.op()->is_compute()) s[in].compute_root();
    s[sums].compute_root();
    s[sums].parallel(s[sums].fuse(sums.axis(0), sums.axis(1)));
    auto [co, ci] = s[sums].split(sums.axis(3), 16);
    s[sums].vectorize(ci);
    if (!out.same_as(op)) s[op].compute_inline();
    s[out].parallel(s[out].fuse(s[out].fuse(out.axis(0), out.axis(1)), out.axis(2)));
    return true;
}

const DotConv kConvBf16{2, bf16, bf16, f32, "conv2d_nchwc_bf16", "pack_conv2d_nchwc_bf16_weight"};
const DotConv kConvU8s8{4, u8, i8, i32, "conv2d_nchwc_u8s8", "pack_conv2d_nchwc_u8s8_weight"};

}  // namespace

Tensor pack_conv2d_nchwc_bf16_weight(const Tensor& w, int64_t ib, std::string name) {
    return pack_conv2d_nchwc_dot_weight(w, ib, 2, bf16, kConvBf16.packer, std::move(name));
}

Tensor conv2d_nchwc_bf16(const Tensor& data, const Tensor& wp, const Conv2dParams& p, std::string name,
                         bool padded_copy) {
    return dot_conv2d_nchwc(data, wp, p, kConvBf16, Expr(), padded_copy, std::move(name));
}

void schedule_conv2d_nchwc_bf16(Schedule& s, const Tensor& op, const Tensor& out, const Target& target) {
    conv_detail::check_epilogue("schedule_conv2d_nchwc_bf16", op, out);
    if (has_amx_bf16(target) && schedule_amx_conv2d_nchwc(s, op, out, kAmxBf16)) return;
    if (schedule_flat_conv_without_tiles(s, op, out)) return;
    const TensorIntrin dot = bf16_dot_16x2();
    schedule_dot_conv2d_nchwc(s, op, out, target.has_feature("avx512bf16") ? &dot : nullptr,
                              "schedule_conv2d_nchwc_bf16");
}

Tensor pack_conv2d_nchwc_u8s8_weight(const Tensor& w, int64_t ib, std::string name) {
    check_dtype(w, i8, kConvU8s8.packer, "weight");
    return pack_conv2d_nchwc_dot_weight(w, ib, 4, i8, kConvU8s8.packer, std::move(name));
}

Tensor conv2d_nchwc_u8s8(const Tensor& data, const Tensor& wp, const Conv2dParams& p, int64_t zero_point,
                         std::string name, bool padded_copy) {
    WEFT_CHECK(zero_point >= 0 && zero_point <= 255, "conv2d_nchwc_u8s8: the data's zero point must be in [0, 255], got ",
               zero_point);
    return dot_conv2d_nchwc(data, wp, p, kConvU8s8, zero_point ? ir::make_const(u8, double(zero_point)) : Expr(),
                            padded_copy, std::move(name));
}

void schedule_conv2d_nchwc_u8s8(Schedule& s, const Tensor& op, const Tensor& out, const Target& target) {
    conv_detail::check_epilogue("schedule_conv2d_nchwc_u8s8", op, out);
    if (has_amx_int8(target) && schedule_amx_conv2d_nchwc(s, op, out, kAmxU8s8)) return;
    if (schedule_flat_conv_without_tiles(s, op, out)) return;
    const TensorIntrin dot = vnni_dot_16x4();
    schedule_dot_conv2d_nchwc(s, op, out, target.has_feature("avx512vnni") ? &dot : nullptr,
                              "schedule_conv2d_nchwc_u8s8");
}

Tensor layout_nchw_to_nchw4c(const Tensor& data, std::string name) {
    WEFT_CHECK(data.ndim() == 4, "layout_nchw_to_nchw4c: '", data.name(), "' must be NCHW");
    int64_t C = const_dim(data, 1, "layout_nchw_to_nchw4c");
    WEFT_CHECK(C % 4 == 0, "layout_nchw_to_nchw4c: '", data.name(), "' has ", C, " channels, not a multiple of 4");
    auto sh = data.shape();
    return compute({sh[0], make_int(C / 4), sh[2], sh[3], make_int(4)},
                   [&](Expr n, Expr cb, Expr h, Expr w, Expr ci) { return data(n, cb * 4 + ci, h, w); }, name);
}

Tensor pack_conv2d_vnni_weight(const Tensor& w, std::string name) {
    const char* op = "pack_conv2d_vnni_weight";
    WEFT_CHECK(w.ndim() == 4, op, ": '", w.name(), "' must be OIHW");
    check_dtype(w, i8, op, "weight");
    int64_t O = const_dim(w, 0, op), I = const_dim(w, 1, op);
    WEFT_CHECK(O % 16 == 0 && I % 4 == 0, op, ": '", w.name(), "' is ", O, " x ", I,
               " (O x I); O must be a multiple of 16 and I of 4");
    auto sh = w.shape();
    std::vector<Expr> shape{make_int(O / 16), make_int(I / 4), sh[2], sh[3], make_int(16), make_int(4)};
    return compute(shape, [&](Expr ob, Expr ib, Expr h, Expr w_, Expr oi, Expr ii) {
        return w(ob * 16 + oi, ib * 4 + ii, h, w_);
    }, name);
}

Tensor conv2d_nchwc_u8s8(const Tensor& data, const Tensor& wp, int64_t stride, int64_t pad, std::string name) {
    const char* op = "conv2d_nchwc_u8s8";
    WEFT_CHECK(data.ndim() == 5 && const_dim(data, 4, op) == 4, op, ": data '", data.name(),
               "' must be [N, C/4, H, W, 4] (layout_nchw_to_nchw4c)");
    WEFT_CHECK(wp.ndim() == 6 && const_dim(wp, 4, op) == 16 && const_dim(wp, 5, op) == 4, op, ": weight '", wp.name(),
               "' must be [O/16, I/4, KH, KW, 16, 4] (pack_conv2d_vnni_weight)");
    check_dtype(data, u8, op, "data");
    check_dtype(wp, i8, op, "weight");
    WEFT_CHECK(stride >= 1 && pad >= 0, op, ": stride must be >= 1 and padding >= 0, got ", stride, " and ", pad);
    const int64_t N = const_dim(data, 0, op), CB = const_dim(data, 1, op), H = const_dim(data, 2, op),
                  W = const_dim(data, 3, op);
    const int64_t OB = const_dim(wp, 0, op), KH = const_dim(wp, 2, op), KW = const_dim(wp, 3, op);
    WEFT_CHECK(const_dim(wp, 1, op) == CB, op, ": data has ", CB * 4, " channels, the weight ", const_dim(wp, 1, op) * 4);
    const int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    WEFT_CHECK(OH > 0 && OW > 0, op, ": a ", KH, "x", KW, " kernel does not fit a ", H, "x", W, " image padded by ", pad);
    IterVar ic = reduce_axis(0, CB, "icb"), kh = reduce_axis(0, KH, "kh"), kw = reduce_axis(0, KW, "kw"),
            ci = reduce_axis(0, 4, "ici");
    // The input is read in place and the taps in the padding are left out of the sum, as
    // conv2d_nchwc does (docs/topi-conv.md): no padded copy before the convolution.
    return compute({N, OB, OH, OW, int64_t(16)}, [&](Expr n, Expr ob, Expr oy, Expr ox, Expr oc) {
        Expr y = oy * stride + kh, x = ox * stride + kw;
        Expr in = data(n, ic, y - pad, x - pad, ci);
        return sum(cast(i32, in) * cast(i32, wp(ob, ic, kh, kw, oc, ci)), {ic, kh, kw, ci},
                   pad > 0 ? conv_detail::inside_input(y, x, Pad2d::all(pad), H, W) : Expr());
    }, name);
}

void schedule_conv2d_nchwc_u8s8(Schedule& s, const Tensor& out) {
    const int64_t OB = const_dim(out, 1, "schedule_conv2d_nchwc_u8s8"), OW = const_dim(out, 3, "schedule_conv2d_nchwc_u8s8");
    // A padded copy of the input, if any, is computed once before the convolution.
    for (auto& in : out.op().input_tensors())
        if (in.op()->is_compute()) s[in].compute_root();
    // Register tile: ow_b output columns x ob_b blocks of 16 channels (<= 24 zmm accumulators).
    const int64_t ob_b = OB % 2 == 0 ? 2 : 1, ow_b = conv_detail::largest_divisor_at_most(OW, ob_b == 2 ? 12 : 24);
    Tensor cc = s.cache_write(out, "local");
    auto ax = [&](const Tensor& t, int d) { return t.axis(d); };
    auto [obo, obi] = s[out].split(ax(out, 1), ob_b);
    auto [owo, owi] = s[out].split(ax(out, 3), ow_b);
    s[out].reorder({ax(out, 0), obo, ax(out, 2), owo, obi, owi, ax(out, 4)});
    IterVar fused = s[out].fuse(s[out].fuse(ax(out, 0), obo), ax(out, 2));
    s[out].parallel(fused);
    s[out].vectorize(ax(out, 4));
    s[cc].compute_at(s[out], owo);
    IterVar icb = cc.reduce_axis(0), kh = cc.reduce_axis(1), kw = cc.reduce_axis(2), ici = cc.reduce_axis(3);
    s[cc].reorder({ax(cc, 0), ax(cc, 2), icb, kh, kw, ax(cc, 1), ax(cc, 3), ax(cc, 4), ici});
    // A step of (icb, kh, kw) is one vpdpbusd per accumulator: its loop's counter and address
    // updates cost more than in a float tile with 16 channels per step. The window unrolled
    // (kw always, kh too up to 3x3; docs/performance.md, "VNNI schedules: unrolling").
    int64_t KH = 0, KW = 0;
    nn_detail::const_extent(kh.dom().extent, &KH);
    nn_detail::const_extent(kw.dom().extent, &KW);
    s[cc].unroll(kw);
    if (KH * KW <= 9) s[cc].unroll(kh);
    s[cc].unroll(ax(cc, 1));
    s[cc].unroll(ax(cc, 3));
    s[cc].tensorize(ax(cc, 4), vnni_dot_16x4());
}

}  // namespace weft::topi
