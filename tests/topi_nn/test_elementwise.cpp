// Activations and math functions with schedule_injective against double references, and
// what the injective schedule makes of a fused chain.
#include "nn_test_util.hpp"

using namespace nn_test;

namespace {

struct UnaryOp {
    const char* name;
    std::function<Tensor(const Tensor&)> make;
    std::function<double(double)> ref;
    float lo, hi;
};

const std::vector<UnaryOp>& unary_ops() {
    static const std::vector<UnaryOp> ops{
        {"relu", [](const Tensor& x) { return topi::relu(x); }, [](double v) { return std::max(v, 0.0); }, -2, 2},
        {"leaky_relu", [](const Tensor& x) { return topi::leaky_relu(x, 0.2); },
         [](double v) { return v > 0 ? v : 0.2 * v; }, -2, 2},
        {"sigmoid", [](const Tensor& x) { return topi::sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); },
         -8, 8},
        {"tanh", [](const Tensor& x) { return topi::tanh(x); }, [](double v) { return std::tanh(v); }, -5, 5},
        {"gelu", [](const Tensor& x) { return topi::gelu(x); },
         [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, -5, 5},
        {"clip", [](const Tensor& x) { return topi::clip(x, -0.5, 0.75); },
         [](double v) { return std::min(std::max(v, -0.5), 0.75); }, -2, 2},
        {"exp", [](const Tensor& x) { return topi::exp(x); }, [](double v) { return std::exp(v); }, -10, 10},
        {"log", [](const Tensor& x) { return topi::log(x); }, [](double v) { return std::log(v); }, 0.01f, 100},
        {"sqrt", [](const Tensor& x) { return topi::sqrt(x); }, [](double v) { return std::sqrt(v); }, 0.01f, 100},
        {"hard_swish", [](const Tensor& x) { return topi::hard_swish(x); },
         [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; }, -5, 5},
    };
    return ops;
}

}  // namespace

TEST_CASE("topi activations on random shapes") {
    std::mt19937 rng(3);
    unsigned seed = 1;
    for (auto& op : unary_ops()) {
        // A random shape, and one large enough for the parallel chunks with a tail.
        for (Shape shape : {random_shape(rng, 1, 4), Shape{3, 40009}}) {
            Tensor X = placeholder(exprs(shape), f32, "X");
            Tensor Y = op.make(X);
            auto x = random_buffer(shape, seed++, op.lo, op.hi);
            auto y = run({X}, Y, [&](Schedule& s) { topi::schedule_injective(s, Y); }, {x}, shape);
            std::vector<double> want(size_t(x.size()));
            for (size_t i = 0; i < want.size(); ++i) want[i] = op.ref(x.data()[i]);
            // libmvec's vector exp/log/tanh/erf are within a few ulp.
            check_close(y, want, std::string(op.name) + " " + str(shape), 1e-5, 2e-6);
        }
    }
}

TEST_CASE("topi schedule_injective fuses a chain into one vectorized parallel loop") {
    const int64_t n = 1 << 16;
    Tensor X = placeholder({n}, f32, "x"), C = placeholder({n}, f32, "c");
    Tensor Y = topi::add(topi::relu(topi::add(topi::mul(X, 2.0f), 0.5f)), C);
    Schedule s = create_schedule(Y);
    topi::schedule_injective(s, Y);
    std::string body = lowered(s, {X, C, Y});
    CHECK(body.find("allocate") == std::string::npos);  // every intermediate inlined
    CHECK(body.find("parallel for") != std::string::npos);
    CHECK(body.find("ramp(") != std::string::npos);
    auto x = random_buffer({n}, 5), c = random_buffer({n}, 6);
    auto y = run({X, C}, Y, [&](Schedule& s2) { topi::schedule_injective(s2, Y); }, {x, c}, {n});
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[size_t(i)] = std::max(2.0 * x.data()[i] + 0.5, 0.0) + c.data()[i];
    check_close(y, want, "fused chain");
}

TEST_CASE("topi schedule_injective keeps a broadcast row axis as the vector axis") {
    Tensor X = placeholder({64, 48}, f32, "x"), B = placeholder({48}, f32, "bias");
    Tensor Y = topi::relu(topi::add(X, B));
    Schedule s = create_schedule(Y);
    topi::schedule_injective(s, Y);
    std::string body = lowered(s, {X, B, Y});
    // The bias is read as whole contiguous vectors, not gathered per lane.
    CHECK(body.find("bias[ramp(") != std::string::npos);
    auto x = random_buffer({64, 48}, 8), b = random_buffer({48}, 9);
    auto y = run({X, B}, Y, [&](Schedule& s2) { topi::schedule_injective(s2, Y); }, {x, b}, {64, 48});
    std::vector<double> want;
    for (int64_t i = 0; i < 64; ++i)
        for (int64_t j = 0; j < 48; ++j) want.push_back(std::max(double(x(i, j)) + b(j), 0.0));
    check_close(y, want, "bias + relu");
}

TEST_CASE("topi schedule_injective stores outputs of 16 MiB and more non-temporally") {
    // 4099 x 1031 floats = 16.9 MB, just over the threshold; an odd row length, so rows start
    // at every alignment (non-temporal stores where aligned, plain ones elsewhere).
    const Shape big{4099, 1031}, small{512, 1031};
    for (const Shape& shape : {big, small}) {
        Tensor X = placeholder(exprs(shape), f32, "x"), C = placeholder({shape[1]}, f32, "c");
        Tensor Y = topi::add(topi::relu(topi::mul(X, 1.5f)), C);
        Schedule s = create_schedule(Y);
        topi::schedule_injective(s, Y);
        bool streams = stage_text(s, Y.name()).find("store_nontemporal") != std::string::npos;
        CHECK(streams == (shape[0] == big[0]));
        auto x = random_buffer(shape, 11), c = random_buffer({shape[1]}, 12);
        auto y = run({X, C}, Y, [&](Schedule& s2) { topi::schedule_injective(s2, Y); }, {x, c}, shape);
        std::vector<double> want(size_t(x.size()));
        for (size_t i = 0; i < want.size(); ++i)
            want[i] = std::max(1.5 * x.data()[i], 0.0) + c.data()[i % size_t(shape[1])];
        check_close(y, want, "relu(1.5 x) + c " + str(shape));
    }
}
