// Schedule records: to_json -> from_json replays the trace onto a fresh schedule of the same
// computation, which compares equal, prints the same and lowers to the same program; bad
// records are a weft::Error that says what is wrong, never a crash.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "weft/weft.hpp"

using namespace weft;

namespace {

std::string printed(const Schedule& s) {
    std::ostringstream os;
    os << s;
    return os.str();
}

// The message of the weft::Error that f throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// Round trip, then the checks every test wants: equal, same text, same JSON, same program.
Schedule round_trip(const Schedule& s, const std::vector<Tensor>& outputs, const std::vector<Argument>& args) {
    std::string json = s.to_json();
    Schedule r = Schedule::from_json(json, outputs);
    CHECK(r == s);
    CHECK(r.trace().size() == s.trace().size());
    CHECK(printed(r) == printed(s));
    CHECK(r.to_json() == json);
    if (!args.empty()) CHECK(ir::structural_equal(lower(s, args).body, lower(r, args).body));
    return r;
}

struct Matmul {
    static constexpr int64_t M = 40, N = 48, K = 20;
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
};

}  // namespace

TEST_CASE("serialize: tiled matmul with cache_write and compute_at round-trips") {
    Matmul mm;
    Schedule s = create_schedule(mm.C);
    Tensor CL = s.cache_write(mm.C, "local");
    auto [io, jo, ii, ji] = s[mm.C].tile(mm.C.axis(0), mm.C.axis(1), 8, 16);
    s[mm.C].vectorize(ji);
    s[mm.C].parallel(io);
    s[CL].compute_at(s[mm.C], jo);
    auto [ko, ki] = s[CL].split(mm.k, 4);
    s[CL].reorder({ko, ki, CL.axis(0), CL.axis(1)});
    s[CL].unroll(ki);
    s[CL].vectorize(CL.axis(1));
    s[mm.C].pragma(io, "auto_unroll_max_step", 16);
    Schedule r = round_trip(s, {mm.C}, {mm.A, mm.B, mm.C});

    // The replayed schedule also computes the right numbers.
    Kernel k = build(r, {mm.A, mm.B, mm.C});
    auto a = Buffer<float>::random({Matmul::M, Matmul::K}, -1, 1, 1), b = Buffer<float>::random({Matmul::K, Matmul::N}, -1, 1, 2);
    Buffer<float> c({Matmul::M, Matmul::N});
    k(a, b, c);
    double worst = 0;
    for (int64_t i = 0; i < Matmul::M; ++i)
        for (int64_t j = 0; j < Matmul::N; ++j) {
            double acc = 0;
            for (int64_t kk = 0; kk < Matmul::K; ++kk) acc += double(a(i, kk)) * b(kk, j);
            worst = std::max(worst, std::abs(acc - c(i, j)));
        }
    CHECK(worst < 1e-4);
}

TEST_CASE("serialize: conv with an inlined padding stage round-trips") {
    const int64_t N = 1, CI = 3, H = 10, W = 12, CO = 4, KH = 3, KW = 3;
    Tensor X = placeholder({N, CI, H, W}, f32, "X");
    Tensor Wt = placeholder({CO, CI, KH, KW}, f32, "W");
    IterVar rc = reduce_axis(0, CI, "rc"), ry = reduce_axis(0, KH, "ry"), rx = reduce_axis(0, KW, "rx");
    Tensor P = compute({N, CI, H + 2, W + 2}, [&](Expr n, Expr c, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < H + 1 && x >= 1 && x < W + 1, X(n, c, y - 1, x - 1), 0.0f);
    }, "pad");
    Tensor Y = compute({N, CO, H, W}, [&](Expr n, Expr co, Expr y, Expr x) {
        return sum(P(n, rc, y + ry, x + rx) * Wt(co, rc, ry, rx), {rc, ry, rx});
    }, "conv");
    Schedule s = create_schedule(Y);
    s[P].compute_inline();
    auto [xo, xi] = s[Y].split(Y.axis(3), 4);
    auto cy = s[Y].fuse(Y.axis(1), Y.axis(2));
    auto [cyo, cyi] = s[Y].split_nparts(cy, 4);
    s[Y].reorder({Y.axis(0), cyo, cyi, xo, rc, ry, rx, xi});
    s[Y].vectorize(xi);
    s[Y].parallel(cyo);
    round_trip(s, {Y}, {X, Wt, Y});
}

