// Whole networks built for Target::cuda() by the graph layer. On every machine: each network
// compiles (every fused group ONE kernel, CUDA C compiled by NVRTC for sm_90, no device
// touched: BuildOptions::allocate = false) with the CPU module's fused groups and memory
// plan. With a GPU the same networks run and match the CPU module (1e-4 relative); without
// one those test cases report "skipped: no CUDA device". tests/cuda_graph/mock runs a network end
// to end here, through the mock driver and the CPU emulator of the generated CUDA C.
#include "cuda_graph_util.hpp"

using namespace weft;
using namespace cuda_graph_test;

namespace {

// Builds `g` for the CPU and (compile-only) for CUDA and checks what can be checked without
// a GPU. (Its own test cases: a test that prints "skipped: " counts as skipped whatever it
// checked, so the GPU runs are separate.)
void check_compiles(const graph::Graph& g) {
    graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda(false));
    graph::Module gpu_plan = graph::build(g, Target::cuda("sm_90"), compile_only());
    CHECK(gpu_plan.target().is_cuda());
    CHECK(gpu_plan.device() == Device::cuda(0));
    check_every_kernel_is_ptx(gpu_plan);
    check_same_groups(cpu, gpu_plan);
}

// With a GPU: builds `g` for the CPU and for the GPU, runs both on the same random inputs
// (given to the GPU module from the host and from the device) and compares every output.
void run_on_gpu(const graph::Graph& g, uint64_t seed) {
    if (!have_gpu()) return report_no_gpu();
    graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda());
    graph::Module gpu = graph::build(g, Target::cuda(cuda::properties().arch()));  // on cuda(0), its own arch
    check_same_groups(cpu, gpu);
    for (int i = 0; i < cpu.num_inputs(); ++i) {
        Buffer<float> x = Buffer<float>::random(cpu.input(i).shape(), -1, 1, seed + uint64_t(i));
        cpu.set_input(i, x);
        if (i % 2 == 0) gpu.set_input(i, x);  // from the host
        else gpu.set_input(i, x.copy_to(Device::cuda(0)));  // from the device
    }
    cpu.run();
    gpu.run();
    for (int o = 0; o < cpu.num_outputs(); ++o) {
        CHECK(gpu.get_output(o).device() == Device::cuda(0));
        compare(cpu.get_output(o), gpu.get_output_host(o));
    }
}

}  // namespace

TEST_CASE("cuda_graph: ResNet-18 compiles for CUDA one kernel per fused group") {
    graph::Graph g = graph::testing::resnet18(1, 32, 10);
    graph::Module plan = graph::build(g, Target::cuda(), compile_only());
    // Batch norms fold into the convolutions: one kernel per convolution (bias, residual and
    // relu in its epilogue), the max pool, the global pool and the classifier.
    CHECK(count_ops(plan.graph(), "conv2d") == 20);
    CHECK(count_kernels_named(plan, "conv2d") == 20);
    CHECK(count_kernels_named(plan, "conv2d_bias_add_add_relu") == 8);  // each basic block's residual + relu
    CHECK(count_kernels_named(plan, "max_pool2d") == 1);
    CHECK(int(plan.kernels().size()) < count_ops(g, "conv2d") + count_ops(g, "batch_norm") + count_ops(g, "relu"));
    check_compiles(g);
}

TEST_CASE("cuda_graph: ResNet-18 runs on the GPU like the CPU module") {
    run_on_gpu(graph::testing::resnet18(1, 32, 10), 11);
}

TEST_CASE("cuda_graph: MobileNetV2 compiles for CUDA with its depthwise kernels") {
    graph::Graph g = graph::testing::mobilenet_v2(1, 32, 10);
    graph::Module plan = graph::build(g, Target::cuda(), compile_only());
    int depthwise = 0;
    for (const graph::Node& n : plan.graph().nodes())
        depthwise += n.is_op() && n.op == "conv2d" && n.attrs.get_int("groups", 1) > 1;
    CHECK(depthwise == 17);
    CHECK(count_kernels_named(plan, "conv2d") == count_ops(plan.graph(), "conv2d"));
    check_compiles(g);
}

TEST_CASE("cuda_graph: MobileNetV2 runs on the GPU like the CPU module") {
    run_on_gpu(graph::testing::mobilenet_v2(1, 32, 10), 21);
}

