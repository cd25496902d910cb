// Writes fuzz_artifact's seed corpus: artifact_seeds.hpp's modules as DIR/<name>.weft.
#include <cstdio>
#include <filesystem>

#include <weft/graph/artifact.hpp>

#include "artifact_seeds.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: write_artifact_seeds DIR\n");
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    for (const weft_fuzz::SeedModule& seed : weft_fuzz::artifact_seed_modules()) {
        const std::filesystem::path path = std::filesystem::path(argv[1]) / (seed.name + ".weft");
        weft::graph::save(seed.module, path.string());
        std::printf("%s: %ju bytes\n", path.c_str(), std::uintmax_t(std::filesystem::file_size(path)));
    }
    return 0;
}
