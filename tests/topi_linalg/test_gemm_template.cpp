// linalg's computes and schedules as templates of (computation, Target, Config): the space
// a recording config collects, every sampled point computing the right numbers, and a
// target other than the host (AVX2) getting schedules sized for it.
#include <doctest/doctest.h>

#include <random>

#include "linalg_reference.hpp"
#include "weft/topi/linalg.hpp"
#include "weft/weft.hpp"

using namespace weft;
using linalg_test::Shape;

namespace {

struct Gemm {
    Tensor A, B, C;
    Schedule s;
};

Gemm matmul_for(const Shape& sh, const Target& target, const Config& config) {
    Gemm g;
    g.A = placeholder({sh.M, sh.K}, f32, "A");
    g.B = placeholder({sh.K, sh.N}, f32, "B");
    g.C = topi::matmul(g.A, g.B, "matmul", target, config);
    g.s = create_schedule(g.C);
    topi::schedule_matmul(g.s, g.C, g.C, target, config);
    return g;
}

ConfigSpace matmul_space(const Shape& sh, const Target& target) {
    ConfigSpace space;
    matmul_for(sh, target, Config::recording(&space));
    return space;
}

void check_matmul_runs(const Shape& sh, const Target& target, const Config& config) {
    Gemm g = matmul_for(sh, target, config);
    Kernel k = build(g.s, {g.A, g.B, g.C}, target);
    auto a = linalg_test::random_buffer({sh.M, sh.K}, 1), b = linalg_test::random_buffer({sh.K, sh.N}, 2);
    Buffer<float> c({sh.M, sh.N});
    k(a, b, c);
    linalg_test::check_close(c, linalg_test::ref_gemm(sh.M, sh.N, sh.K, [&](int64_t i, int64_t x) { return a(i, x); },
                                                      [&](int64_t x, int64_t j) { return b(x, j); }),
                             sh.K);
}

// The target this machine can run, with the given thread count.
Target host_with(int threads) {
    Target t = Target::host();
    t.num_threads = threads;
    return t;
}

// docs/tuning.md's example of a user's own template.
void schedule_my_op(Schedule& s, const Tensor& out, const Target& target, const Config& config) {
    const int lanes = target.natural_lanes(32);
    int64_t tile = config.define("my_op.tile", knob_powers_of_two(lanes, 16 * lanes), 4 * lanes);
    auto [o, i] = s[out].split(out.axis(0), tile);
    s[out].vectorize(i);
    if (config.define_bool("my_op.parallel", target.num_threads > 1)) s[out].parallel(o);
}

}  // namespace

TEST_CASE("a user's own template: its space, and every point builds and computes") {
    Tensor X = placeholder({1000}, f32, "x");
    Tensor Y = compute({1000}, [&](Expr i) { return X(i) * 3.f; }, "y");
    ConfigSpace space;
    {
        Schedule s = create_schedule(Y);
        schedule_my_op(s, Y, Target::x86_avx2(2), Config::recording(&space));
    }
    CHECK(space.str() == "my_op.tile in {8, 16, 32*, 64, 128}\nmy_op.parallel in {0, 1*}\n10 points\n");
    // A space belongs to its target: an AVX2 point is refused on an AVX-512 target whose
    // candidates differ (the host's own space is used below).
    ConfigSpace host_space;
    {
        Schedule s = create_schedule(Y);
        schedule_my_op(s, Y, host_with(2), Config::recording(&host_space));
    }
    auto x = Buffer<float>::random({1000}, -1, 1, 4);
    for (uint64_t p = 0; p < host_space.size(); ++p) {
        Schedule s = create_schedule(Y);
        schedule_my_op(s, Y, host_with(2), host_space.at(p));
        Kernel k = build(s, {X, Y});
        Buffer<float> y({1000});
        k(x, y);
        for (int64_t i = 0; i < 1000; ++i) REQUIRE(y(i) == x(i) * 3.f);
    }
}

