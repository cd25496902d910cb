// Random legal schedules: every schedule of a computation must give the same numbers.
//
// For each computation below, a seeded generator draws schedules from the primitives
// (split with dividing and non-dividing factors, split_nparts, reorder, fuse, vectorize,
// unroll, parallel, compute_at, compute_inline, set_scope, cache_read, cache_write), builds
// each one, runs it on random data and compares with a naive C++ reference.
//
// The generator only emits legal schedules, so a weft::Error is a failure. To reproduce one:
// the failure prints the seed, the primitive calls and the schedule; rerun just that seed with
//   WEFT_TEST_SEED=<seed> WEFT_RANDOM_SCHEDULES=1 ./test_e2e -tc='random schedules: <name>'
// (WEFT_RANDOM_SCHEDULES=<n> runs n schedules per computation; default 50. With
// WEFT_TEST_PRINT_LOWERED=1 a schedule that computes wrong numbers prints its loop program;
// WEFT_TEST_VERBOSE=1 prints every schedule with its build and run times.)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "reference.hpp"
#include "weft/ir/arith/simplify.hpp"

using namespace weft;
using namespace weft_test;

namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}
uint64_t base_seed() { return env_u64("WEFT_TEST_SEED", 20240611); }
int num_schedules() { return int(env_u64("WEFT_RANDOM_SCHEDULES", 50)); }

int64_t const_extent(const IterVar& iv) {
    int64_t v = 0;
    INFO("extent of ", iv.name(), ": ", iv.dom().extent);
    REQUIRE(ir::as_const_int(ir::arith::simplify(iv.dom().extent), &v));
    return v;
}

// The generator's state: the RNG, a log of the primitive calls it made (printed on
// failure), and the extent of every loop it knows about (full-domain extents: a stage
// computed at a consumer's loop may get a smaller region, never a symbolic one here).
class Gen {
public:
    explicit Gen(uint64_t seed) : rng_(seed) {}

    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[size_t(uniform(0, int(v.size()) - 1))];
    }
    template <class T>
    void shuffle(std::vector<T>& v) {
        std::shuffle(v.begin(), v.end(), rng_);
    }

    int64_t extent(const IterVar& iv) {
        auto it = extents_.find(iv.get());
        if (it != extents_.end()) return it->second;
        return extents_[iv.get()] = const_extent(iv);
    }
    void set_extent(const IterVar& iv, int64_t e) { extents_[iv.get()] = e; }

    std::ostringstream log;

private:
    std::mt19937_64 rng_;
    std::unordered_map<const void*, int64_t> extents_;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_reduce(const IterVar& iv) { return iv->iter_kind == ir::IterKind::Reduce; }

