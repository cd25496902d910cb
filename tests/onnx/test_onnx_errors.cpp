// The ONNX importer's errors: each names the node, its op type and the opset (or the model
// part at fault); unsupported content is weft::onnx::UnsupportedError. And a fuzz test: a
// truncated or bit-flipped model is an error or a graph, never a crash.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;
using weft::onnx::UnsupportedError;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <class F>
bool throws_unsupported(F&& f) {
    try {
        f();
    } catch (const UnsupportedError&) {
        return true;
    } catch (const Error&) {
        return false;
    }
    return false;
}

Model conv_model() {
    Model m(13);
    m.input("x", {1, 2, 5, 5});
    m.initializer("w", {3, 2, 3, 3}, std::vector<float>(54, 0.25f));
    m.initializer("b", {3}, {1.f, 2.f, 3.f});
    set_ints(m.node("Conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
    m.node("Relu", {"c"}, {"r"});
    m.initializer_i64("shape", {2}, {1, -1});
    m.node("Reshape", {"r", "shape"}, {"f"});
    m.initializer("fc", {4, 75}, std::vector<float>(300, 0.01f));
    set_int(m.node("Gemm", {"f", "fc"}, {"y"}), "transB", 1);
    m.output("y");
    return m;
}

}  // namespace

TEST_CASE("onnx errors: an unsupported operator names the node, op type and opset") {
    Model m(13);
    m.input("x", {2, 3});
    m.node("Relu", {"x"}, {"r"});
    m.node("Unique", {"r"}, {"y"}, "my_unique");
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(has(e, "node 'my_unique' (Unique, opset 13)"));
    CHECK(has(e, "the operator Unique is not supported"));
    CHECK(throws_unsupported([&] { m.load(); }));
    weft::onnx::ModelInfo info;
    std::string path = "onnx_errors_unique.onnx";
    {
        std::ofstream f(path, std::ios::binary);
        f << m.bytes();
    }
    info = weft::onnx::inspect(path);
    CHECK(info.opset == 13);
    CHECK(info.op_types == std::vector<std::string>{"Relu", "Unique"});
    CHECK(info.unsupported_ops == std::vector<std::string>{"Unique"});
    CHECK(has(error_of([&] { weft::onnx::load(path); }), "(in 'onnx_errors_unique.onnx')"));
    std::filesystem::remove(path);
}

TEST_CASE("onnx errors: an opset outside 1..28, another domain, a misplaced operator") {
    Model m(29);
    m.input("x", {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(has(e, "node 'y' (Relu, opset 29)"));
    CHECK(has(e, "weft reads 1 to 28"));
    CHECK(throws_unsupported([&] { m.load(); }));

    Model d(13);
    d.input("x", {2});
    d.node("Relu", {"x"}, {"y"}).set_domain("com.microsoft");
    d.output("y");
    CHECK(has(error_of([&] { d.load(); }), "(com.microsoft:Relu, opset 13): operators of the domain 'com.microsoft'"));

    Model l(12);  // LayerNormalization arrives in opset 17
    l.input("x", {2, 4});
    l.initializer("g", {4}, {1, 1, 1, 1});
    l.node("LayerNormalization", {"x", "g"}, {"y"});
    l.output("y");
    CHECK(has(error_of([&] { l.load(); }), "does not exist before opset 17"));
}

TEST_CASE("onnx errors: an attribute or input the converter does not read is refused, not ignored") {
    // A later opset's new attribute (Split's num_outputs, Resize's antialias) or input (Pad's
    // axes) changes the result: a converter that never looks at it would compute something else.
    Model a(13);
    a.input("x", {2});
    set_int(a.node("Relu", {"x"}, {"y"}), "alpha", 2);
    a.output("y");
    std::string e = error_of([&] { a.load(); });
    CHECK(has(e, "(Relu, opset 13): the attribute 'alpha' is not supported"));
    CHECK(throws_unsupported([&] { a.load(); }));

    Model b(13);
    b.input("x", {2});
    b.input("z", {2});
    b.node("Relu", {"x", "z"}, {"y"});
    b.output("y");
    CHECK(has(error_of([&] { b.load(); }), "input 1 ('z') is not supported"));

    // A float16 node's unread `dtype` is refused too (the importer's own look at `dtype`, to
    // keep a result type the node names, does not count as the converter reading it).
    Model h(13);
    h.input("x", {2}, onnx_test::pb::TensorProto::FLOAT16);
    set_int(h.node("Relu", {"x"}, {"y"}), "dtype", onnx_test::pb::TensorProto::FLOAT);
    h.output("y", onnx_test::pb::TensorProto::FLOAT16);
    CHECK(has(error_of([&] { h.load(); }), "the attribute 'dtype' is not supported"));

    // Attributes without effect in inference are read on purpose: Dropout's seed and ratio.
    Model d(13);
    d.input("x", {2});
    set_int(d.node("Dropout", {"x"}, {"y"}), "seed", 7);
    d.output("y");
    CHECK_NOTHROW(d.load());
}

TEST_CASE("onnx errors: attention inputs of the wrong rank are errors, not reads past a shape") {
    // LinearAttention takes [B, T, H * D]; a 2-D query once indexed its missing third extent.
    Model l(27);
    for (const char* n : {"q", "k", "v"}) l.input(n, {2, 4});
    auto& n = l.node("LinearAttention", {"q", "k", "v"}, {"y"});
    set_int(n, "q_num_heads", 1);
    set_int(n, "kv_num_heads", 1);
    set_string(n, "update_rule", "linear");
    l.output("y");
    CHECK(has(error_of([&] { l.load(); }), "Q must be [batch, sequence, hidden], got [2, 4]"));
}

TEST_CASE("onnx errors: unsupported dtypes and attribute values") {
    Model h(13);
    h.input("x", {2}, onnx_test::pb::TensorProto::COMPLEX64);
    h.node("Relu", {"x"}, {"y"});
    h.output("y", onnx_test::pb::TensorProto::COMPLEX64);
    std::string e = error_of([&] { h.load(); });
    CHECK(has(e, "the graph input 'x' has element type complex64"));
    CHECK(throws_unsupported([&] { h.load(); }));

    Model c(13);
    c.input("x", {2});
    set_int(c.node("Cast", {"x"}, {"y"}), "to", onnx_test::pb::TensorProto::STRING);
    c.output("y");
    CHECK(has(error_of([&] { c.load(); }), "node 'y' (Cast, opset 13): the 'to' attribute has element type string"));

    Model p(13);
    p.input("x", {1, 2, 3});
    p.initializer_i64("pads", {6}, {0, 0, 1, 0, 0, 1});
    set_string(p.node("Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
    p.output("y");
    CHECK(has(error_of([&] { p.load(); }), "node 'y' (Pad, opset 13): Pad mode 'wrap'"));
    CHECK(throws_unsupported([&] { p.load(); }));

    Model a(13);  // an attribute of the wrong type
    a.input("x", {2, 3});
    set_float(a.node("Flatten", {"x"}, {"y"}), "axis", 1.0f);
    a.output("y");
    CHECK(has(error_of([&] { a.load(); }), "node 'y' (Flatten, opset 13): attribute 'axis' must be of type int, got float"));

    Model r(14);  // a recurrent activation weft does not have
    r.input("x", {2, 1, 3});
    r.initializer("w", {1, 4, 3}, std::vector<float>(12, 0.1f));
    r.initializer("r", {1, 4, 4}, std::vector<float>(16, 0.1f));
    auto& rnn = r.node("RNN", {"x", "w", "r"}, {"y"});
    set_int(rnn, "hidden_size", 4);
    auto& acts = attr(rnn, "activations", onnx_test::pb::AttributeProto::STRINGS);
    acts.add_strings("ThresholdedRelu");
    r.output("y");
    CHECK(has(error_of([&] { r.load(); }), "node 'y' (RNN, opset 14): the recurrent activation 'ThresholdedRelu'"));
    CHECK(throws_unsupported([&] { r.load(); }));
}

TEST_CASE("onnx errors: malformed models") {
    CHECK(has(error_of([] { weft::onnx::load_from_memory(std::string("\xff\xff\xff garbage")); }),
              "not a valid ONNX model"));
    CHECK(has(error_of([] { weft::onnx::load("/nonexistent/model.onnx"); }), "cannot open '/nonexistent/model.onnx'"));

    Model u(13);  // an input no node defines
    u.input("x", {2});
    u.node("Add", {"x", "nowhere"}, {"y"});
    u.output("y");
    CHECK(has(error_of([&] { u.load(); }), "node 'y' (Add, opset 13): the input 'nowhere' is not defined before this node"));

    Model s(13);  // an initializer whose data does not fit its shape
    s.input("x", {4});
    s.initializer("w", {4}, {1.f, 2.f, 3.f});
    s.node("Add", {"x", "w"}, {"y"});
    s.output("y");
    CHECK(has(error_of([&] { s.load(); }), "initializer 'w' has shape [4] (4 elements) but 3 values"));

    Model big(13);  // a shape beyond the limit allocates nothing
    big.input("x", {4});
    big.initializer("w", {1 << 20, 1 << 20}, {1.f});
    big.node("Add", {"x", "w"}, {"y"});
    big.output("y");
    CHECK(has(error_of([&] { big.load(); }), "more elements than the limit"));

    Model o(13);  // an output nobody computes; a second output the importer does not make
    o.input("x", {1, 1, 4, 4});
    o.node("Relu", {"x"}, {"y", "idx"});  // Relu has one output
    o.output("idx");
    CHECK(has(error_of([&] { o.load(); }), "the graph output 'idx' is an output the importer does not compute"));
    o.output("missing");
    o.g->mutable_output()->DeleteSubrange(0, 1);
    CHECK(has(error_of([&] { o.load(); }), "the graph output 'missing' is not computed by any node"));

    Model shape_err(13);  // a graph-layer error inside a converter names the ONNX node too
    shape_err.input("a", {2, 3});
    shape_err.input("b", {4, 5});
    shape_err.node("MatMul", {"a", "b"}, {"y"});
    shape_err.output("y");
    CHECK(has(error_of([&] { shape_err.load(); }), "node 'y' (MatMul, opset 13): MatMul: A [2, 3] and B [4, 5] do not fit"));
}

TEST_CASE("onnx errors: a file over LoadOptions::max_file_bytes or a device is refused before it is read") {
    const std::string path = "onnx_errors_limit_" + std::to_string(::getpid()) + ".onnx";
    {
        std::ofstream f(path, std::ios::binary);
        f << conv_model().bytes();
    }
    weft::onnx::LoadOptions small{.max_file_bytes = 64};
    CHECK(has(error_of([&] { weft::onnx::load(path, small); }),
              "'" + path + "' is larger than the limit of 64 bytes (LoadOptions::max_file_bytes)"));
    CHECK(has(error_of([&] { weft::onnx::inspect(path, small); }), "larger than the limit of 64 bytes"));
    CHECK(weft::onnx::load(path).find("y"));  // the default limit reads it
    std::filesystem::remove(path);
    // /dev/zero would be read until memory runs out.
    CHECK(has(error_of([] { weft::onnx::load("/dev/zero"); }), "cannot read '/dev/zero': it is a character device"));
}

TEST_CASE("onnx errors: Reshape refuses a float shape tensor, naming the node") {
    // ONNX's shape input is int64: a float one would be truncated to integers (2.7 -> 2),
    // reshaping to something the model never meant.
    Model m(13);
    m.input("x", {2, 3});
    m.initializer("shape", {2}, {3.f, 2.f});
    m.node("Reshape", {"x", "shape"}, {"y"}, "my_reshape");
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(has(e, "node 'my_reshape' (Reshape, opset 13)"));
    CHECK(has(e, "float32"));
}

// ---- fuzz -----------------------------------------------------------------------------------

namespace {

// Loads every variant; counts successes. Any exception other than weft::Error fails.
int fuzz(const std::string& bytes, int variants, uint64_t seed) {
    std::mt19937_64 rng(seed);
    weft::onnx::LoadOptions small{.limits = {.max_tensor_elements = int64_t(1) << 22}};
    int ok = 0;
    for (int v = 0; v < variants; ++v) {
        std::string b = bytes;
        if (v % 3 == 0) {
            b.resize(size_t(rng() % b.size()));  // truncated
        } else {
            int flips = 1 + int(rng() % 8);  // bit flips
            for (int k = 0; k < flips; ++k) b[size_t(rng() % b.size())] ^= char(1u << (rng() % 8));
        }
        try {
            graph::Graph g = weft::onnx::load_from_memory(b, small);
            g.check();
            ++ok;
        } catch (const Error&) {
        }
    }
    return ok;
}

}  // namespace

TEST_CASE("onnx fuzz: truncated and bit-flipped copies of a small CNN load or throw weft::Error") {
    std::string bytes = conv_model().bytes();
    REQUIRE_NOTHROW(weft::onnx::load_from_memory(bytes));
    int ok = fuzz(bytes, 400, 20240601);
    MESSAGE(ok << " of 400 variants loaded");
    CHECK(ok < 400);
}

TEST_CASE("onnx fuzz: truncated and bit-flipped copies of ONNX's test models load or throw weft::Error") {
    const std::string root = "/usr/share/libonnx-testdata/data/";
    const char* models[] = {"pytorch-converted/test_Conv2d_groups/model.onnx",
                            "pytorch-converted/test_BatchNorm2d_eval/model.onnx",
                            "pytorch-operator/test_operator_flatten/model.onnx",
                            "node/test_gemm_all_attributes/model.onnx",
                            "node/test_slice_neg_steps/model.onnx",
                            "node/test_layer_normalization_3d_axis1_epsilon_expanded/model.onnx"};
    int files = 0;
    for (const std::string m : models) {
        std::ifstream f(root + m, std::ios::binary);
        if (!f) continue;
        std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        ++files;
        CAPTURE(m);
        int ok = fuzz(bytes, 100, 7 + uint64_t(files));
        MESSAGE(m << ": " << ok << " of 100 variants loaded");
    }
    if (!files) MESSAGE("skipped: no ONNX test data in " << root << " (libonnx-testdata)");
}
