// Whole networks built for Target::cuda() run end to end without a GPU: the CUDA runtime
// talks to the mock driver (tests/cuda_mock, loaded through WEFT_LIBCUDA), whose memory is
// host memory, and the mock's launch hook runs each generated kernel in tests/cuda's CPU
// emulator of CUDA C on that memory. So everything but the GPU itself is real: the module's
// device arena, the constants uploaded once, set_input from the host and from the device,
// every kernel launched on the module's stream with the parameters the runtime packs, the
// outputs copied back — and the numbers must match the CPU module's.
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "../cuda_graph_util.hpp"
#include "cuda/cuda_emulator.hpp"
#include "cuda_mock/mock_access.hpp"

using namespace weft;
using namespace cuda_graph_test;

namespace {

// Before any test: the runtime loads its driver at first use, from WEFT_LIBCUDA.
const bool g_use_mock = weft_mock::use_mock();

using weft_mock::last_launch;
using weft_mock::launches;
using weft_mock::live_allocations;
using weft_mock::mock_function;

// The kernels the hook runs, by their PTX and launch shape (a module's kernels may share a
// name, "relu", and identical code launched over different grids).
struct Emulated {
    const Kernel* kernel;
    std::unique_ptr<weft_cuda_test::EmulatedKernel> emulator;
};
std::map<std::string, Emulated> g_emulated;
int g_emulated_launches = 0;

std::string launch_key(const std::string& ptx, const unsigned* grid, const unsigned* block) {
    std::string key = ptx;
    for (int d = 0; d < 3; ++d) key += " " + std::to_string(grid[d]) + "x" + std::to_string(block[d]);
    return key;
}

bool run_emulated(const char* name, const char* ptx, const unsigned* grid, const unsigned* block, void** params) {
    auto it = g_emulated.find(launch_key(ptx, grid, block));
    if (it == g_emulated.end()) return false;
    CHECK(it->second.kernel->module()->device_code()->kernel_name == name);
    const ir::PrimFunc& f = it->second.kernel->signature();
    const DeviceCode& dc = *it->second.kernel->module()->device_code();
    for (int d = 0; d < 3; ++d) {  // the runtime launched the configuration the compiler chose
        int64_t g = 0, b = 0;
        REQUIRE(ir::as_const_int(dc.grid[size_t(d)], &g));
        REQUIRE(ir::as_const_int(dc.block[size_t(d)], &b));
        CHECK(grid[d] == unsigned(g));
        CHECK(block[d] == unsigned(b));
    }
    std::vector<void*> args;
    for (size_t i = 0; i < f.args.size(); ++i) {
        if (f.args[i].kind == ir::KernelArg::Kind::Tensor) {
            uint64_t pointer = 0;  // a CUdeviceptr: the mock's device memory is host memory
            std::memcpy(&pointer, params[i], sizeof pointer);
            args.push_back(reinterpret_cast<void*>(pointer));
        } else {
            args.push_back(params[i]);
        }
    }
    it->second.emulator->run(args);
    ++g_emulated_launches;
    return true;
}

// Emulators for every kernel of `m`, registered with the mock (beside those registered
// before); false (reported skipped) when no C++ compiler can build them.
bool add_emulators(const graph::Module& m) {
    for (const Kernel& k : m.compiled_kernels()) {
        const DeviceCode& dc = *k.module()->device_code();
        unsigned grid[3], block[3];
        for (int d = 0; d < 3; ++d) {
            int64_t gv = 0, bv = 0;
            REQUIRE(ir::as_const_int(dc.grid[size_t(d)], &gv));
            REQUIRE(ir::as_const_int(dc.block[size_t(d)], &bv));
            grid[d] = unsigned(gv), block[d] = unsigned(bv);
        }
        const std::string key = launch_key(dc.ptx, grid, block);
        if (g_emulated.count(key)) continue;  // the same kernel twice (the kernel cache's)
        auto e = std::make_unique<weft_cuda_test::EmulatedKernel>(dc, k.signature());
        if (!e->ok()) {
            MESSAGE("skipped: " << e->why());
            return false;
        }
        g_emulated[key] = {&k, std::move(e)};
    }
    mock_function<void (*)(bool (*)(const char*, const char*, const unsigned*, const unsigned*, void**))>(
        "weft_mock_set_launch_hook")(run_emulated);
    return true;
}

// The same, for `m`'s kernels alone.
bool emulate_kernels(const graph::Module& m) {
    g_emulated.clear();
    return add_emulators(m);
}

// Builds `g` for the CPU and for CUDA on the mock, runs both on random inputs (given to the
// CUDA module from the host, then again from the device) and compares every output.
void run_against_cpu(const graph::Graph& g, uint64_t seed) {
    REQUIRE(cuda::device_count() == 2);  // the mock's
    graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda());
    const size_t allocations_before = live_allocations();
    {
        graph::Module gpu = graph::build(g, Target::cuda());
        check_every_kernel_is_ptx(gpu);
        check_same_groups(cpu, gpu);
        CHECK(gpu.device() == Device::cuda(0));
        // The storage: one arena, one buffer per input, each constant uploaded once.
        size_t constants = 0;
        for (const graph::Node& n : gpu.graph().nodes()) constants += n.is_constant();
        CHECK(live_allocations() - allocations_before == 1 + size_t(gpu.num_inputs()) + constants);
        if (!emulate_kernels(gpu)) return;

        for (int round = 0; round < 2; ++round) {
            const int launches_before = launches(), emulated_before = g_emulated_launches;
            std::vector<BufferRef> device_inputs;
            for (int i = 0; i < cpu.num_inputs(); ++i) {
                Buffer<float> x = Buffer<float>::random(cpu.input(i).shape(), -1, 1, seed + uint64_t(10 * round + i));
                cpu.set_input(i, x);
                if (round == 0) {
                    gpu.set_input(i, x);  // from the host
                } else {
                    device_inputs.push_back(x.copy_to(Device::cuda(0)));
                    gpu.set_input(i, device_inputs.back());  // from the device
                }
            }
            const size_t allocations_at_run = live_allocations();
            cpu.run();
            gpu.run();
            CHECK(live_allocations() == allocations_at_run);  // run() allocates nothing
            CHECK(launches() - launches_before == int(gpu.kernels().size()));
            CHECK(g_emulated_launches - emulated_before == int(gpu.kernels().size()));
            CHECK(last_launch().find("stream created") != std::string::npos);  // the module's stream
            gpu.cuda_stream().synchronize();
            for (int o = 0; o < cpu.num_outputs(); ++o) {
                CHECK(gpu.get_output(o).device() == Device::cuda(0));
                compare(cpu.get_output(o), gpu.get_output_host(o));
            }
        }
    }
    g_emulated.clear();
    CHECK(live_allocations() == allocations_before);  // the module freed all it allocated
}

}  // namespace

