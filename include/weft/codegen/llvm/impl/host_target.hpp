// Target::host() (declared in ir/target.hpp): the CPU this process runs on, through LLVM's
// host queries.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include "weft/ir/target.hpp"

namespace weft {

Target Target::host() {
    // The host does not change while the process runs: detect it once.
    static const Target detected = [] {
        Target t;
        t.kind = Kind::CPU;
        t.triple = llvm::sys::getProcessTriple();
        t.cpu = llvm::sys::getHostCPUName().str();
        std::vector<std::string> features;
        bool avx512f = false, avx2 = false;
        for (const auto& f : llvm::sys::getHostCPUFeatures()) {
            features.push_back((f.second ? "+" : "-") + f.first().str());
            if (f.second && f.first() == "avx512f") avx512f = true;
            if (f.second && f.first() == "avx2") avx2 = true;
        }
        std::sort(features.begin(), features.end());  // a stable string: part of cache keys
        for (size_t i = 0; i < features.size(); ++i) t.features += (i ? "," : "") + features[i];
        t.vector_bits = avx512f ? 512 : avx2 ? 256 : 128;
        return t;
    }();
    return detected;
}

}  // namespace weft