TEST_CASE("serialize: cache_read, set_scope, compute_root and bind round-trip") {
    Matmul mm;
    Schedule s = create_schedule(mm.C);
    Tensor AA = s.cache_read(mm.A, "local", {mm.C});
    auto [io, ii] = s[mm.C].split(mm.C.axis(0), 8);
    s[AA].compute_at(s[mm.C], io);
    s[AA].compute_root();
    s[AA].set_scope("global");
    round_trip(s, {mm.C}, {mm.A, mm.B, mm.C});

    // bind is for GPU targets; the trace keeps the thread tag (not lowered here).
    Matmul g;
    Schedule t = create_schedule(g.C);
    auto [bo, bi] = t[g.C].split(g.C.axis(0), 32);
    t[g.C].bind(bo, block_x());
    t[g.C].bind(bi, thread_x());
    Schedule r = round_trip(t, {g.C}, {});
    CHECK(r.trace().back().strings == std::vector<std::string>{"threadIdx.x"});
}

TEST_CASE("serialize: an empty schedule round-trips and different schedules differ") {
    Matmul mm;
    Schedule s = create_schedule(mm.C);
    round_trip(s, {mm.C}, {mm.A, mm.B, mm.C});
    Schedule t = create_schedule(mm.C);
    t[mm.C].split(mm.C.axis(1), 8);
    CHECK(!(Schedule::from_json(t.to_json(), {mm.C}) == s));
    CHECK(!ir::structural_equal(lower(s, {mm.A, mm.B, mm.C}).body, lower(t, {mm.A, mm.B, mm.C}).body));
}

TEST_CASE("serialize: a refused primitive leaves no step in the trace") {
    Matmul mm;
    Schedule s = create_schedule(mm.C);
    CHECK_THROWS_AS(s[mm.C].split(mm.C.axis(0), 0), Error);
    CHECK_THROWS_AS(s[mm.C].split_nparts(mm.k, -1), Error);
    CHECK(s.trace().empty());
}