TEST_CASE("cuda_graph mock: a small CNN runs end to end through the mock driver and matches the CPU module") {
    run_against_cpu(small_cnn(), 101);
}

TEST_CASE("cuda_graph mock: a transformer block runs end to end through the mock driver and matches the CPU module") {
    run_against_cpu(transformer_block(8, 32, 64), 201);
}

// Points of a one-task graph's space (its default, then random ones), each built from a
// tuning record for Target::cuda(), run on the mock through the emulator, must match the CPU
// module; a point whose tiles do not fit is refused when it is built, naming its knobs (which
// start with `prefix`). `knobs` must be in the space.
void check_points_of_space(const graph::Graph& g, const std::vector<const char*>& knobs, const std::string& prefix) {
    REQUIRE(cuda::device_count() == 2);  // the mock's
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g, Target::cuda());
    REQUIRE(tasks.size() == 1);
    const ConfigSpace& space = tasks[0].space;
    for (const char* knob : knobs) CHECK(space.find(knob) != nullptr);
    graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda());
    std::vector<Buffer<float>> inputs;
    for (int i = 0; i < cpu.num_inputs(); ++i) {
        inputs.push_back(Buffer<float>::random(cpu.input(i).shape(), -1, 1, uint64_t(i + 1)));
        cpu.set_input(i, inputs.back());
    }
    cpu.run();
    std::mt19937_64 rng(17);
    int ran = 0;
    for (int trial = 0; trial < 16 && ran < 4; ++trial) {
        const Config c = trial == 0 ? space.defaults() : space.at(rng() % space.size());
        CAPTURE(c.str());
        auto records = std::make_shared<autotune::Records>();
        records->add({.target = autotune::target_key(Target::cuda()), .workload = tasks[0].workload, .config = c,
                      .costs_ms = {1.0}});
        std::optional<graph::Module> gpu;
        try {
            gpu.emplace(graph::build(g, Target::cuda(), {.records = records}));
        } catch (const Error& e) {
            const std::string message = e.what();
            CAPTURE(message);
            CHECK(trial > 0);
            CHECK(message.find(prefix) != std::string::npos);
            continue;
        }
        REQUIRE(gpu->kernels().size() == 1);
        CHECK(gpu->kernels()[0].tuned);
        if (!emulate_kernels(*gpu)) return;
        for (int i = 0; i < cpu.num_inputs(); ++i) gpu->set_input(i, inputs[size_t(i)]);
        gpu->run();
        gpu->cuda_stream().synchronize();
        compare(cpu.get_output(0), gpu->get_output_host(0));
        g_emulated.clear();
        ++ran;
    }
    CHECK(ran == 4);
}

