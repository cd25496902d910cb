// weft/rpc/rpc.hpp over gRPC (the services in src/rpc/weft_rpc.proto): the tracker, the
// measuring server and RpcRunner. gRPC's types stay in this file: the public header has none.
#include "weft/rpc/rpc.hpp"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/ir/error.hpp"
#include "weft/ir/op.hpp"
#include "weft/runtime/thread_pool.hpp"
#include "weft_rpc.grpc.pb.h"

namespace weft::rpc {
namespace {

namespace pb = ::weft::rpc::proto;

// Kernels' arguments and reference outputs travel whole: up to 1 GiB a message.
constexpr int kMaxMessage = 1 << 30;
// What one request may ask a server to allocate for its arguments.
constexpr int64_t kMaxArgumentBytes = int64_t(4) << 30;

std::shared_ptr<grpc::Channel> channel_to(const std::string& address) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxMessage);
    args.SetMaxSendMessageSize(kMaxMessage);
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::chrono::system_clock::time_point after(double seconds) {
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds));
}

// Starts a server on `address` with `services`; *port is the port it got.
std::unique_ptr<grpc::Server> start(const std::string& address, const std::vector<grpc::Service*>& services,
                                    int* port, const char* who) {
    grpc::ServerBuilder builder;
    builder.SetMaxReceiveMessageSize(kMaxMessage);
    builder.SetMaxSendMessageSize(kMaxMessage);
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
    for (grpc::Service* s : services) builder.RegisterService(s);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    WEFT_CHECK(server && *port > 0, who, ": cannot listen on ", address);
    return server;
}

// Says the service is ready: its port, written whole under another name, then renamed (a
// reader never sees half a number).
void write_port_file(const std::string& port_file, int port, const char* who) {
    if (port_file.empty()) return;
    const std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    WEFT_CHECK(std::rename(tmp.c_str(), port_file.c_str()) == 0, who, ": cannot write ", port_file);
}

// ---- the tracker ----------------------------------------------------------------------------

class TrackerService final : public pb::Tracker::Service {
public:
    grpc::Status Register(grpc::ServerContext*, const pb::ServerInfo* in, pb::Empty*) override {
        if (in->key().empty() || in->address().empty())
            return {grpc::StatusCode::INVALID_ARGUMENT, "a server registers with a key and an address"};
        std::lock_guard lock(mutex_);
        Entry& e = servers_[in->address()];
        e.key = in->key();
        e.busy = false;
        changed_.notify_all();
        return grpc::Status::OK;
    }

    grpc::Status Acquire(grpc::ServerContext* context, const pb::AcquireRequest* in, pb::ServerInfo* out) override {
        std::unique_lock lock(mutex_);
        // At most an hour; waited in slices of a second, so that a tuner that went away
        // (its call cancelled) does not hold this thread.
        const double wait_s = std::isfinite(in->timeout_s()) ? std::clamp(in->timeout_s(), 0.0, 3600.0) : 0.0;
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(wait_s));
        for (;;) {
            // The free server of the key that has waited longest: the measurements spread.
            std::map<std::string, Entry>::iterator pick = servers_.end();
            for (auto it = servers_.begin(); it != servers_.end(); ++it)
                if (it->second.key == in->key() && !it->second.busy &&
                    (pick == servers_.end() || it->second.last_used < pick->second.last_used))
                    pick = it;
            if (pick != servers_.end()) {
                pick->second.busy = true;
                pick->second.last_used = ++uses_;
                out->set_key(pick->second.key);
                out->set_address(pick->first);
                return grpc::Status::OK;
            }
            if (context->IsCancelled() || std::chrono::steady_clock::now() >= deadline) break;
            changed_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)));
        }
        std::string keys;
        for (auto& [address, e] : servers_) keys += (keys.empty() ? "" : ", ") + e.key + " at " + address;
        return {grpc::StatusCode::RESOURCE_EXHAUSTED,
                "no free server with key '" + in->key() + "' (registered: " + (keys.empty() ? "none" : keys) + ")"};
    }

    grpc::Status Release(grpc::ServerContext*, const pb::ReleaseRequest* in, pb::Empty*) override {
        std::lock_guard lock(mutex_);
        auto it = servers_.find(in->address());
        if (it != servers_.end()) {
            if (in->failed()) servers_.erase(it);  // until it registers again
            else it->second.busy = false;
        }
        changed_.notify_all();
        return grpc::Status::OK;
    }

    grpc::Status List(grpc::ServerContext*, const pb::Empty*, pb::ServerList* out) override {
        std::lock_guard lock(mutex_);
        for (auto& [address, e] : servers_) {
            pb::ServerStatus* s = out->add_servers();
            s->mutable_server()->set_key(e.key);
            s->mutable_server()->set_address(address);
            s->set_busy(e.busy);
        }
        return grpc::Status::OK;
    }