// Splits, reorders and fuses the loops of one stage.
void transform_loops(Stage st, Gen& g) {
    const std::string name = st.name();
    // At most 3 splits per stage (a tile is 2): every non-dividing split adds a guard, and
    // loop partitioning copies a loop body per guard, so deep stacks of tails compile slowly.
    int splits = g.uniform(0, 3);
    if (splits >= 2 && g.chance(0.25)) {
        splits -= 2;
        // tile two distinct data loops (tile orders them xo, yo, xi, yi).
        std::vector<IterVar> data;
        for (auto& iv : st.leaf_iter_vars())
            if (!is_reduce(iv)) data.push_back(iv);
        if (data.size() >= 2) {
            g.shuffle(data);
            IterVar x = data[0], y = data[1];
            int64_t ex = g.extent(x), ey = g.extent(y);
            int64_t fx = g.pick(std::vector<int64_t>{1, 2, 4, 5, 8, ex + 1}), fy = g.pick(std::vector<int64_t>{1, 3, 4, 8, 16});
            auto [xo, yo, xi, yi] = st.tile(x, y, fx, fy);
            g.set_extent(xo, ceil_div(ex, fx));
            g.set_extent(xi, fx);
            g.set_extent(yo, ceil_div(ey, fy));
            g.set_extent(yi, fy);
            g.log << "s[" << name << "].tile(" << x.name() << ", " << y.name() << ", " << fx << ", " << fy << ");\n";
        }
    }
    for (int i = 0; i < splits; ++i) {
        IterVar iv = g.pick(st.leaf_iter_vars());
        int64_t e = g.extent(iv);
        if (g.chance(0.75)) {
            int64_t f = g.pick(std::vector<int64_t>{1, 2, 3, 5, 7, 8, 16, e + g.uniform(1, 5)});
            auto [o, in] = st.split(iv, f);
            g.set_extent(o, ceil_div(e, f));
            g.set_extent(in, f);
            g.log << "s[" << name << "].split(" << iv.name() << ", " << f << ");\n";
        } else {
            int64_t n = g.pick(std::vector<int64_t>{1, 2, 3, 4, 7, e + 1});
            auto [o, in] = st.split_nparts(iv, n);
            g.set_extent(o, n);
            g.set_extent(in, ceil_div(e, n));
            g.log << "s[" << name << "].split_nparts(" << iv.name() << ", " << n << ");\n";
        }
    }
    if (g.chance(0.7)) {
        // A random permutation of all the loops, or of a random subset of them.
        std::vector<IterVar> order = st.leaf_iter_vars();
        if (order.size() > 2 && g.chance(0.3)) {
            g.shuffle(order);
            order.resize(size_t(g.uniform(2, int(order.size()))));
        }
        g.shuffle(order);
        st.reorder(order);
        g.log << "s[" << name << "].reorder({";
        for (size_t i = 0; i < order.size(); ++i) g.log << (i ? ", " : "") << order[i].name();
        g.log << "});\n";
    }
    int fuses = g.chance(0.4) ? g.uniform(1, 2) : 0;
    for (int i = 0; i < fuses; ++i) {
        const auto& leaves = st.leaf_iter_vars();
        std::vector<size_t> pairs;  // adjacent loops of the same kind
        for (size_t p = 0; p + 1 < leaves.size(); ++p)
            if (is_reduce(leaves[p]) == is_reduce(leaves[p + 1])) pairs.push_back(p);
        if (pairs.empty()) break;
        size_t p = g.pick(pairs);
        IterVar a = leaves[p], b = leaves[p + 1];
        int64_t e = g.extent(a) * g.extent(b);
        IterVar f = st.fuse(a, b);
        g.set_extent(f, e);
        g.log << "s[" << name << "].fuse(" << a.name() << ", " << b.name() << ");\n";
    }
}

// Loop kinds: parallel (mostly of root stages; now and then a parallel loop nested in a
// consumer's parallel loop), vectorize, unroll, and a pragma.
void annotate_loops(Stage st, Gen& g, bool at_root) {
    const std::string name = st.name();
    const std::vector<IterVar> leaves = st.leaf_iter_vars();
    std::unordered_set<const void*> used;
    if (g.chance(at_root ? 0.35 : 0.1)) {
        // A data loop with only data loops outside it (usually the outermost).
        size_t p = 0;
        while (p + 1 < leaves.size() && !is_reduce(leaves[p + 1]) && g.chance(0.25)) ++p;
        if (!is_reduce(leaves[p])) {
            st.parallel(leaves[p]);
            used.insert(leaves[p].get());
            g.log << "s[" << name << "].parallel(" << leaves[p].name() << ");\n";
        }
    }
    if (g.chance(0.5)) {
        // The innermost loop if it is a data loop; now and then the innermost data loop
        // even when reduction loops run inside it.
        IterVar v = leaves.back();
        if (is_reduce(v) && g.chance(0.3))
            for (auto it = leaves.rbegin(); it != leaves.rend(); ++it)
                if (!is_reduce(*it)) { v = *it; break; }
        if (!is_reduce(v) && !used.count(v.get()) && g.extent(v) <= 64) {
            st.vectorize(v);
            used.insert(v.get());
            g.log << "s[" << name << "].vectorize(" << v.name() << ");\n";
        }
    }
    if (g.chance(0.4)) {
        IterVar u = g.pick(leaves);
        if (!used.count(u.get()) && g.extent(u) <= 16) {
            st.unroll(u);
            g.log << "s[" << name << "].unroll(" << u.name() << ");\n";
        }
    }
    if (g.chance(0.1)) {
        IterVar p = g.pick(leaves);
        st.pragma(p, "random_note", g.uniform(0, 3));
        g.log << "s[" << name << "].pragma(" << p.name() << ", \"random_note\");\n";
    }
}

