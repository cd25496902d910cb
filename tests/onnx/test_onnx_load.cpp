// The ONNX importer: small models built with the protobuf classes, imported, built and run.
#include <doctest/doctest.h>

#include "onnx/onnx_model.hpp"

using namespace weft;
using onnx_test::Model;
namespace pb = onnx_test::pb;

TEST_CASE("onnx: a Relu model imports and runs") {
    Model m;
    m.input("x", {2, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    graph::Graph g = m.load();
    graph::Module mod = graph::build(g);
    Buffer<float> x({2, 3});
    for (int i = 0; i < 6; ++i) x.data()[i] = float(i) - 2.5f;
    mod.set_input("x", x);
    mod.run();
    Buffer<float> y(mod.get_output("y"));
    for (int i = 0; i < 6; ++i) CHECK(y.data()[i] == std::max(0.f, float(i) - 2.5f));
}
