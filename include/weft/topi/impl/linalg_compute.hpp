// linalg computes: matmul, dense (plain and from a pre-packed weight), batch_matmul, and
// the packing of the right-hand operand into column panels (see topi/linalg.hpp).
#pragma once
#include <functional>

#include "weft/topi/impl/linalg_check.hpp"
#include "weft/topi/impl/linalg_plan.hpp"
#include "weft/topi/linalg.hpp"

namespace weft::topi {
namespace detail {

// Packing stages are found by the schedules through this suffix of their name.
inline const std::string kPackedSuffix = "_packed";

inline bool is_pack_stage(const Tensor& t) {
    const std::string& n = t.op().name();
    return t.op()->is_compute() && !t.op()->is_reduction() && n.size() >= kPackedSuffix.size() &&
           n.compare(n.size() - kPackedSuffix.size(), kPackedSuffix.size(), kPackedSuffix) == 0;
}

// The column panels of a K x N operand given by element(k, j): P(p, k, c) = element(k, p * width + c),
// zero past column N (so every panel is whole and the micro-kernel needs no column guard).
inline Tensor pack_panels(const std::function<Expr(Expr, Expr)>& element, const Expr& N, const Expr& K,
                          int64_t width, DataType dtype, const std::string& name) {
    int64_t n = 0;
    bool whole = ir::as_const_int(N, &n) && n % width == 0;
    Expr panels = ir::arith::simplify((N + make_int(width - 1)) / make_int(width));
    return compute({panels, K, make_int(width)},
                   [&](Expr p, Expr k, Expr c) {
                       Expr j = p * make_int(width) + c;
                       return whole ? element(k, j) : if_then_else(j < N, element(k, j), ir::make_zero(dtype));
                   },
                   name);
}

// The same for a batch of operands: P(b, p, k, c).
inline Tensor pack_batched_panels(const std::function<Expr(Expr, Expr, Expr)>& element, const Expr& batch,
                                  const Expr& N, const Expr& K, int64_t width, DataType dtype,
                                  const std::string& name) {
    int64_t n = 0;
    bool whole = ir::as_const_int(N, &n) && n % width == 0;
    Expr panels = ir::arith::simplify((N + make_int(width - 1)) / make_int(width));
    return compute({batch, panels, K, make_int(width)},
                   [&](Expr b, Expr p, Expr k, Expr c) {
                       Expr j = p * make_int(width) + c;
                       return whole ? element(b, k, j) : if_then_else(j < N, element(b, k, j), ir::make_zero(dtype));
                   },
                   name);
}

// C(i, j) = sum_k lhs(i, k) * P(j / width, k, j % width).
inline Tensor gemm_from_panels(const std::function<Expr(Expr, Expr)>& lhs, const Tensor& P, const Expr& M,
                               const Expr& N, const Expr& K, int64_t width, const std::string& name) {
    IterVar k = reduce_axis(0, K, "k");
    Expr w = make_int(width);
    return compute({M, N}, [&](Expr i, Expr j) { return sum(lhs(i, k) * P(j / w, k, j % w), {k}); }, name);
}

// A GEMM over panels of a symbolic width N: the reduction `core` runs over the panels'
// whole width (the panels are zero past N, so it reads nothing outside them), and this
// stage crops it to N columns. Its register tiles are then whole in the last, partial
// panel too (vector code, not a scalar loop over the columns left); only the stores past N
// are skipped.
inline Tensor crop_columns(const Tensor& core, const Expr& N, const std::string& name) {
    std::vector<Expr> shape = core.shape();
    shape.back() = N;
    return compute(shape, [&](const std::vector<Expr>& i) { return core.at(i); }, name);
}

// The columns a GEMM's reduction computes: N, or its panels' whole width where N is
// symbolic (crop_columns).
inline Expr core_columns(const Expr& N, int64_t width) {
    if (N.as<ir::IntImm>()) return N;
    return ir::arith::simplify((N + make_int(width - 1)) / make_int(width) * make_int(width));
}

inline Tensor add_bias(const Tensor& core, const Tensor& bias, const std::string& name) {
    return compute(core.shape(), [&](Expr i, Expr j) { return core(i, j) + bias(j); }, name);
}

}  // namespace detail

Tensor matmul(const Tensor& A, const Tensor& B, const std::string& name, const Target& target, const Config& config) {
    detail::check_operand("matmul", "A", A, 2);
    detail::check_operand("matmul", "B", B, 2);
    detail::check_same_dtype("matmul", "A", A, "B", B);
    Expr M = A.shape()[0], K = A.shape()[1], N = B.shape()[1];
    detail::check_extent("matmul", K, "A's columns (K)", B.shape()[0], "B's rows");
    int64_t m = detail::const_or(M, detail::kUnknownExtent), n = detail::const_or(N, detail::kUnknownExtent);
    const detail::VectorUnit v = detail::vector_unit(target);
    // Both knobs are asked whichever way B is read, so that every point of the space sets them.
    const bool pack = detail::knob_pack_rhs(config, v, m, n);
    const int64_t width = detail::knob_panel_width(config, v, m, n);
    if (!pack) {
        IterVar k = reduce_axis(0, K, "k");
        return compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, name);
    }
    Tensor P = detail::pack_panels([&](Expr k, Expr j) { return B(k, j); }, N, K, width, B.dtype(),
                                   name + ".B" + detail::kPackedSuffix);
    const Expr columns = detail::core_columns(N, width);
    if (columns.same_as(N)) return detail::gemm_from_panels([&](Expr i, Expr k) { return A(i, k); }, P, M, N, K, width, name);
    Tensor core = detail::gemm_from_panels([&](Expr i, Expr k) { return A(i, k); }, P, M, columns, K, width, name + ".panels");
    return detail::crop_columns(core, N, name);
}