struct GenOptions {
    double p_inline = 0.4;  // of an element-wise intermediate stage
    double p_attach = 0.6;  // compute_at (where legal) rather than root
    double p_local = 0.15;  // set_scope("local") of an intermediate stage
};

// Schedules every stage of s at random, consumers first. compute_at is legal when every
// (non-inlined) reader of the stage runs inside the chosen loop: anc[r] is the set of loops
// that enclose stage r's whole nest in the lowered program.
void random_schedule(Schedule& s, Gen& g, const GenOptions& opt = {}) {
    const auto& stages = s.stages();
    const size_t n = stages.size();
    std::unordered_map<const void*, size_t> index;
    for (size_t i = 0; i < n; ++i) {
        auto& node = *stages[i].node();
        index[node.op.get()] = i;
        index[node.origin_op.get()] = i;
        for (auto& p : node.previous_ops) index[p.get()] = i;
    }
    std::vector<std::vector<size_t>> readers(n);
    for (size_t r = 0; r < n; ++r) {
        if (!stages[r].op()->is_compute()) continue;
        for (auto& t : stages[r].op().input_tensors()) {
            auto it = index.find(t.op().get());
            REQUIRE(it != index.end());
            auto& rv = readers[it->second];
            if (std::find(rv.begin(), rv.end(), r) == rv.end()) rv.push_back(r);
        }
    }
    std::vector<bool> inlined(n, false);
    std::vector<std::unordered_set<const void*>> anc(n);
    std::function<void(size_t, std::vector<size_t>&)> effective_readers = [&](size_t i, std::vector<size_t>& out) {
        for (size_t r : readers[i]) {
            if (inlined[r]) effective_readers(r, out);
            else if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
        }
    };
    for (size_t i = n; i-- > 0;) {
        Stage st = stages[i];
        auto& node = *st.node();
        if (!node.op->is_compute()) continue;
        const std::string name = st.name();
        if (!node.is_output && !node.op->is_reduction() && g.chance(opt.p_inline)) {
            st.compute_inline();
            inlined[i] = true;
            g.log << "s[" << name << "].compute_inline();\n";
            continue;
        }
        transform_loops(st, g);
        bool at_root = true;
        if (!node.is_output) {
            std::vector<size_t> eff;
            effective_readers(i, eff);
            std::vector<std::pair<size_t, IterVar>> targets;
            for (size_t c : eff)
                for (auto& loop : stages[c].leaf_iter_vars()) {
                    bool ok = true;
                    for (size_t r : eff) ok &= r == c || anc[r].count(loop.get()) > 0;
                    if (ok) targets.emplace_back(c, loop);
                }
            if (!targets.empty() && g.chance(opt.p_attach)) {
                auto [c, loop] = g.pick(targets);
                st.compute_at(stages[c], loop);
                at_root = false;
                anc[i] = anc[c];
                for (auto& l : stages[c].leaf_iter_vars()) {
                    anc[i].insert(l.get());
                    if (l.same_as(loop)) break;
                }
                g.log << "s[" << name << "].compute_at(s[" << stages[c].name() << "], " << loop.name() << ");\n";
            }
            if (node.scope == "global" && g.chance(opt.p_local)) {
                st.set_scope("local");
                g.log << "s[" << name << "].set_scope(\"local\");\n";
            }
        }
        annotate_loops(st, g, at_root);
    }
}

std::string describe(uint64_t seed, const Gen& g, const Schedule& s) {
    std::ostringstream os;
    os << "seed " << seed << " (rerun: WEFT_TEST_SEED=" << seed << " WEFT_RANDOM_SCHEDULES=1)\nprimitives:\n"
       << g.log.str() << "schedule:\n";
    if (s.node()) os << s;
    return os.str();
}

