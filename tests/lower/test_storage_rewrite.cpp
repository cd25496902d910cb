// Storage rewrite: intermediates whose lifetimes do not overlap share one allocation; ones
// that are alive together, of different types, or split by a parallel loop do not.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "weft/lower/impl/storage_rewrite.hpp"  // the pass itself, for hand-built programs
#include "weft/weft.hpp"

using namespace weft;

namespace {

int count_allocates(const ir::Stmt& body) {
    std::string text = ir::to_string(body);
    int n = 0;
    for (size_t pos = text.find("allocate "); pos != std::string::npos; pos = text.find("allocate ", pos + 1)) ++n;
    return n;
}

double max_abs_error(const Buffer<float>& got, const std::vector<float>& want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double d = std::abs(double(got.data()[i]) - double(want[i]));
        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
    return worst;
}

// x -> a = x*2 -> b = a+1 -> c = b*b -> d = c-3, every stage computed at the root.
struct Chain {
    static constexpr int64_t n = 37, m = 19;
    Tensor X = placeholder({n, m}, f32, "X");
    Tensor A = compute({n, m}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "A");
    Tensor B = compute({n, m}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "B");
    Tensor C = compute({n, m}, [&](Expr i, Expr j) { return B(i, j) * B(i, j); }, "C");
    Tensor D = compute({n, m}, [&](Expr i, Expr j) { return C(i, j) - 3.0f; }, "D");
    static std::vector<float> reference(const Buffer<float>& x) {
        std::vector<float> r(size_t(n * m));
        for (size_t k = 0; k < r.size(); ++k) {
            float b = x.data()[k] * 2.0f + 1.0f;
            r[k] = b * b - 3.0f;
        }
        return r;
    }
};

}  // namespace

TEST_CASE("storage_rewrite: a chain of four root stages uses two buffers and still computes the same") {
    Chain c;
    Schedule s = create_schedule(c.D);
    ir::PrimFunc f = lower(s, {c.X, c.D});
    CHECK(count_allocates(f.body) == 2);

    Kernel k = build(s, {c.X, c.D});
    auto x = Buffer<float>::random({Chain::n, Chain::m}, -2, 2, 11);
    Buffer<float> d({Chain::n, Chain::m});
    k(x, d);
    CHECK(max_abs_error(d, Chain::reference(x)) < 1e-5);
}

TEST_CASE("storage_rewrite: a stage reading two live intermediates keeps them apart") {
    const int64_t n = 41;
    Tensor X = placeholder({n}, f32, "X");
    Tensor A = compute({n}, [&](Expr i) { return X(i) * 2.0f; }, "A");
    Tensor B = compute({n}, [&](Expr i) { return X(i) + 1.0f; }, "B");
    Tensor C = compute({n}, [&](Expr i) { return A(i) - B(i); }, "C");  // A and B alive together
    Tensor D = compute({n}, [&](Expr i) { return C(i) * 3.0f; }, "D");
    Schedule s = create_schedule(D);
    // A, B and C are all alive while C is computed: nothing can share.
    CHECK(count_allocates(lower(s, {X, D}).body) == 3);

    Kernel k = build(s, {X, D});
    auto x = Buffer<float>::random({n}, -2, 2, 12);
    Buffer<float> d({n});
    k(x, d);
    std::vector<float> ref(static_cast<size_t>(n));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = (x.data()[i] * 2.0f - (x.data()[i] + 1.0f)) * 3.0f;
    CHECK(max_abs_error(d, ref) < 1e-5);
}

TEST_CASE("storage_rewrite: buffers of different element types are not merged") {
    const int64_t n = 29;
    Tensor X = placeholder({n}, f32, "X");
    Tensor A = compute({n}, [&](Expr i) { return X(i) * 4.0f; }, "A");
    Tensor B = compute({n}, [&](Expr i) { return A(i) + 0.5f; }, "B");
    Tensor C = compute({n}, [&](Expr i) { return cast(i32, B(i)); }, "C");  // could reuse A but for its type
    Tensor D = compute({n}, [&](Expr i) { return cast(f32, C(i)) * 2.0f; }, "D");
    Schedule s = create_schedule(D);
    CHECK(count_allocates(lower(s, {X, D}).body) == 3);

    Kernel k = build(s, {X, D});
    auto x = Buffer<float>::random({n}, -3, 3, 13);
    Buffer<float> d({n});
    k(x, d);
    std::vector<float> ref(static_cast<size_t>(n));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = float(int32_t(x.data()[i] * 4.0f + 0.5f)) * 2.0f;
    CHECK(max_abs_error(d, ref) < 1e-5);
}

