// Measuring on other machines (TVM's RPC device pool, over gRPC): a tracker hands out
// measuring servers by device key; each server (weft-rpc-server) registers with it and
// measures the compiled CPU kernels a tuner sends — signature, object code and arguments —
// as autotune::measure does locally (checked in a child process, then timed). RpcRunner is
// the tuner's side: an autotune::Runner for TuneOptions::runner. A server that stops
// answering mid-measurement costs a retry on another server (the tracker drops it until it
// registers again), not the tuning run.
//
//   weft-rpc-tracker --port 9190                                     # one machine
//   weft-rpc-server --tracker tracker:9190 --key epyc-zen5            # each measuring machine
//   auto runner = std::make_shared<rpc::RpcRunner>(rpc::RpcRunnerOptions{"tracker:9190", "epyc-zen5"});
//   graph::tune(g, target_of_those_machines, {.trials = 64, .runner = runner});
//
// Built where gRPC is (Debian's libgrpc++-dev, protobuf-compiler-grpc): the weft_rpc library,
// target weft::rpc. Kernels travel as object code for the tuner's Target: the servers' CPUs
// must have its features (a server refuses a kernel that needs one it lacks).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "weft/autotune/runner.hpp"

namespace weft::rpc {

struct TrackerOptions {
    std::string address = "0.0.0.0:9190";  // where it listens (port 0: any free one)
    std::string port_file;                  // if set, the port it listens on is written there
};
// Serves the tracker; returns only when it cannot listen (a weft::Error).
void serve_tracker(const TrackerOptions& options);

struct ServerOptions {
    std::string address = "0.0.0.0:0";  // where it listens (port 0: any free one)
    std::string host = "127.0.0.1";      // the host name tuners reach it by (the tracker hands out host:port)
    std::string tracker;                 // host:port of the tracker to register with
    std::string key;                     // its device key ("epyc-zen5", "xeon-amx")
    std::string port_file;               // if set, the port it listens on is written there once it
                                         // has registered
    int exit_after = -1;                 // tests: after this many measurements, the next one ends the
                                         // process before it answers (a server killed mid-measurement)
};
// Serves measurements, registered with the tracker; returns only when it cannot listen or
// register (a weft::Error).
void serve_runner(const ServerOptions& options);

struct ServerStatus {
    std::string key, address;
    bool busy = false;
};
// The servers a tracker knows.
std::vector<ServerStatus> list_servers(const std::string& tracker);

struct RpcRunnerOptions {
    std::string tracker;              // host:port
    std::string key;                  // the device key of the servers to measure on
    int retries = 3;                  // other servers tried after one that did not answer
    double acquire_timeout_s = 120;   // how long to wait for a free server
};

class RpcRunner final : public autotune::Runner {
public:
    explicit RpcRunner(RpcRunnerOptions options);
    ~RpcRunner() override;
    autotune::MeasureResult measure(const Kernel& kernel, const Target& target, const std::vector<BufferRef>& args,
                                    size_t output, const BufferRef* reference,
                                    const autotune::MeasureOptions& options) override;
    // Measurements sent again to another server because one did not answer.
    int retries() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace weft::rpc
