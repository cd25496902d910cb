// docs/errors.md, made from the errors themselves: each entry below makes one mistake a user
// can make, catches the weft::Error it raises and prints its message, so the page shows
// exactly what weft says (and cannot drift from it: the suite runs `--check`).
//
//   error_catalog --write docs/errors.md    regenerate the page
//   error_catalog --check docs/errors.md    fail (and show the first difference) if stale
//
// An entry that raises no error, or another kind than it declares, fails both modes.
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../../onnx/onnx_model.hpp"
#include "weft/frontend/onnx/onnx.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

struct Entry {
    const char* section;
    const char* mistake;  // what the user did
    std::function<void()> make;
    bool internal = false;  // a bug in weft rather than the user's mistake
};

struct Elementwise {
    Tensor A = placeholder({4, 6}, f32, "A");
    Tensor B = placeholder({4, 6}, f32, "B");
    Tensor C = compute({4, 6}, [&](Expr i, Expr j) { return A(i, j) * B(i, j); }, "C");
    Kernel kernel() { return build(create_schedule(C), {A, B, C}); }
};

struct Matmul {
    Tensor A = placeholder({16, 16}, f32, "A"), B = placeholder({16, 16}, f32, "B");
    Tensor C = topi::matmul(A, B, "C");
    Kernel kernel() {
        Schedule s = create_schedule(C);
        topi::schedule_matmul(s, C, C);
        return build(s, {A, B, C});
    }
};

onnx_test::Model one_node(const std::string& op) {
    onnx_test::Model m;
    m.input("x", {1, 4});
    m.output("y");
    m.node(op, {"x"}, {"y"});
    return m;
}