Tensor dense(const Tensor& X, const Tensor& W, const Tensor& bias, const std::string& name, const Target& target,
             const Config& config) {
    detail::check_operand("dense", "X", X, 2);
    detail::check_operand("dense", "W", W, 2);
    detail::check_same_dtype("dense", "X", X, "W", W);
    Expr M = X.shape()[0], K = X.shape()[1], N = W.shape()[0];
    detail::check_extent("dense", K, "X's columns (K)", W.shape()[1], "W's columns");
    detail::check_bias("dense", bias, X, N);
    // W's rows are the output columns: vectorizing along them needs W transposed into
    // panels, whatever M is (dense_pack_weight does it once, outside the kernel).
    // The panel width is planned for any number of rows, as dense_pack_width's.
    int64_t width = detail::knob_panel_width(config, detail::vector_unit(target), detail::kUnknownExtent,
                                             detail::const_or(N, detail::kUnknownExtent));
    Tensor P = detail::pack_panels([&](Expr k, Expr j) { return W(j, k); }, N, K, width, W.dtype(),
                                   name + ".W" + detail::kPackedSuffix);
    std::string core_name = bias.defined() ? name + ".gemm" : name;
    Tensor core = detail::gemm_from_panels([&](Expr i, Expr k) { return X(i, k); }, P, M, N, K, width, core_name);
    return bias.defined() ? detail::add_bias(core, bias, name) : core;
}

int64_t dense_pack_width(int64_t N, const Target& target) {
    return detail::choose_gemm_tile(detail::vector_unit(target), detail::kUnknownExtent, N).nr;
}

Tensor dense_pack_weight(const Tensor& W, int64_t width, const std::string& name, const Target& target) {
    detail::check_operand("dense_pack_weight", "W", W, 2);
    WEFT_CHECK(width >= 0, "dense_pack_weight: the panel width must be positive (or 0 for the default), got ", width);
    Expr N = W.shape()[0], K = W.shape()[1];
    if (width == 0) width = dense_pack_width(detail::const_or(N, detail::kUnknownExtent), target);
    return detail::pack_panels([&](Expr k, Expr j) { return W(j, k); }, N, K, width, W.dtype(), name);
}