TEST_CASE("serialize: malformed records are a weft::Error naming the problem") {
    Matmul mm;
    auto from = [&](const std::string& text) { return error_of([&] { Schedule::from_json(text, {mm.C}); }); };
    auto record = [](const std::string& steps, const std::string& version = "1") {
        return R"({"format": "weft.schedule", "version": )" + version + R"(, "outputs": ["C"], "steps": [)" + steps + "]}";
    };
    auto step = [](const std::string& stage, const std::string& prim, const std::string& ivs, const std::string& ints,
                   const std::string& strings = "") {
        return R"({"stage": ")" + stage + R"(", "primitive": ")" + prim + R"(", "iter_vars": [)" + ivs +
               R"(], "ints": [)" + ints + R"(], "strings": [)" + strings + "]}";
    };
    // The well-formed record these break replays fine.
    CHECK(from(record(step("C", "split", "0", "8"))).empty());

    CHECK(from("{not json").find("not valid JSON") != std::string::npos);
    CHECK(from("").find("not valid JSON") != std::string::npos);
    CHECK(from("[1, 2]").find("expected a JSON object") != std::string::npos);
    CHECK(from(R"({"version": 1})").find("missing field 'format'") != std::string::npos);
    CHECK(from(record("", "7")).find("format version 7") != std::string::npos);
    CHECK(from(record("", "\"one\"")).find("'version' has the wrong type") != std::string::npos);
    CHECK(from(record("42")).find("a step must be a JSON object") != std::string::npos);
    CHECK(from(record(step("C", "spilt", "0", "8"))).find("unknown primitive 'spilt'") != std::string::npos);
    CHECK(from(record(step("Q", "split", "0", "8"))).find("no stage named 'Q'") != std::string::npos);
    CHECK(from(record(step("C", "split", "9", "8"))).find("position 9 is out of range") != std::string::npos);
    CHECK(from(record(step("C", "split", "-1", "8"))).find("position -1 is out of range") != std::string::npos);
    CHECK(from(record(step("C", "split", "0", ""))).find("expected at least one entry in 'ints'") != std::string::npos);
    CHECK(from(record(step("C", "split", "0", "8, 1, 1"))).find("optional tail strategy") != std::string::npos);
    CHECK(from(record(step("C", "reorder", "", ""))).find("at least one entry in 'iter_vars'") != std::string::npos);
    CHECK(from(record(step("C", "split", "\"i\"", "8"))).find("'iter_vars' must hold integers") != std::string::npos);
    CHECK(from(record(step("C", "compute_at", "0", "", "\"nowhere\""))).find("no stage named 'nowhere'") !=
          std::string::npos);
    CHECK(from(record(step("A", "cache_read", "", "3", "\"local\", \"C\""))).find("output 3 of 'A'") !=
          std::string::npos);
    // A step the primitive itself refuses: the primitive's reason, and which step it was.
    std::string refused = from(record(step("C", "split", "0", "8") + ", " + step("C", "split", "1", "0")));
    CHECK(refused.find("step 1 (split on 'C')") != std::string::npos);
    CHECK(refused.find("factor must be positive") != std::string::npos);
    // A record for another computation.
    CHECK(error_of([&] { Schedule::from_json(record(""), {mm.C, mm.C}); }).find("made for 1 output(s)") != std::string::npos);
    Tensor D = compute({4}, [&](Expr i) { return mm.A(i, 0) * 2.0f; }, "D");
    CHECK(error_of([&] { Schedule::from_json(record(""), {D}); }).find("the tensor given is 'D'") != std::string::npos);
}

TEST_CASE("serialize: stages that share a name cannot be told apart and say so") {
    Tensor X = placeholder({8}, f32, "X");
    Tensor T1 = compute({8}, [&](Expr i) { return X(i) + 1.0f; });  // both named "compute"
    Tensor T2 = compute({8}, [&](Expr i) { return T1(i) * 2.0f; });
    Schedule s = create_schedule(T2);
    s[T2].split(T2.axis(0), 4);
    std::string msg = error_of([&] { Schedule::from_json(s.to_json(), {T2}); });
    CHECK(msg.find("distinct names") != std::string::npos);
}

TEST_CASE("serialize: a split of an axis passed as an element of leaf_iter_vars records that axis") {
    // The split rewrites leaf_iter_vars while the caller's reference still points into it.
    Tensor X = placeholder({8, 12, 20}, f32, "x");
    Tensor Y = compute({8, 12, 20}, [&](Expr i, Expr j, Expr k) { return X(i, j, k) * 2.0f; }, "y");
    Schedule s = create_schedule(Y);
    s[Y].split(s[Y].leaf_iter_vars()[0], 4);
    s[Y].split_nparts(s[Y].leaf_iter_vars().back(), 5);
    REQUIRE(s.trace().size() == 2);
    CHECK(s.trace()[0].iter_vars == std::vector<int>{0});  // i, not i.outer
    CHECK(s.trace()[1].iter_vars == std::vector<int>{2});  // k
    Schedule replayed = Schedule::from_json(s.to_json(), {Y});
    CHECK(replayed == s);
    CHECK(ir::to_string(lower(replayed, {X, Y}).body) == ir::to_string(lower(s, {X, Y}).body));
}