// The CUDA GEMM template's space (cuda.gemm.*).
TEST_CASE("cuda_graph mock: points of the CUDA GEMM template's space compute what the CPU computes") {
    graph::Graph g;
    g.output(g.matmul(g.input("a", {64, 48}), g.input("b", {48, 96})), "c");
    check_points_of_space(g, {"cuda.gemm.bm", "cuda.gemm.bn", "cuda.gemm.kt", "cuda.gemm.tm", "cuda.gemm.tn"},
                          "cuda.gemm.");
}

// The direct conv2d's (cuda.conv.*), with a fused bias and ReLU.
TEST_CASE("cuda_graph mock: points of the CUDA conv2d template's space compute what the CPU computes") {
    graph::Graph g;
    g.output(g.relu(g.conv2d(g.input("x", {1, 8, 12, 12}), g.constant("w", Buffer<float>::random({16, 8, 3, 3}, -1, 1, 5)),
                             g.constant("bias", Buffer<float>::random({16}, -1, 1, 6)), {.pad = 1})),
             "y");
    check_points_of_space(g, {"cuda.conv.ft", "cuda.conv.tz", "cuda.conv.py", "cuda.conv.px", "cuda.conv.yb",
                              "cuda.conv.xb", "cuda.conv.rc"},
                          "cuda.conv.");
}

// A 1x1 strided conv2d's untiled schedule (its default; cuda.conv_untiled.*).
TEST_CASE("cuda_graph mock: points of the strided CUDA conv2d's space compute what the CPU computes") {
    graph::Graph g;
    g.output(g.conv2d(g.input("x", {1, 4, 15, 15}), g.constant("w", Buffer<float>::random({8, 4, 1, 1}, -1, 1, 7)),
                      {.stride = 2}),
             "y");
    check_points_of_space(g, {"cuda.conv_untiled.tx", "cuda.conv_untiled.threads", "cuda.conv.strided_tiled"},
                          "cuda.conv");
}

// The tiled schedule on strided convolutions (cuda.conv.strided_tiled = 1, the default of
// windows wider than 1x1): ResNet's downsampling shapes, 3x3 and 1x1, and the 7x7 stem,
// through the emulator against the CPU; without a record, the 3x3 and 7x7 ones are tiled too.
TEST_CASE("cuda_graph mock: strided convolutions with the tiled schedule compute what the CPU computes") {
    REQUIRE(cuda::device_count() == 2);  // the mock's
    struct Shape {
        int64_t c, f, h, k, pad, groups = 1;
    };
    // (the last: MobileNet's depthwise 3x3 stride 2)
    for (const Shape& sh : {Shape{8, 16, 14, 3, 1}, Shape{8, 16, 14, 1, 0}, Shape{3, 8, 20, 7, 3}, Shape{16, 16, 14, 3, 1, 16}}) {
        CAPTURE(sh.c);
        CAPTURE(sh.k);
        CAPTURE(sh.groups);
        graph::Graph g;
        g.output(g.conv2d(g.input("x", {1, sh.c, sh.h, sh.h}),
                          g.constant("w", Buffer<float>::random({sh.f, sh.c / sh.groups, sh.k, sh.k}, -1, 1, 9)),
                          {.stride = 2, .pad = sh.pad, .groups = sh.groups}),
                 "y");
        std::vector<graph::TuningTask> tasks = graph::extract_tasks(g, Target::cuda());
        REQUIRE(tasks.size() == 1);
        auto records = std::make_shared<autotune::Records>();
        records->add({.target = autotune::target_key(Target::cuda()), .workload = tasks[0].workload,
                      .config = Config().set("cuda.conv.strided_tiled", 1), .costs_ms = {1.0}});
        graph::Module gpu = graph::build(g, Target::cuda(), {.records = records});
        REQUIRE(gpu.kernels()[0].tuned);
        // The tiled schedule: shared tiles of the input and the weights.
        CHECK(gpu.compiled_kernels()[0].module()->device_code()->source.find("__shared__") != std::string::npos);
        graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda());
        Buffer<float> x = Buffer<float>::random({1, sh.c, sh.h, sh.h}, -1, 1, 4);
        if (!emulate_kernels(gpu)) return;
        cpu.set_input("x", x);
        gpu.set_input("x", x);
        cpu.run();
        gpu.run();
        gpu.cuda_stream().synchronize();
        compare(cpu.get_output(0), gpu.get_output_host(0));
        g_emulated.clear();
        graph::Module plain = graph::build(g, Target::cuda());
        CHECK((plain.compiled_kernels()[0].module()->device_code()->source.find("__shared__") != std::string::npos) ==
              (sh.k > 1));
    }
}

