// A main for a fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput once on each file
// named on the command line (a directory: each file in it, recursively). The normal and the
// sanitizer builds replay tests/fuzz/regressions/ with it, so every input a fuzzer once
// crashed on is checked by every build, compiler and CI run, not only by the fuzz build.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

void collect(const std::filesystem::path& p, std::vector<std::filesystem::path>& files) {
    if (!std::filesystem::is_directory(p)) {
        files.push_back(p);
        return;
    }
    for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::filesystem::path> files;
    // Arguments starting with '-' are libFuzzer's flags (-runs=0): a replay takes and ignores
    // them, so that one command line replays with either build. Read before Initialize, which
    // may edit argv.
    for (int i = 1; i < argc; ++i)
        if (argv[i][0] != '-') collect(argv[i], files);
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    for (const auto& path : files) {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
            return 1;
        }
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replay: %zu inputs, none crashed\n", files.size());
    return 0;
}
