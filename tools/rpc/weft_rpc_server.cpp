// weft-rpc-server: measures the compiled kernels tuners send it, registered with a tracker
// under a device key (weft/rpc/rpc.hpp, docs/tuning.md "Measuring on other machines").
//   weft-rpc-server --tracker HOST:PORT --key KEY [--port P] [--host H] [--port-file PATH]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <weft/rpc/rpc.hpp>

#include "command_line.hpp"

namespace {
const char* kUsage =
    "usage: weft-rpc-server --tracker HOST:PORT --key KEY [--port P] [--host H] [--port-file PATH]\n"
    "Listens on port P (default 0: any free one, written to --port-file), registers with the tracker\n"
    "as H:P (H: the name tuners reach this machine by, default 127.0.0.1) under KEY (the device key\n"
    "tuners ask for, e.g. epyc-zen5), and measures what they send, one kernel at a time.\n";
}

int main(int argc, char** argv) {
    weft::rpc::ServerOptions o;
    std::string port = "0";
    weft_rpc_tools::parse(argc, argv, "weft-rpc-server", kUsage, [&](const std::string& a, const std::string& v) {
        if (a == "--tracker") o.tracker = v;
        else if (a == "--key") o.key = v;
        else if (a == "--port") port = v;
        else if (a == "--host") o.host = v;
        else if (a == "--port-file") o.port_file = v;
        else if (a == "--exit-after") o.exit_after = std::atoi(v.c_str());  // tests only
        else return false;
        return true;
    });
    if (o.tracker.empty() || o.key.empty()) {
        std::fprintf(stderr, "weft-rpc-server: error: --tracker and --key are required\n%s", kUsage);
        return 2;
    }
    o.address = "0.0.0.0:" + port;
    try {
        weft::rpc::serve_runner(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft-rpc-server: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