// graph::tune for a CUDA target: each candidate is measured in a child process (on the mock,
// whose state survives fork), run there by the emulator and checked against the default's
// output, which the default's child gives back; the tuned module matches the CPU. The grid
// tuner measures the default, then the space in index order: those points' kernels are
// registered with the emulator first (built from records: the same code tune compiles).
TEST_CASE("cuda_graph mock: graph::tune measures CUDA candidates in child processes") {
    REQUIRE(cuda::device_count() == 2);  // the mock's
    CHECK(cuda::fork_safe());             // the mock's state survives fork
    graph::Graph g;
    g.output(g.relu(g.matmul(g.input("a", {32, 48}), g.input("b", {48, 64}))), "c");
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g, Target::cuda());
    REQUIRE(tasks.size() == 1);
    const ConfigSpace& space = tasks[0].space;
    const int trials = 5;
    std::vector<Config> points = {space.defaults()};
    for (uint64_t i = 0; points.size() < size_t(trials) && i < space.size(); ++i)
        if (space.at(i).str() != space.defaults().str()) points.push_back(space.at(i));
    std::list<graph::Module> modules;  // the emulators point at their kernels
    g_emulated.clear();
    int buildable = 0;
    for (const Config& c : points) {
        auto records = std::make_shared<autotune::Records>();
        records->add({.target = autotune::target_key(Target::cuda()), .workload = tasks[0].workload, .config = c,
                      .costs_ms = {1.0}});
        try {
            modules.push_back(graph::build(g, Target::cuda(), {.records = records}));
        } catch (const Error&) {
            continue;  // refused when built: tune records it as that candidate's build error
        }
        if (!add_emulators(modules.back())) return;
        ++buildable;
    }
    REQUIRE(buildable >= 2);
    autotune::Records records =
        graph::tune(g, Target::cuda(), {.trials = trials, .tuner = graph::TuneOptions::Tuner::Grid});
    REQUIRE(records.size() == size_t(trials));
    int measured = 0;
    for (const autotune::Record& r : records.all()) {
        CAPTURE(r.config.str());
        CAPTURE(r.error);
        if (r.ok()) {
            ++measured;
            CHECK(r.costs_ms.size() == 5);
            for (double c : r.costs_ms) CHECK(c > 0);
        } else {
            CHECK(r.error.find("build: ") == 0);  // only a refused point fails
        }
    }
    CHECK(measured == buildable);
    // The best record builds a module that computes what the CPU computes.
    auto tuned = std::make_shared<autotune::Records>(records);
    graph::Module gpu = graph::build(g, Target::cuda(), {.records = tuned});
    CHECK(gpu.kernels()[0].tuned);
    graph::Module cpu = graph::build(g, Target::host(), cpu_like_cuda());
    Buffer<float> a = Buffer<float>::random({32, 48}, -1, 1, 3), b = Buffer<float>::random({48, 64}, -1, 1, 4);
    for (graph::Module* m : {&cpu, &gpu}) {
        m->set_input("a", a);
        m->set_input("b", b);
        m->run();
    }
    gpu.cuda_stream().synchronize();
    compare(cpu.get_output(0), gpu.get_output_host(0));
    g_emulated.clear();
}

// graph::tune measures on BuildOptions::cuda_device; one the driver does not have is an error
// before anything is measured.
TEST_CASE("cuda_graph mock: graph::tune measures on BuildOptions::cuda_device, and refuses one that is not there") {
    REQUIRE(cuda::device_count() == 2);  // the mock's
    graph::Graph g;
    g.output(g.matmul(g.input("a", {16, 32}), g.input("b", {32, 16})), "c");
    graph::BuildOptions second;
    second.cuda_device = 1;
    autotune::Records r = graph::tune(g, Target::cuda(), {.trials = 1}, second);
    REQUIRE(r.size() == 1);
    CHECK_MESSAGE(r.all()[0].ok(), r.all()[0].error);
    graph::BuildOptions missing;
    missing.cuda_device = 5;
    CHECK_THROWS_WITH_AS(graph::tune(g, Target::cuda(), {.trials = 1}, missing),
                         doctest::Contains("no CUDA device 5 (BuildOptions::cuda_device): there are 2"), Error);
}

// Whole networks with strided convolutions (the tiled GPU schedule's default for windows wider
// than 1x1): MobileNetV2's depthwise and ResNet-18's downsampling layers, small images, through
// the mock's emulator against the CPU module.
TEST_CASE("cuda_graph mock: MobileNetV2 (32x32) runs end to end through the mock driver and matches the CPU module") {
    run_against_cpu(graph::testing::mobilenet_v2(1, 32, 10), 301);
}
TEST_CASE("cuda_graph mock: ResNet-18 (32x32) runs end to end through the mock driver and matches the CPU module") {
    run_against_cpu(graph::testing::resnet18(1, 32, 10), 302);
}