// Builds `trials` random schedules of one computation and checks each against `want`.
// `make` creates a fresh schedule (its cache_read/cache_write first) and randomizes it;
// `run` calls the kernel and returns the output to compare.
void check_random_schedules(const std::vector<Argument>& args, const std::function<Schedule(Gen&)>& make,
                            const std::function<const Buffer<float>&(const Kernel&)>& run,
                            const std::vector<float>& want, double tol = 1e-4) {
    const uint64_t base = base_seed();
    const int trials = num_schedules();
    int failures = 0;
    for (int t = 0; t < trials; ++t) {
        const uint64_t seed = base + uint64_t(t);
        Gen g(seed);
        Schedule s;
        INFO(describe(seed, g, s));  // evaluated only when a check fails
        try {
            s = make(g);
            auto t0 = std::chrono::steady_clock::now();
            Kernel k = build(s, args);
            auto t1 = std::chrono::steady_clock::now();
            const Buffer<float>& got = run(k);
            auto t2 = std::chrono::steady_clock::now();
            double err = max_rel_error(got, want);
            if (std::getenv("WEFT_TEST_VERBOSE"))
                std::cerr << describe(seed, g, s) << "build " << std::chrono::duration<double>(t1 - t0).count()
                          << " s, run " << std::chrono::duration<double>(t2 - t1).count() << " s\n\n";
            CHECK(err < tol);
            failures += !(err < tol);
            if (!(err < tol) && std::getenv("WEFT_TEST_PRINT_LOWERED")) std::cerr << lower(s, args).body;
        } catch (const weft::Error& e) {
            FAIL_CHECK((std::string("weft::Error on a legal schedule: ") + e.what()));
            ++failures;
        }
    }
    MESSAGE((std::to_string(trials - failures) + " of " + std::to_string(trials) + " random schedules passed"));
}

// Fills an output with NaN so that elements a kernel forgets to write are caught.
void poison(const Buffer<float>& b) { b.fill(std::numeric_limits<float>::quiet_NaN()); }

// Runs a kernel of the prod (x * 2) -> cons (+ 1) chain on random x and checks every element.
void check_prod_cons(const Kernel& k, int64_t n, unsigned seed) {
    auto x = Buffer<float>::random({n}, -1, 1, seed);
    Buffer<float> c({n});
    poison(c);
    k(x, c);
    std::vector<float> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[size_t(i)] = x(i) * 2 + 1;
    CHECK(max_rel_error(c, want) < 1e-6);
}

// The usual `run` of check_random_schedules: poison `out`, call the kernel on the inputs
// and `out`, return `out`. Buffers share storage, so capturing copies is cheap.
template <class... In>
std::function<const Buffer<float>&(const Kernel&)> run_into(const Buffer<float>& out, const In&... inputs) {
    return [=](const Kernel& kern) -> const Buffer<float>& {
        poison(out);
        kern(inputs..., out);
        return out;
    };
}

// The usual `make`: a fresh schedule of `output` with random primitives and nothing else.
std::function<Schedule(Gen&)> random_schedules_of(const Tensor& output) {
    return [output](Gen& g) {
        Schedule s = create_schedule(output);
        random_schedule(s, g);
        return s;
    };
}

}  // namespace

TEST_CASE("random schedules: matmul 37x45x29") {
    const int64_t M = 37, N = 45, K = 29;
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    auto a = Buffer<float>::random({M, K}, -1, 1, 11), b = Buffer<float>::random({K, N}, -1, 1, 12);
    Buffer<float> c({M, N});
    auto want = ref_matmul(a, b, M, N, K);
    check_random_schedules(
        {A, B, C},
        [&](Gen& g) {
            Schedule s = create_schedule(C);
            Tensor reader = C;
            if (g.chance(0.5)) {
                reader = s.cache_write(C, "local");
                g.log << "s.cache_write(C, \"local\");\n";
            }
            if (g.chance(0.3)) {
                const Tensor& src = g.chance(0.5) ? A : B;
                std::string scope = g.chance(0.5) ? "local" : "global";
                s.cache_read(src, scope, {reader});
                g.log << "s.cache_read(" << src.name() << ", \"" << scope << "\", {" << reader.name() << "});\n";
            }
            random_schedule(s, g);
            return s;
        },
        run_into(c, a, b),
        want);
}

