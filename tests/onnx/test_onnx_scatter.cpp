// TensorScatter (a KV cache's update) against a naive reference: linear writes that run past
// the cache's end, circular ones that wrap, per batch entry, and without write indices.
#include <doctest/doctest.h>

#include <cstring>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

TEST_CASE("onnx: TensorScatter writes each batch entry's update from its index, linear or circular") {
    const int64_t B = 3, Hd = 2, S = 7, U = 3, D = 4;
    Buffer<float> past = Buffer<float>::random({B, Hd, S, D}, -1.f, 1.f, 41);
    Buffer<float> upd = Buffer<float>::random({B, Hd, U, D}, -1.f, 1.f, 42);
    Buffer<int64_t> idx({B});
    idx(0) = 0, idx(1) = 5, idx(2) = 2;  // entry 1 reaches past the end (linear: not written there)
    for (bool circular : {false, true})
        for (bool with_indices : {true, false}) {
            CAPTURE(circular);
            CAPTURE(with_indices);
            Model m(24);
            m.input("past", {B, Hd, S, D});
            m.input("update", {B, Hd, U, D});
            std::vector<std::string> ins = {"past", "update"};
            if (with_indices) {
                m.input("idx", {B}, pb::TensorProto::INT64);
                ins.push_back("idx");
            }
            auto& n = m.node("TensorScatter", ins, {"present"});
            set_string(n, "mode", circular ? "circular" : "linear");
            m.output("present");
            graph::Module mod = graph::build(m.load());
            std::vector<BufferRef> inputs{past, upd};
            if (with_indices) inputs.push_back(idx);
            run_on(mod, inputs);
            Buffer<float> want = past.copy();
            for (int64_t b = 0; b < B; ++b)
                for (int64_t h = 0; h < Hd; ++h)
                    for (int64_t s = 0; s < U; ++s) {
                        int64_t at = (with_indices ? idx(b) : 0) + s;
                        if (circular) at %= S;
                        if (at >= S) continue;
                        for (int64_t d = 0; d < D; ++d) want(b, h, at, d) = upd(b, h, s, d);
                    }
            const BufferRef& got = mod.get_output(0);
            REQUIRE(got.shape() == want.shape());
            CHECK(std::memcmp(got.data(), want.data(), size_t(want.size_bytes())) == 0);
        }
}
