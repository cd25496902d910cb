// The RPC device pool on loopback: a tracker and servers started as processes
// (weft-rpc-tracker, weft-rpc-server), graph::tune measuring through rpc::RpcRunner, a server
// that dies mid-measurement costing a retry, and bad measurements reported as the
// candidate's error.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "weft/rpc/rpc.hpp"
#include "weft_rpc.grpc.pb.h"
#include "weft/weft.hpp"

using namespace weft;
namespace fs = std::filesystem;

namespace {

// A tool started in its own process, killed when this goes; its port read from --port-file.
class Process {
public:
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    Process(const std::string& path, std::vector<std::string> args) {
        port_file_ = (fs::temp_directory_path() / ("weft_rpc_port_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(counter()++)))
                         .string();
        fs::remove(port_file_);
        args.push_back("--port-file");
        args.push_back(port_file_);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            std::vector<char*> argv{const_cast<char*>(path.c_str())};
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(path.c_str(), argv.data());
            ::_exit(127);
        }
        // Its port, once it listens (and, for a server, has registered).
        for (int i = 0; i < 200 && port_ == 0; ++i) {
            std::ifstream in(port_file_);
            if (!(in >> port_)) port_ = 0;
            if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        REQUIRE_MESSAGE(port_ > 0, path, " did not start");
    }
    ~Process() {
        if (running()) ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        fs::remove(port_file_);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    bool running() {
        int status = 0;
        return ::waitpid(pid_, &status, WNOHANG) == 0;
    }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    pid_t pid_ = -1;
    int port_ = 0;
    std::string port_file_;
};

Process tracker() { return Process(WEFT_RPC_TRACKER, {"--port", "0"}); }
Process server(const Process& t, const std::string& key, int exit_after = -1) {
    std::vector<std::string> args{"--tracker", t.address(), "--key", key};
    if (exit_after >= 0) args.insert(args.end(), {"--exit-after", std::to_string(exit_after)});
    return Process(WEFT_RPC_SERVER, args);
}

graph::Graph small_matmul() {
    graph::Graph g;
    g.output(g.relu(g.matmul(g.input("a", {24, 40}), g.input("b", {40, 48}))), "c");
    return g;
}

}  // namespace

TEST_CASE("graph::tune measures on RPC servers the tracker hands out, and build applies the records") {
    Process t = tracker();
    Process s1 = server(t, "loopback"), s2 = server(t, "loopback");
    CHECK(rpc::list_servers(t.address()).size() == 2);
    auto runner = std::make_shared<rpc::RpcRunner>(rpc::RpcRunnerOptions{t.address(), "loopback"});
    const Target target = Target::host();
    autotune::Records records = graph::tune(small_matmul(), target, {.trials = 6, .seed = 3, .runner = runner});
    REQUIRE(records.size() == 6);
    for (const auto& r : records.all()) {
        CAPTURE(r.error);
        CHECK(r.ok());
        CHECK(r.costs_ms.size() == 5);
    }
    CHECK(runner->retries() == 0);
    // The same seed measured here draws the same candidates.
    autotune::Records local = graph::tune(small_matmul(), target, {.trials = 6, .seed = 3});
    REQUIRE(local.size() == 6);
    for (size_t i = 0; i < 6; ++i) CHECK(local.all()[i].config.str() == records.all()[i].config.str());
    graph::Module m = graph::build(small_matmul(), target, {.records = std::make_shared<autotune::Records>(records)});
    CHECK(m.kernels()[0].tuned);
}

TEST_CASE("a server that dies mid-measurement costs a retry on another, not the run") {
    Process t = tracker();
    Process dying = server(t, "loopback", 2);  // ends the process at its third measurement
    Process other = server(t, "loopback");
    auto runner = std::make_shared<rpc::RpcRunner>(rpc::RpcRunnerOptions{t.address(), "loopback"});
    autotune::Records records = graph::tune(small_matmul(), Target::host(), {.trials = 8, .runner = runner});
    REQUIRE(records.size() == 8);
    for (const auto& r : records.all()) {
        CAPTURE(r.error);
        CHECK(r.ok());
    }
    CHECK(runner->retries() >= 1);
    CHECK(!dying.running());
    // The tracker dropped it; the other is free again.
    std::vector<rpc::ServerStatus> left = rpc::list_servers(t.address());
    REQUIRE(left.size() == 1);
    CHECK(left[0].address == other.address());
    CHECK(!left[0].busy);
}

TEST_CASE("RPC measurements: a wrong output or a CPU feature the server lacks is the candidate's error") {
    Process t = tracker();
    Process s = server(t, "loopback");
    rpc::RpcRunner runner({t.address(), "loopback"});
    Tensor A = placeholder({64}, f32, "A"), B = placeholder({64}, f32, "B");
    Tensor C = compute({64}, [&](Expr i) { return A(i) + B(i); }, "C");
    Schedule sch = create_schedule(C);
    const Target target = Target::host();
    Kernel k = build(sch, {A, B, C}, target);
    Buffer<float> a = Buffer<float>::random({64}, -1, 1, 1), b = Buffer<float>::random({64}, -1, 1, 2), c({64});
    Buffer<float> want({64});
    for (int i = 0; i < 64; ++i) want.data()[i] = a.data()[i] + b.data()[i];
    const std::vector<BufferRef> args{a, b, c};
    autotune::MeasureResult right = runner.measure(k, target, args, 2, &want, {});
    CHECK_MESSAGE(right.ok(), right.error);
    Buffer<float> wrong({64});
    autotune::MeasureResult bad = runner.measure(k, target, args, 2, &wrong, {});
    CHECK(!bad.ok());
    CHECK(bad.error.rfind("wrong result", 0) == 0);
    Target other = target;
    other.features += ",+weft-imaginary-feature";
    autotune::MeasureResult missing = runner.measure(k, other, args, 2, nullptr, {});
    CHECK(!missing.ok());
    CHECK(missing.error.find("lacks: +weft-imaginary-feature") != std::string::npos);
    CHECK(s.running());  // none of that hurt the server
    CHECK(runner.retries() == 0);
}

TEST_CASE("RpcRunner without a tracker, or without a server of its key, throws weft::Error") {
    rpc::RpcRunner nowhere({"127.0.0.1:1", "loopback", 0, 1});
    Tensor A = placeholder({8}, f32, "A");
    Tensor C = compute({8}, [&](Expr i) { return A(i) * 2.f; }, "C");
    Schedule sch = create_schedule(C);
    Kernel k = build(sch, {A, C}, Target::host());
    Buffer<float> a({8}), c({8});
    CHECK_THROWS_WITH_AS(nowhere.measure(k, Target::host(), {a, c}, 1, nullptr, {}),
                         doctest::Contains("gave no server"), Error);
    Process t = tracker();
    Process s = server(t, "loopback");
    rpc::RpcRunner other_key({t.address(), "another-key", 0, 0.5});
    CHECK_THROWS_WITH_AS(other_key.measure(k, Target::host(), {a, c}, 1, nullptr, {}),
                         doctest::Contains("no free server with key 'another-key'"), Error);
}

// A server takes requests from the network: malformed ones are answered with an error that
// says what was wrong, and the server goes on.
TEST_CASE("weft-rpc-server answers malformed measurement requests with errors and stays up") {
    Process t = tracker();
    Process s = server(t, "loopback");
    auto stub = weft::rpc::proto::Runner::NewStub(grpc::CreateChannel(s.address(), grpc::InsecureChannelCredentials()));
    auto measure = [&](const weft::rpc::proto::MeasureRequest& request) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        weft::rpc::proto::MeasureReply reply;
        const grpc::Status status = stub->Measure(&context, request, &reply);
        REQUIRE_MESSAGE(status.ok(), status.error_message());
        CHECK(reply.costs_ms_size() == 0);
        return reply.error();
    };
    // A valid-looking request for a kernel of one float32 argument of 4 elements.
    auto request = [] {
        weft::rpc::proto::MeasureRequest r;
        r.set_kernel_name("k");
        weft::rpc::proto::KernelArg* a = r.add_args();
        a->set_name("out");
        a->set_dtype("float32");
        a->add_shape(4);
        a->set_is_output(true);
        r.add_inputs(std::string(16, '\0'));
        r.set_object_symbol("k");
        r.set_object_code("not an object file");
        r.set_repeats(1);
        return r;
    };
    CHECK(measure(weft::rpc::proto::MeasureRequest()).find("arguments") != std::string::npos);  // empty
    auto wrong_size = request();
    wrong_size.set_inputs(0, std::string(3, '\0'));
    CHECK(measure(wrong_size).find("has 3 bytes, its type 16") != std::string::npos);
    auto huge = request();
    huge.mutable_args(0)->add_shape(int64_t(1) << 40);
    huge.mutable_args(0)->add_shape(int64_t(1) << 40);
    CHECK(measure(huge).find("bad shape") != std::string::npos);
    auto negative = request();
    negative.mutable_args(0)->set_shape(0, -4);
    CHECK(measure(negative).find("bad shape") != std::string::npos);
    auto bad_type = request();
    bad_type.mutable_args(0)->set_dtype("complex1024");
    CHECK(!measure(bad_type).empty());
    auto bad_overwrite = request();
    bad_overwrite.mutable_args(0)->add_may_overwrite(7);
    CHECK(measure(bad_overwrite).find("overwrites argument 7") != std::string::npos);
    auto not_last = request();
    not_last.mutable_args(0)->set_is_output(false);
    CHECK(measure(not_last).find("only the last argument") != std::string::npos);
    auto short_reference = request();
    short_reference.set_reference("abc");
    CHECK(measure(short_reference).find("the reference has 3 bytes") != std::string::npos);
    auto garbage = request();
    CHECK(!measure(garbage).empty());  // the object code does not load
    CHECK(s.running());
    // And it still measures.
    rpc::RpcRunner runner({t.address(), "loopback"});
    Tensor A = placeholder({8}, f32, "A");
    Tensor C = compute({8}, [&](Expr i) { return A(i) + 1.f; }, "C");
    Schedule sch = create_schedule(C);
    Kernel k = build(sch, {A, C}, Target::host());
    Buffer<float> a({8}), c({8});
    autotune::MeasureResult r = runner.measure(k, Target::host(), {a, c}, 1, nullptr, {});
    CHECK_MESSAGE(r.ok(), r.error);
}