TEST_CASE("cuda_graph: a transformer block compiles for CUDA") {
    graph::Graph g = transformer_block();
    graph::Module plan = graph::build(g, Target::cuda(), compile_only());
    CHECK(count_kernels_named(plan, "softmax") == 1);
    CHECK(count_kernels_named(plan, "layer_norm") == 2);
    CHECK(count_kernels_named(plan, "batch_matmul") == 2);
    // The GPU kernels' sources: the MLP's GELU is in the first dense's epilogue, and the
    // layer norms split their statistics over a block's threads in shared memory.
    for (size_t k = 0; k < plan.kernels().size(); ++k) {
        const DeviceCode& dc = *plan.compiled_kernels()[k].module()->device_code();
        if (plan.kernels()[k].name.find("layer_norm") != std::string::npos)
            CHECK(dc.source.find("__shared__") != std::string::npos);
        if (plan.kernels()[k].name.find("gelu") != std::string::npos) CHECK(dc.source.find("erf") != std::string::npos);
    }
    check_compiles(g);
}

TEST_CASE("cuda_graph: a transformer block runs on the GPU like the CPU module") { run_on_gpu(transformer_block(), 31); }

namespace {

// dense + relu, dense + sigmoid, a row sum: each pattern of a small MLP.
graph::Graph mlp() {
    graph::Graph g;
    graph::testing::Weights w(g, 41);
    graph::Value x = g.input("x", {8, 32});
    graph::Value h = g.relu(g.dense(x, w.dense_weight("w1", 64, 32), w.uniform("b1", {64}, -0.1f, 0.1f)));
    graph::Value y = g.sigmoid(g.dense(h, w.dense_weight("w2", 16, 64), w.uniform("b2", {16}, -0.1f, 0.1f)));
    g.output(g.sum(y, {1}), "s");
    return g;
}

}  // namespace

TEST_CASE("cuda_graph: an MLP compiles for CUDA fused and unfused") {
    graph::BuildOptions unfused = compile_only();
    unfused.fuse = false;
    graph::Module plan = graph::build(mlp(), Target::cuda(), unfused);
    check_every_kernel_is_ptx(plan);
    CHECK(plan.kernels().size() == size_t(count_ops(plan.graph(), "matmul") + count_ops(plan.graph(), "bias_add") +
                                          count_ops(plan.graph(), "relu") + count_ops(plan.graph(), "sigmoid") +
                                          count_ops(plan.graph(), "sum")));
    check_compiles(mlp());
}

TEST_CASE("cuda_graph: an MLP runs unfused on the GPU like the CPU module") {
    if (!have_gpu()) return report_no_gpu();
    graph::Module cpu = graph::build(mlp(), Target::host(), cpu_like_cuda());
    graph::BuildOptions o;
    o.fuse = false;
    graph::Module gpu = graph::build(mlp(), Target::cuda(cuda::properties().arch()), o);
    Buffer<float> x = Buffer<float>::random({8, 32}, -1, 1, 43);
    cpu.set_input(0, x);
    gpu.set_input(0, x);
    cpu.run();
    gpu.run();
    compare(cpu.get_output(0), gpu.get_output_host(0));
}

TEST_CASE("cuda_graph: a module built without storage reports its plan and refuses to run") {
    graph::Graph g = transformer_block(8, 32, 64);
    graph::Module plan = graph::build(g, Target::cuda(), compile_only());
    CHECK(plan.memory_bytes() > 0);
    CHECK(plan.memory_bytes() <= plan.memory_naive_bytes());
    CHECK(!plan.to_dot().empty());
    CHECK_THROWS_WITH_AS(plan.run(), doctest::Contains("BuildOptions::allocate"), Error);
    CHECK_THROWS_WITH_AS(plan.get_output(0), doctest::Contains("built without storage"), Error);
    CHECK_THROWS_WITH_AS(plan.input("x"), doctest::Contains("built without storage"), Error);
}

// graph::tune for CUDA measures in child processes, which cannot use CUDA once their parent
// has: after NVRTC has compiled a kernel here (it initializes the driver), tune refuses with
// a message that says why instead of recording every candidate as "cuInit failed".
TEST_CASE("cuda_graph: graph::tune for CUDA refuses a process that has compiled a CUDA kernel") {
    graph::Graph g;
    g.output(g.relu(g.matmul(g.input("a", {32, 48}), g.input("b", {48, 64}))), "c");
    graph::BuildOptions no_device;
    no_device.allocate = false;  // NVRTC only: no device needed
    graph::Module m = graph::build(g, Target::cuda(), no_device);
    CHECK(!cuda::fork_safe());
    CHECK_THROWS_WITH_AS(graph::tune(g, Target::cuda(), {.trials = 2}),
                         doctest::Contains("NVRTC initializes the driver"), Error);
}