TEST_CASE("random schedules: direct conv2d NCHW with a padded input stage") {
    const int64_t N = 2, CI = 3, H = 10, W = 9, CO = 4, KH = 3, KW = 3, PAD = 1;
    Tensor X = placeholder({N, CI, H, W}, f32, "X");
    Tensor Wt = placeholder({CO, CI, KH, KW}, f32, "W");
    IterVar rc = reduce_axis(0, CI, "rc"), ry = reduce_axis(0, KH, "ry"), rx = reduce_axis(0, KW, "rx");
    Tensor P = compute({N, CI, H + 2 * PAD, W + 2 * PAD}, [&](Expr n, Expr c, Expr y, Expr x) {
        return if_then_else(y >= PAD && y < H + PAD && x >= PAD && x < W + PAD, X(n, c, y - PAD, x - PAD), 0.0f);
    }, "pad");
    Tensor Y = compute({N, CO, H, W}, [&](Expr n, Expr co, Expr y, Expr x) {
        return sum(P(n, rc, y + ry, x + rx) * Wt(co, rc, ry, rx), {rc, ry, rx});
    }, "conv");
    auto x = Buffer<float>::random({N, CI, H, W}, -1, 1, 21), w = Buffer<float>::random({CO, CI, KH, KW}, -1, 1, 22);
    Buffer<float> y({N, CO, H, W});
    auto want = ref_conv2d_nchw(x, w, PAD);
    check_random_schedules(
        {X, Wt, Y},
        [&](Gen& g) {
            Schedule s = create_schedule(Y);
            Tensor reader = Y;
            if (g.chance(0.4)) {
                reader = s.cache_write(Y, "local");
                g.log << "s.cache_write(conv, \"local\");\n";
            }
            if (g.chance(0.2)) {
                s.cache_read(Wt, "local", {reader});
                g.log << "s.cache_read(W, \"local\", {" << reader.name() << "});\n";
            }
            random_schedule(s, g);
            return s;
        },
        run_into(y, x, w),
        want);
}

