// User errors (weft::Error) and internal errors (weft::InternalError, a bug in weft) are
// told apart by type, and context added on the way up keeps the kind.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

namespace {

// Which kind a callable's failure is: "user", "internal" or "none".
template <class F>
std::string failure_kind(F&& f) {
    try {
        f();
    } catch (const InternalError&) {
        return "internal";
    } catch (const Error&) {
        return "user";
    }
    return "none";
}

}  // namespace

TEST_CASE("a user's mistake is a user error and a failed invariant an internal one") {
    graph::Graph g;
    graph::Value a = g.input("a", {2, 3}), b = g.input("b", {4, 3});
    CHECK(failure_kind([&] { g.add(a, b); }) == "user");
    CHECK(failure_kind([] { WEFT_ICHECK(1 + 1 == 3, "arithmetic"); }) == "internal");
    CHECK_THROWS_WITH_AS(WEFT_ICHECK(false, "x"), Contains("weft internal error"), InternalError);
}

TEST_CASE("context added on rethrow keeps the kind and the message") {
    auto add_context = [](auto f) {
        try {
            f();
        } catch (const Error& e) {
            detail::rethrow_with_context(e, "node 'n1' (relu)");
        }
    };
    auto user = [&] { add_context([] { WEFT_CHECK(false, "the shape is wrong"); }); };
    auto internal = [&] { add_context([] { WEFT_ICHECK(false, "an invariant"); }); };
    CHECK(failure_kind(user) == "user");
    CHECK(failure_kind(internal) == "internal");
    CHECK_THROWS_WITH_AS(user(), "weft: node 'n1' (relu): the shape is wrong", Error);
    CHECK_THROWS_WITH_AS(internal(), Contains("an invariant"), InternalError);
    CHECK_THROWS_WITH_AS(internal(), Contains("(while node 'n1' (relu))"), InternalError);
}

TEST_CASE("an operator whose computation refuses what its inference accepted is an internal error") {
    // Shape inference says yes to everything; the computation then refuses: inference and
    // computation disagree, which is a bug in the operator, not in the user's graph.
    graph::register_op({.name = "test_disagreeing_op", .pattern = graph::OpPattern::ElemWise,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) { return in[0]; },
                        .compute = [](const std::vector<Tensor>&, const graph::Attrs&) -> Tensor {
                            WEFT_CHECK(false, "this computation refuses every input");
                            return {};
                        }});
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    g.output(g.add_node("test_disagreeing_op", {x}, {}, "odd"), "y");
    CHECK(failure_kind([&] { graph::build(g); }) == "internal");
    CHECK_THROWS_WITH_AS(graph::build(g), Contains("node 'odd' (test_disagreeing_op)"), InternalError);
    CHECK_THROWS_WITH_AS(graph::build(g), Contains("this computation refuses every input"), InternalError);
}

TEST_CASE("layers that add context keep an error's own kind, a kind of a higher layer included") {
    // A kind defined above ir/ (as onnx::UnsupportedError is) survives rethrow_with_context.
    struct Special : Error {
        using Error::Error;
        [[noreturn]] void rethrow_with(const std::string& message) const override { throw Special(message); }
    };
    auto rethrown = [] {
        try {
            throw Special("weft: something special");
        } catch (const Error& e) {
            detail::rethrow_with_context(e, "layer");
        }
    };
    CHECK_THROWS_WITH_AS(rethrown(), "weft: layer: something special", Special);
}
