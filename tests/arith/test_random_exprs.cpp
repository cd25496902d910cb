// Randomized checks of the simplifier and interval analysis against the reference
// evaluator: for hundreds of seeded random expressions, the simplified expression must
// take the same value as the original at random points of the variables' ranges, and
// constant bounds must contain every value.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <vector>

#include "arith/reference_eval.hpp"
#include "weft/ir/arith/interval.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

using namespace weft;
using namespace weft::ir;
using namespace arith_test;

namespace {

struct RandomExprs {
    std::mt19937_64 rng;
    DataType type;
    std::vector<Var> vars;

    RandomExprs(uint64_t seed, DataType t) : rng(seed), type(t) {
        for (const char* n : {"x", "y", "z", "w"}) vars.emplace_back(n, t);
    }

    int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
    bool chance(int percent) { return uniform(1, 100) <= percent; }

    Expr constant() {
        int64_t v = chance(20) ? uniform(-64, 64) : uniform(-9, 9);
        if (chance(10)) v = (uniform(0, 1) ? 1 : -1) * (int64_t(1) << uniform(1, 6));
        return make_int(v, type);
    }
    Expr nonzero_constant() {
        int64_t v = 0;
        while (v == 0 || wrap(type, v) == 0) v = chance(70) ? uniform(1, 16) : uniform(-8, 8);
        return make_int(v, type);
    }

    Expr integer(int depth) {
        if (depth == 0 || chance(15)) return chance(65) ? Expr(vars[uniform(0, vars.size() - 1)]) : constant();
        Expr a = integer(depth - 1);
        switch (uniform(0, 10)) {
            case 0: case 1: return Add::make(a, integer(depth - 1));
            case 2: return Sub::make(a, integer(depth - 1));
            case 3: return Mul::make(a, chance(60) ? constant() : integer(depth - 1));
            case 4: return Div::make(a, chance(80) ? nonzero_constant() : integer(depth - 1));
            case 5: return Mod::make(a, chance(80) ? nonzero_constant() : integer(depth - 1));
            case 6: return Min::make(a, integer(depth - 1));
            case 7: return Max::make(a, integer(depth - 1));
            case 8: return Select::make(boolean_expr(depth - 1), a, integer(depth - 1));
            case 9: return Add::make(Mul::make(a, constant()), integer(depth - 1));  // affine shapes
            default: {
                // The shapes splits and fuses produce: (x*c + y) / c, (x*c + y) % c; and what a
                // reshape merging dimensions reads: (x / c % m) * (k*c) + (x % c) * k.
                if (chance(25)) {
                    int64_t c = uniform(1, 9), m = uniform(1, 9), k = uniform(-3, 3);
                    Expr digit = Mod::make(Div::make(a, make_int(c, type)), make_int(m, type));
                    return Add::make(Mul::make(digit, make_int(k * c, type)),
                                     Mul::make(Mod::make(a, make_int(c, type)), make_int(k, type)));
                }
                Expr c = nonzero_constant();
                Expr scaled = Mul::make(a, Mul::make(c, make_int(uniform(1, 3), type)));
                Expr sum = Add::make(scaled, integer(depth - 1));
                return chance(50) ? Div::make(sum, c) : Mod::make(sum, c);
            }
        }
    }

    Expr boolean_expr(int depth) {
        if (depth > 0 && chance(25)) {
            switch (uniform(0, 2)) {
                case 0: return And::make(boolean_expr(depth - 1), boolean_expr(depth - 1));
                case 1: return Or::make(boolean_expr(depth - 1), boolean_expr(depth - 1));
                default: return Not::make(boolean_expr(depth - 1));
            }
        }
        Expr a = integer(std::max(depth - 1, 0)), b = integer(std::max(depth - 1, 0));
        switch (uniform(0, 5)) {
            case 0: return EQ::make(a, b);
            case 1: return NE::make(a, b);
            case 2: return LT::make(a, b);
            case 3: return LE::make(a, b);
            case 4: return GT::make(a, b);
            default: return GE::make(a, b);
        }
    }

    // Random ranges, negative ones included; sometimes a single point. For int64, w's (and
    // sometimes z's) range may be symbolic: w in [x + a, x + b], z in [c, y + d].
    arith::VarRanges ranges() {
        arith::VarRanges r;
        bool is_unsigned = type.is_uint();
        for (auto& v : vars) {
            if (chance(15)) continue;  // unconstrained (the test still samples a small range)
            int64_t lo = is_unsigned ? uniform(0, 20) : uniform(-20, 12);
            int64_t hi = chance(10) ? lo : lo + uniform(0, 30);
            r[v] = arith::Interval(make_int(lo, type), make_int(hi, type));
        }
        if (type == i64 && chance(40)) {
            int64_t a = uniform(-10, 5);
            r[vars[3]] = arith::Interval(vars[0] + a, vars[0] + (a + uniform(0, 12)));
        }
        if (type == i64 && chance(30)) {
            int64_t c = uniform(-10, 0);
            r[vars[2]] = arith::Interval(make_int(c), vars[1] + uniform(0, 8));
        }
        return r;
    }