private:
    struct Entry {
        std::string key;
        bool busy = false;
        uint64_t last_used = 0;  // when it was last handed out (uses_ then)
    };
    uint64_t uses_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, Entry> servers_;  // by address
};

// ---- the measuring server -------------------------------------------------------------------

// "+avx512f" entries of `features` that the host lacks.
std::string missing_features(const std::string& features, const Target& host) {
    std::string missing;
    std::stringstream in(features);
    for (std::string f; std::getline(in, f, ',');)
        if (f.size() > 1 && f[0] == '+' && !host.has_feature(f.substr(1))) missing += (missing.empty() ? "" : ",") + f;
    return missing;
}

// The kernel and arguments of a request, or what is wrong with it.
struct Candidate {
    Kernel kernel;
    std::vector<BufferRef> args;
    BufferRef reference;
};

Candidate decode(const pb::MeasureRequest& in, const Target& host) {
    WEFT_CHECK(in.args_size() >= 1 && in.inputs_size() == in.args_size(), "the request has ", in.args_size(),
               " arguments and ", in.inputs_size(), " argument buffers");
    const std::string missing = missing_features(in.features(), host);
    WEFT_CHECK(missing.empty(), "the kernel was compiled for a CPU (", in.cpu(), ") with features this server's (",
               host.cpu, ") lacks: ", missing);
    Candidate c;
    ir::PrimFunc f;
    f.name = in.kernel_name();
    f.fast_math = in.fast_math();
    int64_t total = 0;
    for (int i = 0; i < in.args_size(); ++i) {
        const pb::KernelArg& a = in.args(i);
        ir::KernelArg arg;
        arg.kind = ir::KernelArg::Kind::Tensor;
        arg.name = a.name();
        arg.var = ir::Var(arg.name, DataType::handle());
        arg.type = DataType::parse(a.dtype());
        int64_t elements = 1;
        for (int64_t d : a.shape()) {
            WEFT_CHECK(d >= 0 && (d == 0 || elements <= kMaxArgumentBytes / d), "argument '", a.name(), "' has a bad shape");
            elements *= d;
            arg.shape.push_back(ir::make_int(d));
        }
        arg.is_output = a.is_output();
        WEFT_CHECK(arg.is_output == (i + 1 == in.args_size()), "only the last argument is the output");
        for (int32_t o : a.may_overwrite()) {
            WEFT_CHECK(o >= 0 && o < in.args_size(), "argument '", a.name(), "' overwrites argument ", o);
            arg.may_overwrite.push_back(o);
        }
        const int64_t bytes = elements * arg.type.bytes();
        total += bytes;
        WEFT_CHECK(total <= kMaxArgumentBytes, "the arguments need more than ", kMaxArgumentBytes, " bytes");
        WEFT_CHECK(int64_t(in.inputs(i).size()) == bytes, "argument '", a.name(), "' has ", in.inputs(i).size(),
                   " bytes, its type ", bytes);
        std::vector<int64_t> shape(a.shape().begin(), a.shape().end());
        BufferRef b = BufferRef::allocate(arg.type, shape);
        std::memcpy(b.data(), in.inputs(i).data(), size_t(bytes));
        c.args.push_back(b);
        f.args.push_back(std::move(arg));
    }
    if (!in.reference().empty()) {
        const BufferRef& out = c.args.back();
        WEFT_CHECK(int64_t(in.reference().size()) == out.size_bytes(), "the reference has ", in.reference().size(),
                   " bytes, the output ", out.size_bytes());
        c.reference = BufferRef::allocate(out.dtype(), out.shape());
        std::memcpy(c.reference.data(), in.reference().data(), in.reference().size());
    }
    Target target = host;
    target.triple = in.triple();
    target.cpu = in.cpu();
    target.features = in.features();
    target.num_threads = std::max(1, in.num_threads());
    ObjectCode object{in.object_symbol(), in.object_code()};
    c.kernel = Kernel(codegen::load_llvm_object(object, f.name, target), std::move(f));
    return c;
}

