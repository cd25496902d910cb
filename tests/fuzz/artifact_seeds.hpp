// The small compiled modules whose artifacts seed fuzz_artifact (write_artifact_seeds saves
// them; an artifact holds object code for this machine's CPU, so they are made where the
// fuzzer runs, not committed). Between them they use every part of the format: several
// fused kernels, constants, two inputs and outputs, a kernel that shares an earlier
// kernel's object code, an in-place kernel and a memory plan that reuses bytes.
#pragma once
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace weft_fuzz {

struct SeedModule {
    std::string name;  // the seed file's name, without .weft
    weft::graph::Module module;
};

inline std::vector<SeedModule> artifact_seed_modules() {
    using namespace weft;
    std::vector<SeedModule> seeds;
    {  // conv + bias + relu, pool, dense, softmax; two inputs and two outputs.
        graph::Graph g;
        graph::Value x = g.input("x", {1, 2, 6, 6});
        graph::Value s = g.input("scale", {1, 4});
        graph::Value w = g.constant("w", Buffer<float>::random({4, 2, 3, 3}, -0.3f, 0.3f, 1));
        graph::Value b = g.constant("b", Buffer<float>::random({4}, -0.3f, 0.3f, 2));
        graph::Value c = g.relu(g.conv2d(x, w, b, {.pad = 1}), "conv");
        graph::Value p = g.max_pool2d(c, {.kernel = 2, .stride = 2}, "pool");
        graph::Value f = g.flatten(g.global_avg_pool2d(p));
        graph::Value d = g.dense(f, g.constant("wd", Buffer<float>::random({4, 4}, -0.3f, 0.3f, 3)), "fc");
        g.output(g.softmax(g.mul(d, s)), "probs");
        g.output(p, "features");
        seeds.push_back({"small_cnn", graph::build(g)});
    }
    {  // relu(x) twice without common-subexpression elimination: the second relu's kernel
       // refers to the first's object code; exp(x) between them has its own.
        graph::Graph g;
        graph::Value x = g.input("x", {3, 5});
        g.output(g.relu(x, "a"), "a");
        g.output(g.exp(x, "e"), "e");
        g.output(g.relu(x, "b"), "b");
        graph::BuildOptions o;
        o.eliminate_common_subexpressions = false;
        seeds.push_back({"shared_object", graph::build(g, Target::host(), o)});
    }
    {  // A chain of unfused element-wise kernels: each may overwrite its input in place, and
       // the plan reuses the bytes of the dead ones.
        graph::Graph g;
        graph::Value x = g.input("x", {2, 8});
        graph::Value v = g.sigmoid(g.add(x, g.constant("one", Buffer<float>::random({2, 8}, 1.f, 1.f, 4))), "s");
        v = g.tanh(g.relu(v, "r"), "t");
        g.output(g.concat({v, x}, 0, "cat"), "y");
        graph::BuildOptions o;
        o.fuse = false;
        seeds.push_back({"unfused_chain", graph::build(g, Target::host(), o)});
    }
    {  // A symbolic batch: a convolution run per image, a dense over the batch that assumes
       // 12 rows (padded below): the format's symbolic section and the kernels' symbols.
        graph::Graph g;
        graph::Value x = g.input("x", {16, 2, 4, 4});
        g.set_symbolic(x, 0, {"batch", 16});
        graph::Value c = g.relu(g.conv2d(x, g.constant("w", Buffer<float>::random({3, 2, 3, 3}, -0.3f, 0.3f, 5)),
                                         {.pad = 1}));
        g.output(g.dense(g.flatten(c, 1), g.constant("wd", Buffer<float>::random({2, 48}, -0.3f, 0.3f, 6))), "y");
        seeds.push_back({"symbolic_batch", graph::build(g)});
    }
    {  // A loop (Graph::loop): its kernel holds the body's module, an artifact inside the artifact.
        auto filled = [](std::vector<int64_t> shape, float v) {
            Buffer<float> b(std::move(shape));
            for (float& x : b) x = v;
            return b;
        };
        graph::Graph body;
        graph::Value h = body.input("carried0", {4});
        graph::Value next = body.add(body.mul(h, body.constant("half", filled({1}, 0.5f))), body.input("captured0", {4}));
        body.output(body.add_node("greater", {body.reshape(body.max(next), {1}), body.constant("eps", filled({1}, 0.1f))}),
                    "condition");
        body.output(next, "carried0");
        graph::Graph g;
        graph::Value x = g.input("x", {4});
        graph::Value trips = g.input("trips", {1}, DataType::int_(64));
        Buffer<bool> yes({1});
        yes.data()[0] = true;
        g.output(g.loop(body, trips, g.constant("go", yes), {x}, {g.constant("step", filled({4}, 0.05f))},
                        {.max_iterations = 64}),
                 "y");
        seeds.push_back({"loop", graph::build(g)});
    }
    return seeds;
}

}  // namespace weft_fuzz