TEST_CASE("storage_rewrite: an allocation inside a parallel loop does not take over one outside it") {
    // A and B at the root; C and E inside D's row loop, which also reads B. A is dead
    // before that loop, so with a serial loop C reuses A's memory; with a parallel loop
    // every thread needs its own C. (C reads X, not a root stage: see the report on
    // bound inference of root producers read inside compute_at stages.)
    const int64_t n = 23, m = 17;
    auto lowered_allocates = [&](bool parallel, double* error) {
        Tensor X = placeholder({n, m}, f32, "X");
        Tensor A = compute({n, m}, [&](Expr i, Expr j) { return X(i, j) + 1.0f; }, "A");
        Tensor B = compute({n, m}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
        Tensor C = compute({n, m}, [&](Expr i, Expr j) { return X(i, j) - 0.25f; }, "C");
        Tensor E = compute({n, m}, [&](Expr i, Expr j) { return C(i, j) * C(i, j); }, "E");
        Tensor D = compute({n, m}, [&](Expr i, Expr j) { return E(i, j) + B(i, j); }, "D");
        Schedule s = create_schedule(D);
        s[C].compute_at(s[D], D.axis(0));
        s[E].compute_at(s[D], D.axis(0));
        if (parallel) s[D].parallel(D.axis(0));
        int count = count_allocates(lower(s, {X, D}).body);
        Kernel k = build(s, {X, D});
        auto x = Buffer<float>::random({n, m}, -2, 2, 14);
        Buffer<float> d({n, m});
        k(x, d);
        std::vector<float> ref(size_t(n * m));
        for (size_t i = 0; i < ref.size(); ++i) {
            float c = x.data()[i] - 0.25f;
            ref[i] = c * c + (x.data()[i] + 1.0f) * 2.0f;
        }
        *error = max_abs_error(d, ref);
        return count;
    };
    double err_serial = 1, err_parallel = 1;
    CHECK(lowered_allocates(false, &err_serial) == 3);
    CHECK(lowered_allocates(true, &err_parallel) == 4);
    CHECK(err_serial < 1e-5);
    CHECK(err_parallel < 1e-5);
}

TEST_CASE("storage_rewrite: the merged buffer is as large as the largest of its users") {
    // Sizes differ: A has n elements, C has 2n. C takes over A, which must grow to 2n.
    const int64_t n = 16;
    Tensor X = placeholder({n}, f32, "X");
    Tensor A = compute({n}, [&](Expr i) { return X(i) + 1.0f; }, "A");
    Tensor B = compute({2 * n}, [&](Expr i) { return A(i / 2) * 2.0f; }, "B");
    Tensor C = compute({2 * n}, [&](Expr i) { return B(i) + B(2 * n - 1 - i); }, "C");
    Tensor D = compute({2 * n}, [&](Expr i) { return C(i) * 0.5f; }, "D");
    Schedule s = create_schedule(D);
    ir::PrimFunc f = lower(s, {X, D});
    CHECK(count_allocates(f.body) == 2);
    const ir::Allocate* outer = nullptr;
    ir::post_order_visit(f.body, [&](const ir::Object* o) {
        if (o->kind == ir::NodeKind::Allocate && static_cast<const ir::Allocate*>(o)->buffer.name() == "A")
            outer = static_cast<const ir::Allocate*>(o);
    });
    REQUIRE(outer != nullptr);
    REQUIRE(outer->extents.size() == 1);
    auto* size = outer->extents[0].as<ir::IntImm>();
    REQUIRE(size != nullptr);
    CHECK(size->value == 2 * n);

    Kernel k = build(s, {X, D});
    auto x = Buffer<float>::random({n}, -2, 2, 15);
    Buffer<float> d({2 * n});
    k(x, d);
    std::vector<float> ref(static_cast<size_t>(2 * n));
    auto b = [&](int64_t i) { return (x.data()[i / 2] + 1.0f) * 2.0f; };
    for (int64_t i = 0; i < 2 * n; ++i) ref[size_t(i)] = (b(i) + b(2 * n - 1 - i)) * 0.5f;
    CHECK(max_abs_error(d, ref) < 1e-5);
}

// Hand-built programs: T is filled, then read inside loop j; U is allocated after.
// `out` is a kernel argument (not an Allocate) and is never touched.
struct HandBuilt {
    Var T{"T", DataType::handle()}, U{"U", DataType::handle()}, out{"out", DataType::handle()};
    Var i{"i"}, j{"j"}, p{"p"};
    ir::Stmt fill() const {
        return ir::For::make(i, make_int(0), make_int(8), ir::ForKind::Serial, ir::Store::make(T, ir::make_const(f32, 1.0), i));
    }
    ir::Stmt alloc(const Var& buf, DataType t, ir::Stmt body) const {
        return ir::Allocate::make(buf, t, {make_int(8)}, "global", std::move(body));
    }
};

TEST_CASE("storage_rewrite: a buffer read inside a loop lives for the whole loop") {
    // allocate T { fill T; for j { out[j] = T[7 - j]; allocate U { U[j] = 2; out[j] += U[j] } } }
    // In statement order T's last read comes before U's first write, but the loop repeats:
    // iteration 7 reads T[0] after iteration 0 wrote U[0]. They must not share memory.
    HandBuilt h;
    ir::Stmt use_u = ir::Seq::make({ir::Store::make(h.U, ir::make_const(f32, 2.0), h.j),
                                    ir::Store::make(h.out, ir::Load::make(f32, h.out, h.j) + ir::Load::make(f32, h.U, h.j), h.j)});
    ir::Stmt loop = ir::For::make(
        h.j, make_int(0), make_int(8), ir::ForKind::Serial,
        ir::Seq::make({ir::Store::make(h.out, ir::Load::make(f32, h.T, 7 - h.j), h.j), h.alloc(h.U, f32, use_u)}));
    ir::Stmt prog = h.alloc(h.T, f32, ir::Seq::make({h.fill(), loop}));
    ir::Stmt out = lower_passes::storage_rewrite(prog);
    CHECK(count_allocates(out) == 2);
    CHECK(out.same_as(prog));
}

TEST_CASE("storage_rewrite: hand-built, a dead buffer is reused unless a parallel loop or a type is in the way") {
    // allocate T { fill T; out[0] = T[3]; for p (kind) { allocate U (type) { U[p] = 1; out[p] = U[p] } } }
    HandBuilt h;
    auto program = [&](ir::ForKind kind, DataType u_type) {
        ir::Stmt use_u = ir::Seq::make({ir::Store::make(h.U, ir::make_const(u_type, 1.0), h.p),
                                        ir::Store::make(h.out, cast(f32, ir::Load::make(u_type, h.U, h.p)), h.p)});
        ir::Stmt loop = ir::For::make(h.p, make_int(0), make_int(8), kind, h.alloc(h.U, u_type, use_u));
        ir::Stmt read_t = ir::Store::make(h.out, ir::Load::make(f32, h.T, make_int(3)), make_int(0));
        return h.alloc(h.T, f32, ir::Seq::make({h.fill(), read_t, loop}));
    };
    ir::Stmt serial = lower_passes::storage_rewrite(program(ir::ForKind::Serial, f32));
    CHECK(count_allocates(serial) == 1);
    CHECK(ir::to_string(serial).find("U[") == std::string::npos);  // U's accesses now go to T
    CHECK(count_allocates(lower_passes::storage_rewrite(program(ir::ForKind::Parallel, f32))) == 2);
    CHECK(count_allocates(lower_passes::storage_rewrite(program(ir::ForKind::Serial, i32))) == 2);
}