class RunnerService final : public pb::Runner::Service {
public:
    explicit RunnerService(ServerOptions options) : options_(std::move(options)), host_(Target::host()) {}

    grpc::Status Measure(grpc::ServerContext*, const pb::MeasureRequest* in, pb::MeasureReply* out) override {
        // One measurement at a time: two would disturb each other's timing.
        std::lock_guard lock(mutex_);
        if (options_.exit_after >= 0 && measured_ >= options_.exit_after) ::_exit(3);  // tests: killed mid-measurement
        ++measured_;
        try {
            Candidate c = decode(*in, host_);
            set_num_threads(std::max(1, in->num_threads()));
            // What a request may ask for is bounded: an hour's timeout, 10,000 timed runs.
            autotune::MeasureOptions m;
            m.warmup = std::clamp(in->warmup(), 0, 1000);
            m.repeats = std::clamp(in->repeats(), 1, 10000);
            m.timeout_s = in->timeout_s() > 0 && in->timeout_s() <= 3600 ? in->timeout_s() : 10;
            m.rtol = in->rtol();
            m.atol = in->atol();
            autotune::MeasureResult r = autotune::measure(c.kernel, c.args, c.args.size() - 1,
                                                          c.reference.defined() ? &c.reference : nullptr, m);
            for (double ms : r.costs_ms) out->add_costs_ms(ms);
            out->set_error(r.error);
        } catch (const std::exception& e) {
            out->set_error(std::string("rpc server: ") + e.what());
        }
        return grpc::Status::OK;
    }

private:
    ServerOptions options_;
    Target host_;
    std::mutex mutex_;
    int measured_ = 0;
};

std::string status_text(const grpc::Status& s) {
    return s.error_message().empty() ? "gRPC status " + std::to_string(int(s.error_code())) : s.error_message();
}

}  // namespace

void serve_tracker(const TrackerOptions& options) {
    TrackerService service;
    int port = 0;
    std::unique_ptr<grpc::Server> server = start(options.address, {&service}, &port, "weft-rpc-tracker");
    write_port_file(options.port_file, port, "weft-rpc-tracker");
    server->Wait();
}

void serve_runner(const ServerOptions& options) {
    WEFT_CHECK(!options.tracker.empty() && !options.key.empty(), "weft-rpc-server: needs a tracker and a key");
    RunnerService service(options);
    int port = 0;
    std::unique_ptr<grpc::Server> server = start(options.address, {&service}, &port, "weft-rpc-server");
    pb::ServerInfo me;
    me.set_key(options.key);
    me.set_address(options.host + ":" + std::to_string(port));
    auto tracker = pb::Tracker::NewStub(channel_to(options.tracker));
    grpc::ClientContext context;
    context.set_deadline(after(30));
    pb::Empty none;
    const grpc::Status s = tracker->Register(&context, me, &none);
    WEFT_CHECK(s.ok(), "weft-rpc-server: cannot register with the tracker at ", options.tracker, ": ", status_text(s));
    write_port_file(options.port_file, port, "weft-rpc-server");  // (once registered)
    server->Wait();
}

std::vector<ServerStatus> list_servers(const std::string& tracker) {
    auto stub = pb::Tracker::NewStub(channel_to(tracker));
    grpc::ClientContext context;
    context.set_deadline(after(30));
    pb::Empty none;
    pb::ServerList list;
    const grpc::Status s = stub->List(&context, none, &list);
    WEFT_CHECK(s.ok(), "rpc: cannot reach the tracker at ", tracker, ": ", status_text(s));
    std::vector<ServerStatus> out;
    for (const pb::ServerStatus& x : list.servers()) out.push_back({x.server().key(), x.server().address(), x.busy()});
    return out;
}

struct RpcRunner::State {
    RpcRunnerOptions options;
    std::unique_ptr<pb::Tracker::Stub> tracker;
    std::map<std::string, std::unique_ptr<pb::Runner::Stub>> servers;  // by address
    int retries = 0;
};

RpcRunner::RpcRunner(RpcRunnerOptions options) : state_(std::make_unique<State>()) {
    WEFT_CHECK(!options.tracker.empty() && !options.key.empty(), "rpc::RpcRunner: needs a tracker and a key");
    WEFT_CHECK(options.retries >= 0, "rpc::RpcRunner: retries must not be negative, got ", options.retries);
    state_->tracker = pb::Tracker::NewStub(channel_to(options.tracker));
    state_->options = std::move(options);
}

