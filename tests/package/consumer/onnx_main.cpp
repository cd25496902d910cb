// A user's program that imports an ONNX model, built against weft::onnx by the package
// tests. The model (y = Relu(x), x float32[2, 3], opset 13) is its serialized bytes, made by
// onnx.helper, so the program needs no file.
#include <weft/frontend/onnx/onnx.hpp>
#include <weft/weft.hpp>

#include <cstdio>
#include <string>

namespace {
const unsigned char kReluModel[] = {
    8,  8,  18, 13, 119, 101, 102, 116, 45, 99, 111, 110, 115, 117, 109, 101, 114, 58, 62, 10, 12, 10,
    1,  120, 18, 1, 121, 34, 4, 82, 101, 108, 117, 18, 4, 114, 101, 108, 117, 90, 19, 10, 1, 120,
    18, 14, 10, 12, 8,  1,  18, 8,  10, 2,  8,  2,  10, 2,  8,  3,  98, 19, 10, 1,  121, 18, 14, 10,
    12, 8,  1,  18, 8,  10, 2,  8,  2,  10, 2,  8,  3,  66, 4,  10, 0,  16, 13};
}  // namespace

int main() {
    using namespace weft;
    graph::Graph g = onnx::load_from_memory(std::string(reinterpret_cast<const char*>(kReluModel), sizeof kReluModel));
    graph::Module m = graph::build(g);
    auto x = Buffer<float>::random({2, 3}, -1, 1, 7);
    m.set_input("x", x);
    m.run();
    const float* y = static_cast<const float*>(m.get_output("y").data());
    for (int64_t i = 0; i < 6; ++i) {
        const float want = x.data()[i] > 0 ? x.data()[i] : 0.f;
        if (y[i] != want) {
            std::printf("weft onnx consumer: element %lld is %g, expected %g\n", (long long)i, y[i], want);
            return 1;
        }
    }
    std::printf("weft onnx consumer: ok\n");
    return 0;
}