    // A point of the ranges: variables in order, so a symbolic range sees the values it
    // mentions. An empty symbolic range gives no point.
    std::optional<Env> sample(const arith::VarRanges& r) {
        Env env;
        for (auto& v : vars) env[v.node()] = 0;
        for (auto& v : vars) {
            int64_t lo = type.is_uint() ? 0 : -25, hi = 25;
            if (auto it = r.find(v); it != r.end()) {
                lo = *Evaluator(env).eval(it->second.min);
                hi = *Evaluator(env).eval(it->second.max);
            }
            if (lo > hi) return std::nullopt;
            env[v.node()] = wrap(type, uniform(lo, hi));
        }
        return env;
    }
};

// Whether v lies within the bound ends that are defined (evaluated at the same point).
bool within(const arith::Interval& bounds, const Env& env, int64_t v, DataType t) {
    auto less_equal = [&](int64_t a, int64_t b) { return t.is_uint() ? uint64_t(a) <= uint64_t(b) : a <= b; };
    if (bounds.has_lower()) {
        auto lo = Evaluator(env).eval(bounds.min);
        if (lo && !less_equal(*lo, v)) return false;
    }
    if (bounds.has_upper()) {
        auto hi = Evaluator(env).eval(bounds.max);
        if (hi && !less_equal(v, *hi)) return false;
    }
    return true;
}

struct Tally {
    int expressions = 0, evaluations = 0, constant_bounds = 0, changed = 0;
};

void check_random(uint64_t seed, DataType t, int count, Tally& tally) {
    RandomExprs gen(seed, t);
    for (int i = 0; i < count; ++i) {
        bool is_bool = gen.chance(20);
        Expr e = is_bool ? gen.boolean_expr(3) : gen.integer(gen.uniform(1, 4));
        arith::VarRanges ranges = gen.ranges();
        Expr in_ranges = arith::simplify(e, ranges);
        Expr anywhere = arith::simplify(e);
        arith::Interval bounds = arith::bounds_of(e, ranges);
        int64_t clo = 0, chi = 0;
        bool has_const_bounds = arith::const_bounds(e, ranges, &clo, &chi);
        REQUIRE(in_ranges.type() == e.type());
        REQUIRE(anywhere.type() == e.type());
        ++tally.expressions;
        if (to_string(in_ranges) != to_string(e)) ++tally.changed;
        for (int k = 0; k < 24; ++k) {
            auto point_env = gen.sample(ranges);
            if (!point_env) continue;
            Env& env = *point_env;
            auto expected = Evaluator(env).eval(e);
            if (!expected) continue;  // division by zero or signed 64-bit overflow
            ++tally.evaluations;
            INFO("seed " << seed << " #" << i << " type " << t.str() << ": " << e);
            INFO("simplified in ranges: " << in_ranges);
            INFO("simplified anywhere: " << anywhere);
            std::string point;
            for (auto& v : gen.vars) point += v.name() + " = " + std::to_string(env[v.node()]) + "  ";
            INFO("at " << point);
            auto got = Evaluator(env).eval(in_ranges);
            auto got_anywhere = Evaluator(env).eval(anywhere);
            CHECK(got == expected);
            CHECK(got_anywhere == expected);
            int64_t value = *expected;
            INFO("bounds [" << bounds.min << ", " << bounds.max << "]");
            CHECK(within(bounds, env, value, t));
            if (bounds.min.as<IntImm>() && bounds.max.as<IntImm>()) ++tally.constant_bounds;
            if (has_const_bounds) {
                INFO("const bounds [" << clo << ", " << chi << "]");
                CHECK(clo <= value);
                CHECK(value <= chi);
            }
        }
    }
}

}  // namespace

TEST_CASE("random int64 expressions: simplify keeps values, bounds contain them") {
    Tally tally;
    for (uint64_t seed = 1; seed <= 6; ++seed) check_random(seed, i64, 200, tally);
    MESSAGE("int64: " << tally.expressions << " expressions (" << tally.changed << " simplified), "
                       << tally.evaluations << " evaluations, " << tally.constant_bounds << " with constant bounds");
    CHECK(tally.expressions == 1200);
}

TEST_CASE("random expressions of wrapping types (int8, uint8, int32)") {
    Tally tally;
    check_random(101, i8, 200, tally);
    check_random(102, u8, 200, tally);
    check_random(103, i32, 200, tally);
    MESSAGE("wrapping types: " << tally.expressions << " expressions (" << tally.changed << " simplified), "
                                << tally.evaluations << " evaluations, " << tally.constant_bounds << " with constant bounds");
    CHECK(tally.expressions == 600);
}