std::vector<Entry> catalog() {
    using namespace onnx_test;
    return {
        // ---- tensor expressions ----------------------------------------------------------
        {"Tensor expressions", "a compute lambda with fewer indices than the shape has dimensions",
         [] {
             Tensor A = placeholder({4, 6}, f32, "A");
             compute({4, 6}, [&](Expr i) { return A(i, 0); }, "D");
         }},
        {"Tensor expressions", "a tensor indexed with the wrong number of indices",
         [] {
             Tensor A = placeholder({4, 6}, f32, "A");
             Expr e = A(1);
         }},
        {"Tensor expressions", "a read past the end of a tensor (constant shapes: at build)",
         [] {
             Tensor X = placeholder({16}, f32, "X");
             Tensor Y = compute({16}, [&](Expr i) { return X(i + 100); }, "Y");
             build(create_schedule(Y), {X, Y});
         }},
        {"Tensor expressions", "a read past the end of a tensor (symbolic shapes: at the call)",
         [] {
             Var n("n"), m("m");
             Tensor X = placeholder({m}, f32, "X");
             Tensor Y = compute({n}, [&](Expr i) { return X(i + 1); }, "Y");
             Kernel k = build(create_schedule(Y), {X, Y});
             Buffer<float> x({8}), y({8});
             k(x, y);
         }},
        {"Tensor expressions", "an expression deeper than te::kMaxExpressionDepth",
         [] {
             Tensor X = placeholder({8}, f32, "X");
             compute({8}, [&](Expr i) {
                 Expr e = X(i);
                 for (int k = 0; k < 5000; ++k) e = e + 1.0f;
                 return e;
             }, "deep");
         }},
        // ---- schedules ----------------------------------------------------------------
        {"Schedules", "splitting an axis that was split already",
         [] {
             Elementwise e;
             Schedule s = create_schedule(e.C);
             s[e.C].split(e.C.axis(1), 2);
             s[e.C].split(e.C.axis(1), 2);
         }},
        {"Schedules", "compute_at into a stage that does not read the tensor",
         [] {
             Tensor X = placeholder({8}, f32, "x");
             Tensor P = compute({8}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
             Tensor O = compute({8}, [&](Expr i) { return X(i) + 1.0f; }, "other");
             Tensor C = compute({8}, [&](Expr i) { return P(i) + 1.0f; }, "cons");
             Schedule s = create_schedule({C, O});
             s[P].compute_at(s[O], O.axis(0));
         }},
        {"Schedules", "a tuning config that sets a knob outside the template's candidates (one for another "
                      "workload or target)",
         [] {
             Tensor A = placeholder({64, 64}, f32, "A"), B = placeholder({64, 64}, f32, "B");
             topi::matmul(A, B, "matmul", Target::x86_avx512(), Config{}.set("gemm.nr", 40));
         }},
        {"Schedules", "a tuning record that is not valid JSON lines",
         [] { autotune::Record::from_json("{\"target\": \"llvm\", \"workload\": 3}"); }},
        // ---- building kernels ---------------------------------------------------------
        {"Building kernels", "a tensor listed twice in the arguments",
         [] {
             Elementwise e;
             build(create_schedule(e.C), {e.A, e.A, e.C});
         }},
        {"Building kernels", "an output left out of the arguments",
         [] {
             Elementwise e;
             build(create_schedule(e.C), {e.A, e.B});
         }},
        {"Building kernels", "a scalar the computation uses, left out of the arguments",
         [] {
             Var alpha("alpha", f32);
             Tensor A = placeholder({8}, f32, "A");
             Tensor Y = compute({8}, [&](Expr i) { return A(i) * alpha; }, "Y");
             build(create_schedule(Y), {A, Y});
         }},
        // ---- calling kernels ---------------------------------------------------------
        {"Calling kernels", "a buffer of the wrong shape",
         [] {
             Elementwise e;
             Buffer<float> a({4, 6}), b({4, 7}), c({4, 6});
             e.kernel()(a, b, c);
         }},
        {"Calling kernels", "a buffer of the wrong element type",
         [] {
             Elementwise e;
             Buffer<float> a({4, 6}), c({4, 6});
             Buffer<double> b({4, 6});
             e.kernel()(a, b, c);
         }},
        {"Calling kernels", "too few arguments",
         [] {
             Elementwise e;
             Buffer<float> a({4, 6}), c({4, 6});
             e.kernel()(a, c);
         }},
        {"Calling kernels", "an output buffer that is also an input the kernel reads elsewhere",
         [] {
             Matmul m;
             Buffer<float> a({16, 16}), b({16, 16});
             m.kernel()(a, b, a);
         }},
        {"Calling kernels", "an element-wise kernel given an output shifted over its input",
         [] {
             Tensor X = placeholder({8}, f32, "X");
             Tensor Y = compute({8}, [&](Expr i) { return X(i) + 1.0f; }, "Y");
             Kernel k = build(create_schedule(Y), {X, Y});
             Buffer<float> big({9});
             BufferRef in(big.data(), f32, {8}), out(static_cast<float*>(big.data()) + 1, f32, {8});
             k(in, out);
         }},
        {"Calling kernels", "a buffer element out of range",
         [] {
             Buffer<float> small({2});
             small(5) = 1;
         }},
        // ---- graphs ------------------------------------------------------------------
        {"Graphs", "operands whose shapes do not fit the operator",
         [] {
             graph::Graph g;
             graph::Value a = g.input("a", {2, 3}), b = g.input("b", {4, 3});
             g.add(a, b, "sum1");
         }},
        {"Graphs", "an operator nobody registered",
         [] {
             graph::Graph g;
             g.add_node("frobnicate", {g.input("x", {4})}, {}, "f1");
         }},
        {"Graphs", "a value of another graph",
         [] {
             graph::Graph a, b;
             graph::Value v = a.relu(a.input("x", {4}));
             b.input("x", {4});
             b.relu(v);
         }},
        {"Graphs", "two outputs of the same name",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {4});
             g.output(g.relu(x), "y");
             g.output(g.sigmoid(x), "y");
         }},
        {"Graphs", "a tensor past graph::Limits (here pads that make 2^42 elements)",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {1, 1, 4, 4});
             graph::Value w = g.constant("w", Buffer<float>({1, 1, 1, 1}));
             g.conv2d(x, w, {.pad = int64_t(1) << 20}, "wide");
         }},
        {"Graphs", "a cycle made by rewiring an edge",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {4});
             graph::Value a = g.relu(x, "a");
             graph::Value b = g.relu(a, "b");
             g.set_input(a.id, 0, b);
             g.check();
         }},
        {"Graphs", "a module input name that does not exist",
         [] {
             graph::Graph g;
             g.output(g.relu(g.input("x", {4})), "y");
             graph::Module m = graph::build(g);
             m.set_input("z", Buffer<float>({4}));
         }},
        {"Graphs", "a run whose data fails a run-time check (Graph::check_at_run)",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {1});
             g.output(g.relu(x), "y");
             g.check_at_run(g.add_node("less", {x, g.constant("zero", Buffer<float>({1}))}), "x must not be negative");
             graph::Module m = graph::build(g);
             Buffer<float> v({1});
             v(0) = -1.f;
             m.set_input("x", v);
             m.run();
         }},
        // ---- ONNX models -------------------------------------------------------------
        {"ONNX models", "an operator the importer does not support",
         [] { one_node("NonMaxSuppression").load(); }},
        {"ONNX models", "bytes that are not an ONNX model",
         [] { weft::onnx::load_from_memory(std::string("not a model")); }},
        {"ONNX models", "a node with more inputs than graph::Limits::max_node_inputs",
         [] {
             Model m;
             m.input("x", {1, 4});
             m.output("y");
             set_int(m.node("Concat", std::vector<std::string>(5000, "x"), {"y"}), "axis", 1);
             m.load();
         }},
        {"ONNX models", "a file larger than LoadOptions::max_file_bytes",
         [] {
             const std::string path = "/tmp/weft_error_catalog_model.onnx";
             std::ofstream(path) << one_node("Relu").bytes();
             weft::onnx::load(path, {.max_file_bytes = 8});
         }},
        // ---- compiled artifacts ----------------------------------------------------------
        {"Compiled artifacts (.weft)", "bytes that are not an artifact",
         [] { graph::load_module_from_memory(std::string("WEFTMODL but nothing more")); }},
        // ---- the runtime -------------------------------------------------------------
        {"The runtime", "a negative thread count", [] { set_num_threads(-1); }},
        {"The runtime", "a negative kernel cache budget", [] { KernelCache::global().set_memory_budget(-1); }},
        // ---- internal errors -----------------------------------------------------------
        {"Internal errors", "(none: a bug in weft) an operator whose computation refuses what its inference accepted",
         [] {
             graph::register_op({.name = "catalog_disagreeing_op", .pattern = graph::OpPattern::ElemWise,
                                 .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) { return in[0]; },
                                 .compute = [](const std::vector<Tensor>&, const graph::Attrs&) -> Tensor {
                                     WEFT_CHECK(false, "this computation refuses every input");
                                     return {};
                                 }});
             graph::Graph g;
             g.output(g.add_node("catalog_disagreeing_op", {g.input("x", {4})}, {}, "odd"), "y");
             graph::build(g);
         },
         true},
    };
}

