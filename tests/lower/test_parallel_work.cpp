// annotate_parallel_work: each parallel loop says how much work one iteration does (element
// stores: lanes x the trip counts of the loops around the store), which the thread pool uses
// to run a small loop on the calling thread alone.
#include <doctest/doctest.h>

#include <string>

#include "lower/lowered_text.hpp"
#include "weft/lower/impl/parallel_work.hpp"  // the pass itself, for hand-built programs
#include "weft/weft.hpp"

using namespace weft;
using namespace weft::ir;

namespace {

int64_t annotated_work(const Stmt& program) {
    Stmt s = lower_passes::annotate_parallel_work(program);
    auto* attr = s.as<AttrStmt>();
    REQUIRE(attr != nullptr);
    REQUIRE(attr->key == std::string(attr::parallel_work));
    REQUIRE(attr->body.as<For>() != nullptr);
    int64_t work = -1;
    REQUIRE(as_const_int(attr->value, &work));
    return work;
}

Stmt vector_store(const Var& buffer, const Expr& base, int lanes) {
    return Store::make(buffer, Broadcast::make(make_const(f32, 1), lanes), Ramp::make(base, make_int(1), lanes));
}

}  // namespace

TEST_CASE("parallel_work counts a vector store's lanes times the trip counts of the loops inside") {
    Var Y("Y", DataType::handle()), i("i"), j("j"), k("k");
    // for i parallel 64 { for j 8 { for k 4 { Y[ramp(...), 16 lanes] = ...; Y[i] = ... } } }
    Stmt inner = Seq::make({vector_store(Y, i * 512 + j * 64 + k * 16, 16), Store::make(Y, make_const(f32, 0), i)});
    Stmt program = For::make(i, make_int(0), make_int(64), ForKind::Parallel,
                             For::make(j, make_int(0), make_int(8), ForKind::Serial,
                                       For::make(k, make_int(0), make_int(4), ForKind::Serial, inner)));
    CHECK(annotated_work(program) == 8 * 4 * (16 + 1));
}

TEST_CASE("parallel_work bounds a tail's trip count and counts both branches of an if") {
    Var Y("Y", DataType::handle()), n("n"), i("i"), j("j");
    // The inner loop runs min(16, n - i*16) times: at most 16, whatever n is.
    Stmt tail = For::make(j, make_int(0), min(make_int(16), n - i * 16), ForKind::Serial,
                          Store::make(Y, make_const(f32, 1), i * 16 + j));
    Stmt branch = IfThenElse::make(i < n, tail, Store::make(Y, make_const(f32, 2), i));
    CHECK(annotated_work(For::make(i, make_int(0), n, ForKind::Parallel, branch)) == 16 + 1);
}

TEST_CASE("parallel_work is 0 (unknown) when an inner trip count has no constant bound") {
    Var Y("Y", DataType::handle()), n("n"), i("i"), j("j");
    Stmt program = For::make(i, make_int(0), make_int(8), ForKind::Parallel,
                             For::make(j, make_int(0), n, ForKind::Serial, Store::make(Y, make_const(f32, 1), j)));
    CHECK(annotated_work(program) == 0);
}

TEST_CASE("lower annotates every parallel loop with its work, and only parallel loops") {
    const int64_t n = 64, m = 256;
    Tensor X = placeholder({n, m}, f32, "X");
    Tensor Y = compute({n, m}, [&](Expr r, Expr c) { return X(r, c) * 2.0f; }, "Y");
    Schedule s = create_schedule(Y);
    auto [co, ci] = s[Y].split(Y.axis(1), 16);
    s[Y].vectorize(ci);
    s[Y].parallel(Y.axis(0));
    std::string body = ir::to_string(lower(s, {X, Y}).body);
    CAPTURE(body);
    // One row: 16 stores of 16 lanes.
    CHECK(lowered_text::count(body, "// attr parallel_work = 256\n") == 1);
    CHECK(lowered_text::count(body, "parallel_work") == 1);

    Schedule serial = create_schedule(Y);
    CHECK(lowered_text::count(ir::to_string(lower(serial, {X, Y}).body), "parallel_work") == 0);
}
