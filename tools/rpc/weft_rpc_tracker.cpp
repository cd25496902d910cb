// weft-rpc-tracker: hands out measuring servers (weft-rpc-server) to tuners by device key
// (weft/rpc/rpc.hpp, docs/tuning.md "Measuring on other machines").
//   weft-rpc-tracker [--port P] [--host H] [--port-file PATH] [--list TRACKER]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <weft/rpc/rpc.hpp>

#include "command_line.hpp"

namespace {
const char* kUsage =
    "usage: weft-rpc-tracker [--port P] [--host H] [--port-file PATH]\n"
    "       weft-rpc-tracker --list HOST:PORT\n"
    "Serves the tracker on H:P (default 0.0.0.0:9190; port 0: any free one, written to --port-file);\n"
    "--list prints the servers a running tracker knows (key, address, busy).\n";
}

int main(int argc, char** argv) {
    weft::rpc::TrackerOptions o;
    std::string host = "0.0.0.0", port = "9190", list;
    weft_rpc_tools::parse(argc, argv, "weft-rpc-tracker", kUsage, [&](const std::string& a, const std::string& v) {
        if (a == "--port") port = v;
        else if (a == "--host") host = v;
        else if (a == "--port-file") o.port_file = v;
        else if (a == "--list") list = v;
        else return false;
        return true;
    });
    try {
        if (!list.empty()) {
            for (const auto& s : weft::rpc::list_servers(list))
                std::printf("%s %s%s\n", s.key.c_str(), s.address.c_str(), s.busy ? " busy" : "");
            return 0;
        }
        o.address = host + ":" + port;
        weft::rpc::serve_tracker(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft-rpc-tracker: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