// The message with this machine's paths cut to file names (the page is the same everywhere).
std::string portable(std::string message) {
    static const std::regex path(R"((/[^\s:()'"]+/)([^/\s:()'"]+\.(cpp|hpp|onnx)))");
    return std::regex_replace(message, path, "$2");
}

std::string render() {
    std::ostringstream md;
    md << "# Errors\n\n"
          "Everything a user can get wrong throws `weft::Error` (a `std::runtime_error`) whose message\n"
          "starts with `weft:`, names what was wrong (the kernel, argument, tensor, axis, node or file)\n"
          "and usually how to fix it; nothing a user passes crashes the process. A bug in weft throws\n"
          "`weft::InternalError` (also a `weft::Error`), whose message starts\n"
          "`weft internal error (a bug in weft, please report it)`: catch `weft::InternalError` first\n"
          "where the two must be told apart. The ONNX importer's `onnx::UnsupportedError` (also a\n"
          "`weft::Error`) marks content it does not support rather than a broken file.\n\n"
          "Each message below was made by `tests/error/catalog/error_catalog.cpp`, which makes the\n"
          "mistake and prints what weft says; the test suite checks that this page is current\n"
          "(`build/tests/error_catalog --write docs/errors.md` regenerates it). Paths are shortened\n"
          "to file names.\n";
    std::string section;
    for (const Entry& e : catalog()) {
        if (section != e.section) {
            section = e.section;
            md << "\n## " << section << "\n";
        }
        std::string message, kind = "none";
        try {
            e.make();
        } catch (const InternalError& x) {
            message = x.what();
            kind = "internal";
        } catch (const Error& x) {
            message = x.what();
            kind = "user";
        }
        if (kind != (e.internal ? "internal" : "user"))
            throw std::runtime_error(std::string("error_catalog: '") + e.mistake + "' raised " +
                                     (kind == "none" ? "no error" : "a " + kind + " error") + ": " + message);
        md << "\n**" << e.mistake << "**\n\n```\n" << portable(message) << "\n```\n";
    }
    return md.str();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::string(argv[1]) != "--write" && std::string(argv[1]) != "--check")) {
        std::cerr << "usage: error_catalog --write|--check docs/errors.md\n";
        return 2;
    }
    try {
        const std::string page = render();
        if (std::string(argv[1]) == "--write") {
            std::ofstream(argv[2]) << page;
            return 0;
        }
        std::ifstream in(argv[2]);
        std::stringstream have;
        have << in.rdbuf();
        if (have.str() == page) return 0;
        std::istringstream a(have.str()), b(page);
        std::string la, lb;
        for (int line = 1;; ++line) {
            bool ga = bool(std::getline(a, la)), gb = bool(std::getline(b, lb));
            if (!ga && !gb) break;
            if (la != lb || ga != gb) {
                std::cerr << argv[2] << " is stale at line " << line << ":\n  has:  " << (ga ? la : "(end)")
                          << "\n  made: " << (gb ? lb : "(end)")
                          << "\nregenerate it: build/tests/error_catalog --write " << argv[2] << "\n";
                break;
            }
        }
        return 1;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
