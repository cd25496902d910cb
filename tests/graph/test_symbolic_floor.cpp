// The floor terms of symbolic extents (graph/impl/symbolic_floor.hpp): fit_floor recovers
// scale * floor((num * s + offset) / den) + constant from samples of strided windows, their
// chains, ceil-mode pools and upsamplings, and refuses what is no such function. Checked
// against the closed forms the operators' shape rules give, at every sampled value and at
// values the fit did not see.
#include <doctest/doctest.h>

#include <functional>

#include "weft/graph/impl/symbolic.hpp"
#include "weft/ir/printer.hpp"

using namespace weft;
using graph::detail::fit_floor;
using graph::detail::FloorFit;

namespace {

// Samples of f over [lo, hi], as build() takes them (a run of consecutive values).
std::vector<std::pair<int64_t, int64_t>> samples(const std::function<int64_t(int64_t)>& f, int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t v = lo; v <= hi; ++v) out.emplace_back(v, f(v));
    return out;
}

// The fit of f from [97, 224] agrees with f over [8, 400].
void check_fits(const std::function<int64_t(int64_t)>& f) {
    std::optional<FloorFit> fit = fit_floor(samples(f, 97, 224), 0);
    REQUIRE(fit.has_value());
    for (int64_t v = 8; v <= 400; ++v) {
        CAPTURE(v);
        REQUIRE(fit->constant + fit->term.eval(v) == f(v));
    }
}

int64_t conv(int64_t in, int64_t k, int64_t s, int64_t pad) { return (in + 2 * pad - k) / s + 1; }

}  // namespace

TEST_CASE("fit_floor: strided convolutions and their chains are one floor term") {
    check_fits([](int64_t h) { return conv(h, 3, 2, 1); });
    check_fits([](int64_t h) { return conv(h, 7, 2, 3); });
    check_fits([](int64_t h) { return conv(conv(conv(h, 7, 2, 3), 3, 2, 1), 3, 2, 1); });  // a ResNet stem
    check_fits([](int64_t h) { return conv(conv(conv(conv(conv(h, 3, 2, 1), 3, 2, 1), 3, 2, 1), 3, 2, 1), 3, 2, 1); });
    const auto fit = fit_floor(samples([](int64_t h) { return conv(h, 3, 2, 1); }, 97, 224), 0);
    CHECK(fit->term.den == 2);
    CHECK(fit->term.num == 1);
}

TEST_CASE("fit_floor: ceil-mode pools, upsamplings and fractional scales") {
    check_fits([](int64_t h) {  // SqueezeNet's stem: a 3x3 stride-2 conv, then a ceil-mode 3x3 stride-2 pool
        const int64_t c = conv(h, 3, 2, 0), span = c - 3;
        return (span + 1) / 2 + 1;
    });
    check_fits([](int64_t h) { return 2 * ((h - 1) / 2 + 1); });  // strided, then upsampled by 2
    check_fits([](int64_t h) { return h * 3 / 2; });              // resized by 1.5
    check_fits([](int64_t h) { return 4 * h + 1; });              // linear: a denominator of 1
    CHECK(fit_floor(samples([](int64_t h) { return 4 * h + 1; }, 97, 224), 0)->term.den == 1);
}

TEST_CASE("fit_floor: no fit for what is no floor term of one symbol") {
    CHECK_FALSE(fit_floor(samples([](int64_t h) { return h * h; }, 97, 224), 0));         // a product
    CHECK_FALSE(fit_floor(samples([](int64_t h) { return 300 - h; }, 97, 224), 0));       // decreasing
    CHECK_FALSE(fit_floor(samples([](int64_t) { return int64_t(5); }, 97, 224), 0));      // constant
    CHECK_FALSE(fit_floor(samples([](int64_t h) { return h / 100; }, 97, 224), 0));       // a denominator past 64
    CHECK_FALSE(fit_floor(samples([](int64_t h) { return h % 7 == 0 ? h : h + 1; }, 97, 224), 0));
}

TEST_CASE("SymbolicDim with a floor term: its value, its expression and the kernels' derived variable") {
    graph::detail::SymbolicShapes shapes;
    shapes.symbols = {{"height", 224, 1}};
    shapes.vars = {Var::sized("height", 224)};
    shapes.symbol_exprs = {shapes.vars[0]};
    graph::detail::SymbolicDim d;
    d.terms = {{0u, 1}};
    d.floors = {{0, 2, 1, 1, 4}};  // 2 * floor((height + 1) / 4) + 1
    shapes.dims = {{d}};
    shapes.collect_derived();
    REQUIRE(shapes.derived.size() == 1);
    CHECK(shapes.derived[0].scale == 1);
    CHECK(shapes.derived_vars[0]->estimate == 56);
    CHECK(d.eval({224}) == 2 * 56 + 1);
    CHECK(d.eval({7}) == 5);
    CHECK(ir::to_string(shapes.dim_expr(d)).find("height.d1") != std::string::npos);
    const int id = graph::detail::SymbolicShapes::derived_id(0);
    CHECK_FALSE(graph::detail::SymbolicShapes::is_base_id(id));
    CHECK(shapes.scalar_value(id, {101}) == 25);
    CHECK(shapes.scalar_var(id).same_as(shapes.derived_vars[0]));
}