Tensor dense_packed(const Tensor& X, const Tensor& packed_W, int64_t N, const Tensor& bias, const std::string& name) {
    detail::check_operand("dense_packed", "X", X, 2);
    detail::check_operand("dense_packed", "packed_W", packed_W, 3);
    detail::check_same_dtype("dense_packed", "X", X, "packed_W", packed_W);
    WEFT_CHECK(N >= 1, "dense_packed: the number of output features N must be positive, got ", N);
    Expr M = X.shape()[0], K = X.shape()[1];
    auto wshape = packed_W.shape();
    int64_t width = 0;
    WEFT_CHECK(ir::as_const_int(wshape[2], &width) && width >= 1, "dense_packed: packed_W's panel width (",
               ir::to_string(wshape[2]), ") must be a positive constant");
    detail::check_extent("dense_packed", wshape[0], "packed_W's panel count", make_int((N + width - 1) / width),
                         "ceil(N / width)");
    detail::check_extent("dense_packed", K, "X's columns (K)", wshape[1], "packed_W's K");
    detail::check_bias("dense_packed", bias, X, make_int(N));
    std::string core_name = bias.defined() ? name + ".gemm" : name;
    Tensor core = detail::gemm_from_panels([&](Expr i, Expr k) { return X(i, k); }, packed_W, M, make_int(N), K,
                                           width, core_name);
    return bias.defined() ? detail::add_bias(core, bias, name) : core;
}

Tensor batch_matmul(const Tensor& A, const Tensor& B, const std::string& name, const Target& target,
                    const Config& config) {
    detail::check_operand("batch_matmul", "A", A, 3);
    detail::check_operand("batch_matmul", "B", B, 3);
    detail::check_same_dtype("batch_matmul", "A", A, "B", B);
    auto as = A.shape(), bs = B.shape();
    Expr M = as[1], K = as[2], N = bs[2];
    detail::check_extent("batch_matmul", K, "A's columns (K)", bs[1], "B's rows");
    bool a_single = ir::is_one(as[0]), b_single = ir::is_one(bs[0]);
    WEFT_CHECK(a_single || b_single || detail::same_extent(as[0], bs[0]), "batch_matmul: the batch sizes of A (",
               ir::to_string(as[0]), ") and B (", ir::to_string(bs[0]), ") must be equal, or one of them 1");
    Expr batch = a_single ? bs[0] : as[0];
    auto a_at = [&](Expr b, Expr i, Expr k) { return A(a_single ? make_int(0) : b, i, k); };
    IterVar k = reduce_axis(0, K, "k");
    int64_t m = detail::const_or(M, detail::kUnknownExtent), n = detail::const_or(N, detail::kUnknownExtent);
    const detail::VectorUnit v = detail::vector_unit(target);
    const bool pack = detail::knob_pack_rhs(config, v, m, n);
    const int64_t width = detail::knob_panel_width(config, v, m, n);
    if (!pack)
        return compute({batch, M, N},
                       [&](Expr b, Expr i, Expr j) {
                           return sum(a_at(b, i, k) * B(b_single ? make_int(0) : b, k, j), {k});
                       },
                       name);
    // A shared B (batch 1) is packed once; otherwise one set of panels per batch.
    Expr w = make_int(width);
    Tensor P = detail::pack_batched_panels([&](Expr b, Expr kk, Expr j) { return B(b, kk, j); }, bs[0], N, K, width,
                                           B.dtype(), name + ".B" + detail::kPackedSuffix);
    const Expr columns = detail::core_columns(N, width);
    Tensor core = compute({batch, M, columns},
                          [&](Expr b, Expr i, Expr j) {
                              return sum(a_at(b, i, k) * P(b_single ? make_int(0) : b, j / w, k, j % w), {k});
                          },
                          columns.same_as(N) ? name : name + ".panels");
    return columns.same_as(N) ? core : detail::crop_columns(core, N, name);
}

}  // namespace weft::topi