TEST_CASE("matmul's space has the knobs its docs name, and its defaults are Config{}") {
    ConfigSpace space = matmul_space({256, 256, 256}, Target::x86_avx512(2));
    std::vector<std::string> names;
    for (const Knob& k : space.knobs()) names.push_back(k.name);
    CHECK(names == std::vector<std::string>{"gemm.pack_rhs", "gemm.nr", "gemm.k_unroll", "gemm.mr", "gemm.stream_chunk",
                                            "gemm.parallel_panels", "gemm.in_place_tiles"});
    CHECK(space.size() > 100);
    CHECK(space.find("gemm.nr")->default_value == 64);  // four AVX-512 vectors
    // The defaults as explicit values give the same program as no values at all.
    auto program = [](const Gemm& g) { return ir::to_string(lower(g.s, {g.A, g.B, g.C}).body); };
    CHECK(program(matmul_for({256, 256, 256}, Target::x86_avx512(2), space.defaults())) ==
          program(matmul_for({256, 256, 256}, Target::x86_avx512(2), Config{})));
    // A few rows: B is read in place, and the space says so with its own knobs.
    // A few rows: B is read in place by default, and the space is the same knobs: every
    // point sets them all, whichever way its choices read B.
    ConfigSpace few = matmul_space({2, 1000, 512}, Target::x86_avx512(2));
    CHECK(few.find("gemm.pack_rhs")->default_value == 0);
    CHECK(few.knobs().size() == space.knobs().size());
    // dense always packs its weight: no stream knob.
    ConfigSpace dense_space;
    {
        Config rec = Config::recording(&dense_space);
        Tensor X = placeholder({64, 128}, f32, "X"), W = placeholder({256, 128}, f32, "W");
        Tensor Y = topi::dense(X, W, Tensor(), "dense", Target::x86_avx512(2), rec);
        Schedule s = create_schedule(Y);
        topi::schedule_dense(s, Y, Y, Target::x86_avx512(2), rec);
    }
    CHECK(dense_space.find("gemm.stream_chunk") == nullptr);
    CHECK(dense_space.find("gemm.in_place_tiles") == nullptr);
    CHECK(dense_space.find("gemm.pack_rhs") == nullptr);
    CHECK(dense_space.find("gemm.nr") != nullptr);
}

TEST_CASE("random points of matmul's space compute the right numbers") {
    std::mt19937_64 rng(7);
    for (const Shape& sh : std::vector<Shape>{{96, 80, 40}, {5, 300, 64}, {67, 33, 9}}) {
        for (int threads : {1, 2}) {
            const Target target = host_with(threads);
            ConfigSpace space = matmul_space(sh, target);
            CAPTURE(sh.M);
            CAPTURE(sh.N);
            CAPTURE(threads);
            for (int trial = 0; trial < 6; ++trial) {
                Config c = space.at(rng() % space.size());
                CAPTURE(c.str());
                linalg_test::with_threads(threads, [&] { check_matmul_runs(sh, target, c); });
            }
        }
    }
}

TEST_CASE("a config for another workload is refused, naming the knob") {
    Config c;
    c.set("gemm.nr", 40);  // not a whole number of AVX-512's 16-lane vectors
    CHECK_THROWS_WITH_AS(matmul_for({256, 256, 256}, Target::x86_avx512(1), c),
                         doctest::Contains("schedule knob 'gemm.nr' is set to 40"), Error);
}

TEST_CASE("an AVX2 target gets GEMM schedules sized for AVX2, whatever the host") {
    const Target avx2 = Target::x86_avx2(1);
    ConfigSpace space = matmul_space({256, 256, 256}, avx2);
    CHECK(space.find("gemm.nr")->default_value == 32);  // four 8-lane vectors
    CHECK(space.find("gemm.mr")->default_value == 3);   // 12 accumulator registers / 4 vectors
    Gemm g = matmul_for({256, 256, 256}, avx2, Config{});
    const std::string program = ir::to_string(lower(g.s, {g.A, g.B, g.C}).body);
    // The register tile's rows are 32-lane vectors (four ymm registers), not AVX-512's 64.
    CHECK(program.find(", 1, 32)]") != std::string::npos);
    CHECK(program.find(", 1, 64)]") == std::string::npos);
    // It runs here when this CPU has AVX2 and FMA (every x86-64 machine this project has seen).
    if (Target::host().has_feature("avx2") && Target::host().has_feature("fma")) {
        check_matmul_runs({256, 256, 256}, avx2, Config{});
        check_matmul_runs({37, 70, 19}, avx2, Config{});
    } else {
        MESSAGE("skipped: this CPU has no AVX2");
    }
}

TEST_CASE("gemm.in_place_tiles reads B in place with register tiles, partial strips and blocks overlapping") {
    const Target target = host_with(1);
    // 200 columns: strips of 64 leave a partial last one; 30 rows in blocks of 4 a partial
    // last block; 20 columns: a tile wider than the product is cut to it.
    for (const Shape& sh : std::vector<Shape>{{30, 200, 48}, {7, 20, 16}, {64, 128, 33}}) {
        CAPTURE(sh.M);
        CAPTURE(sh.N);
        ConfigSpace space = matmul_space(sh, target);
        Config c = space.defaults();
        c.set("gemm.pack_rhs", 0).set("gemm.in_place_tiles", 1).set("gemm.mr", std::min<int64_t>(4, sh.M));
        c.set("gemm.nr", space.find("gemm.nr")->candidates.back());
        linalg_test::with_threads(1, [&] { check_matmul_runs(sh, target, c); });
        // No packing stage: the register tile reads B itself (the packed path's buffer is
        // "<name>.B_packed"), and the rows of a tile are unrolled (as many stores of C).
        Gemm g = matmul_for(sh, target, c);
        const std::string program = ir::to_string(lower(g.s, {g.A, g.B, g.C}).body);
        CHECK(program.find("_packed") == std::string::npos);
        c.set("gemm.pack_rhs", 1);
        Gemm packed = matmul_for(sh, target, c);
        CHECK(ir::to_string(lower(packed.s, {packed.A, packed.B, packed.C}).body).find("_packed") != std::string::npos);
    }
}