TEST_CASE("random schedules: softmax (rowmax, exp, rowsum, divide)") {
    const int64_t R = 13, L = 37;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k1 = reduce_axis(0, L, "k1"), k2 = reduce_axis(0, L, "k2");
    // Spelled te::max(x, std::vector<IterVar>{k1}): max(x, {k1}) is ambiguous with ir::max(Expr, Expr).
    Tensor mx = compute({R}, [&](Expr i) { return te::max(X(i, k1), std::vector<IterVar>{k1}); }, "rowmax");
    Tensor e = compute({R, L}, [&](Expr i, Expr j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor den = compute({R}, [&](Expr i) { return sum(e(i, k2), {k2}); }, "rowsum");
    Tensor Y = compute({R, L}, [&](Expr i, Expr j) { return e(i, j) / den(i); }, "softmax");
    auto x = Buffer<float>::random({R, L}, -4, 4, 31);
    Buffer<float> y({R, L});
    auto want = ref_softmax(x);
    check_random_schedules(
        {X, Y},
        random_schedules_of(Y),
        run_into(y, x),
        want);
}

TEST_CASE("random schedules: element-wise chain of three stages") {
    const int64_t R = 19, L = 23;
    Tensor X = placeholder({R, L}, f32, "X");
    Tensor T1 = compute({R, L}, [&](Expr i, Expr j) { return X(i, j) * 1.5f - 0.25f; }, "axpb");
    Tensor T2 = compute({R, L}, [&](Expr i, Expr j) { return max(T1(i, j), 0.0f) + tanh(T1(i, j)); }, "act");
    Tensor Y = compute({R, L}, [&](Expr i, Expr j) { return T2(i, j) * X(i, j) + sigmoid(T1(i, j)); }, "y");
    auto x = Buffer<float>::random({R, L}, -3, 3, 41);
    Buffer<float> y({R, L});
    std::vector<float> want(size_t(R * L));
    for (int64_t i = 0; i < R * L; ++i) {
        double v = x.data()[i], t1 = v * 1.5 - 0.25, t2 = std::max(t1, 0.0) + std::tanh(t1);
        want[size_t(i)] = float(t2 * v + 1 / (1 + std::exp(-t1)));
    }
    check_random_schedules(
        {X, Y},
        random_schedules_of(Y),
        run_into(y, x),
        want);
}

TEST_CASE("random schedules: producer and a consumer reading a 3-point stencil of it") {
    const int64_t R = 7, L = 41;
    Tensor X = placeholder({R, L + 2}, f32, "X");
    Tensor P = compute({R, L + 2}, [&](Expr i, Expr j) { return X(i, j) * 2.0f + 1.0f; }, "prod");
    Tensor C = compute({R, L}, [&](Expr i, Expr j) { return P(i, j) + P(i, j + 1) * 0.5f + P(i, j + 2); }, "cons");
    auto x = Buffer<float>::random({R, L + 2}, -1, 1, 51);
    Buffer<float> c({R, L});
    std::vector<float> want(size_t(R * L));
    for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < L; ++j) {
            auto p = [&](int64_t jj) { return double(x(i, jj)) * 2 + 1; };
            want[size_t(i * L + j)] = float(p(j) + p(j + 1) * 0.5 + p(j + 2));
        }
    check_random_schedules(
        {X, C},
        [&](Gen& g) {
            Schedule s = create_schedule(C);
            if (g.chance(0.2)) {
                s.cache_read(X, "local", {P});
                g.log << "s.cache_read(X, \"local\", {prod});\n";
            }
            random_schedule(s, g);
            return s;
        },
        run_into(c, x),
        want);
}

TEST_CASE("random schedules: row reduction") {
    const int64_t R = 9, L = 100;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k = reduce_axis(0, L, "k");
    Tensor S = compute({R}, [&](Expr i) { return sum(X(i, k), {k}); }, "S");
    auto x = Buffer<float>::random({R, L}, -1, 1, 61);
    Buffer<float> out({R});
    auto want = ref_row_sum(x);
    check_random_schedules(
        {X, S},
        [&](Gen& g) {
            Schedule s = create_schedule(S);
            if (g.chance(0.3)) {
                s.cache_write(S, "local");
                g.log << "s.cache_write(S, \"local\");\n";
            }
            random_schedule(s, g);
            return s;
        },
        run_into(out, x),
        want);
}

// ---- Bugs the random schedules found, one regression test each ---------------------------

TEST_CASE("bug: a producer computed in an all-guarded split tail iteration got a negative allocation size") {
    // cons.i = (i.outer.outer * 9 + i.outer.inner) * 6 + i.inner, where i.outer has 7 parts:
    // the iterations i.outer.inner = 7, 8 are guarded out, and the region of prod there was
    // empty with a negative extent: "out of memory allocating buffer 'prod'".
    const int64_t n = 37;
    Tensor X = placeholder({n}, f32, "X");
    Tensor P = compute({n}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
    Tensor C = compute({n}, [&](Expr i) { return P(i) + 1.0f; }, "cons");
    Schedule s = create_schedule(C);
    auto [io, ii] = s[C].split_nparts(C.axis(0), 7);
    auto [ioo, ioi] = s[C].split(io, 9);
    s[P].compute_at(s[C], ioi);
    Kernel k = build(s, {X, C});
    check_prod_cons(k, n, 71);
}

TEST_CASE("bug: compute_at refused a consumer whose producer cache_read had rewritten") {
    // cons reads prod's original operation; after cache_read(X, {prod}) prod's stage computes a
    // new one that reads X.local. compute_at(X.local -> cons) said "cons does not read X.local".
    const int64_t n = 20;
    Tensor X = placeholder({n}, f32, "X");
    Tensor P = compute({n}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
    Tensor C = compute({n}, [&](Expr i) { return P(i) + 1.0f; }, "cons");
    Schedule s = create_schedule(C);
    Tensor XL = s.cache_read(X, "local", {P});
    s[P].compute_inline();
    REQUIRE_NOTHROW(s[XL].compute_at(s[C], C.axis(0)));
    Kernel k = build(s, {X, C});
    check_prod_cons(k, n, 72);
}

TEST_CASE("bug: compute_at of a cache_write stage refused after cache_read rewrote that stage") {
    // After cache_write(C) and cache_read(A, {C.local}), C still reads C.local's first
    // operation: compute_at(C.local -> C) said "C does not read C.local".
    const int64_t M = 9, N = 10, K = 11;
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    Tensor CL = s.cache_write(C, "local");
    s.cache_read(A, "local", {CL});
    REQUIRE_NOTHROW(s[CL].compute_at(s[C], C.axis(0)));
    Kernel kern = build(s, {A, B, C});
    auto a = Buffer<float>::random({M, K}, -1, 1, 73), b = Buffer<float>::random({K, N}, -1, 1, 74);
    Buffer<float> c({M, N});
    poison(c);
    kern(a, b, c);
    CHECK(max_rel_error(c, ref_matmul(a, b, M, N, K)) < 1e-5);
}

TEST_CASE("bug: loop partition dropped a split tail's guard while partitioning another split's loop") {
    // ry and rx are both split by 8 > their extent 3. Partitioning the loop of rx.inner replaced
    // likely(ry.inner < 3) by true as well (ir::structural_equal is up to renaming), so the
    // tail iterations ry.inner = 3..7 ran unguarded: wrong sums and reads out of bounds.
    const int64_t R = 4, KY = 3, KX = 3;
    Tensor X = placeholder({R, KY, KX}, f32, "X");
    IterVar ry = reduce_axis(0, KY, "ry"), rx = reduce_axis(0, KX, "rx");
    Tensor S = compute({R}, [&](Expr i) { return sum(X(i, ry, rx), {ry, rx}); }, "S");
    Schedule s = create_schedule(S);
    s[S].split(rx, 8);
    s[S].split(ry, 8);
    Kernel k = build(s, {X, S});
    auto x = Buffer<float>::random({R, KY, KX}, -1, 1, 75);
    Buffer<float> out({R});
    poison(out);
    k(x, out);
    std::vector<float> want(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; ++i) {
        double acc = 0;
        for (int64_t a = 0; a < KY; ++a)
            for (int64_t b = 0; b < KX; ++b) acc += x(i, a, b);
        want[size_t(i)] = float(acc);
    }
    CHECK(max_rel_error(out, want) < 1e-5);
}

TEST_CASE("bug: storage rewrite redirected every unrolled copy of a buffer when one copy was merged") {
    // softmax's row loop is unrolled; each copy allocates rowsum. The last copy's rowsum may
    // reuse rowmax's memory (rowmax is dead by then), but the rewrite redirected the buffer
    // variable everywhere, so earlier copies overwrote rowmax while it was still needed.
    const int64_t R = 13, L = 37;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k1 = reduce_axis(0, L, "k1"), k2 = reduce_axis(0, L, "k2");
    Tensor mx = compute({R}, [&](Expr i) { return te::max(X(i, k1), std::vector<IterVar>{k1}); }, "rowmax");
    Tensor e = compute({R, L}, [&](Expr i, Expr j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor den = compute({R}, [&](Expr i) { return sum(e(i, k2), {k2}); }, "rowsum");
    Tensor Y = compute({R, L}, [&](Expr i, Expr j) { return e(i, j) / den(i); }, "softmax");
    Schedule s = create_schedule(Y);
    auto [jo, ji] = s[Y].split(Y.axis(1), 2);
    s[Y].unroll(Y.axis(0));
    s[den].compute_at(s[Y], ji);
    auto [ejo, eji] = s[e].split(e.axis(1), 7);
    s[e].reorder({ejo, eji, e.axis(0)});
    s[e].compute_at(s[Y], jo);
    Kernel k = build(s, {X, Y});
    auto x = Buffer<float>::random({R, L}, -4, 4, 31);
    Buffer<float> y({R, L});
    poison(y);
    k(x, y);
    CHECK(max_rel_error(y, ref_softmax(x)) < 1e-5);
}