RpcRunner::~RpcRunner() = default;

int RpcRunner::retries() const { return state_->retries; }

autotune::MeasureResult RpcRunner::measure(const Kernel& kernel, const Target& target, const std::vector<BufferRef>& args,
                                           size_t output, const BufferRef* reference,
                                           const autotune::MeasureOptions& options) {
    WEFT_CHECK(target.is_cpu(), "rpc::RpcRunner: measures CPU kernels, got one for ", target.str());
    WEFT_CHECK(output + 1 == args.size(), "rpc::RpcRunner: the output must be the last argument");
    const ir::PrimFunc& f = kernel.signature();
    WEFT_CHECK(f.args.size() == args.size(), "rpc::RpcRunner: kernel '", f.name, "' takes ", f.args.size(),
               " arguments, got ", args.size());
    const ObjectCode object = kernel.module()->object_code();
    WEFT_CHECK(!object.bytes.empty(), "rpc::RpcRunner: kernel '", f.name, "' has no object code to send");
    pb::MeasureRequest request;
    request.set_kernel_name(f.name);
    request.set_fast_math(f.fast_math);
    for (size_t i = 0; i < f.args.size(); ++i) {
        const ir::KernelArg& a = f.args[i];
        WEFT_CHECK(a.kind == ir::KernelArg::Kind::Tensor && args[i].device().is_cpu(), "rpc::RpcRunner: kernel '",
                   f.name, "' argument '", a.name, "' is not a tensor on the host");
        pb::KernelArg* out = request.add_args();
        out->set_name(a.name);
        out->set_dtype(args[i].dtype().str());
        for (int64_t d : args[i].shape()) out->add_shape(d);
        out->set_is_output(i == output);
        for (int o : a.may_overwrite) out->add_may_overwrite(o);
        request.add_inputs(static_cast<const char*>(args[i].data()), size_t(args[i].size_bytes()));
    }
    request.set_object_symbol(object.symbol);
    request.set_object_code(object.bytes);
    request.set_triple(target.triple);
    request.set_cpu(target.cpu);
    request.set_features(target.features);
    request.set_num_threads(target.num_threads);
    if (reference) request.set_reference(static_cast<const char*>(reference->data()), size_t(reference->size_bytes()));
    request.set_warmup(options.warmup);
    request.set_repeats(options.repeats);
    request.set_timeout_s(options.timeout_s);
    request.set_rtol(options.rtol);
    request.set_atol(options.atol);

    State& st = *state_;
    std::string last_error;
    for (int attempt = 0; attempt <= st.options.retries; ++attempt) {
        pb::AcquireRequest want;
        want.set_key(st.options.key);
        want.set_timeout_s(st.options.acquire_timeout_s);
        pb::ServerInfo server;
        {
            grpc::ClientContext context;
            context.set_deadline(after(st.options.acquire_timeout_s + 30));
            const grpc::Status s = st.tracker->Acquire(&context, want, &server);
            WEFT_CHECK(s.ok(), "rpc::RpcRunner: the tracker at ", st.options.tracker, " gave no server: ", status_text(s));
        }
        auto& stub = st.servers[server.address()];
        if (!stub) stub = pb::Runner::NewStub(channel_to(server.address()));
        pb::MeasureReply reply;
        grpc::ClientContext context;
        // The checking run's timeout, the timed runs and the transfers.
        context.set_deadline(after(2 * options.timeout_s + 60 + 0.01 * options.repeats * options.timeout_s));
        const grpc::Status s = stub->Measure(&context, request, &reply);
        {
            pb::ReleaseRequest done;
            done.set_address(server.address());
            done.set_failed(!s.ok());
            grpc::ClientContext release;
            release.set_deadline(after(30));
            pb::Empty none;
            st.tracker->Release(&release, done, &none);  // (a tracker gone is seen at the next Acquire)
        }
        if (s.ok()) {
            autotune::MeasureResult r;
            r.costs_ms.assign(reply.costs_ms().begin(), reply.costs_ms().end());
            r.error = reply.error();
            return r;
        }
        last_error = server.address() + ": " + status_text(s);
        if (attempt < st.options.retries) ++st.retries;
    }
    return {{}, "rpc: no server measured it in " + std::to_string(st.options.retries + 1) + " tries; the last, " + last_error};
}

}  // namespace weft::rpc
