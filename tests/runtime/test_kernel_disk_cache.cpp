// The kernel cache's level on disk: a CPU kernel compiled once is stored in the directory and
// loaded from it (no compile) when the memory cache misses, with its IR and assembly; a file
// that is damaged, truncated or holds another kernel is a miss, never a wrong kernel; a
// directory that cannot be written costs the compile, nothing else.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <weft/codegen/llvm/codegen_llvm.hpp>
#include <weft/weft.hpp>

using namespace weft;
namespace fs = std::filesystem;

namespace {

// A fresh directory for the test's kernels, set as the disk cache for the test's lifetime;
// the memory cache starts empty so every build goes to the disk level.
struct DiskCacheDir {
    fs::path path;
    DiskCacheDir() {
        path = fs::temp_directory_path() / ("weft_disk_cache_" + std::to_string(std::random_device{}()));
        fs::remove_all(path);
        KernelCache::global().clear();
        KernelCache::global().set_disk_directory(path.string());
    }
    ~DiskCacheDir() {
        KernelCache::global().set_disk_directory("");
        KernelCache::global().clear();
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::vector<fs::path> files() const {
        std::vector<fs::path> out;
        if (fs::exists(path))
            for (auto& e : fs::directory_iterator(path)) out.push_back(e.path());
        return out;
    }
};

// y = scale * x + shift over n floats, vectorized by 16.
Kernel affine_kernel(int64_t n, float scale, float shift, bool fast_math = false) {
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = compute({n}, [&](Expr i) { return X(i) * scale + shift; }, "y");
    Schedule s = create_schedule(Y);
    auto [o, lanes] = s[Y].split(Y.axis(0), 16);
    s[Y].vectorize(lanes);
    return build(s, {X, Y}, Target::host(), {.name = "affine", .fast_math = fast_math});
}

void check_affine(const Kernel& k, int64_t n, float scale, float shift) {
    auto x = Buffer<float>::random({n}, -3, 3, 5);
    Buffer<float> y({n});
    k(x, y);
    for (int64_t i = 0; i < n; ++i) {  // the kernel may contract into an FMA
        const double want = double(x(i)) * scale + shift;
        REQUIRE(std::abs(y(i) - want) <= 1e-6 * (1 + std::abs(want)));
    }
}

}  // namespace

TEST_CASE("a kernel stored in the disk cache is loaded, not compiled, once the memory cache misses") {
    DiskCacheDir dir;
    const uint64_t compiles = codegen::compile_llvm_count();
    Kernel first = affine_kernel(1000, 1.5f, -0.25f);
    CHECK(codegen::compile_llvm_count() == compiles + 1);
    REQUIRE(dir.files().size() == 1);
    CHECK(dir.files()[0].extension() == ".weftk");
    check_affine(first, 1000, 1.5f, -0.25f);

    KernelCache::global().clear();  // as a new process would start
    Kernel second = affine_kernel(1000, 1.5f, -0.25f);
    CHECK(codegen::compile_llvm_count() == compiles + 1);  // nothing compiled
    CHECK(KernelCache::global().disk_hits() == 1);
    check_affine(second, 1000, 1.5f, -0.25f);
    // The loaded kernel still shows its program and code.
    CHECK(second.llvm_ir() == first.llvm_ir());
    CHECK(second.assembly().find("vfmadd") != std::string::npos);
    CHECK(second.module()->object_code().bytes == first.module()->object_code().bytes);
}

TEST_CASE("different programs and options are different files in the disk cache") {
    DiskCacheDir dir;
    const uint64_t compiles = codegen::compile_llvm_count();
    Kernel a = affine_kernel(1000, 1.5f, -0.25f);
    Kernel b = affine_kernel(1000, 2.5f, -0.25f);         // another constant
    Kernel c = affine_kernel(1001, 1.5f, -0.25f);         // another shape
    Kernel d = affine_kernel(1000, 1.5f, -0.25f, true);   // fast_math
    CHECK(codegen::compile_llvm_count() == compiles + 4);
    CHECK(dir.files().size() == 4);
    KernelCache::global().clear();
    check_affine(affine_kernel(1000, 2.5f, -0.25f), 1000, 2.5f, -0.25f);
    check_affine(affine_kernel(1001, 1.5f, -0.25f), 1001, 1.5f, -0.25f);
    CHECK(codegen::compile_llvm_count() == compiles + 4);
    CHECK(KernelCache::global().disk_hits() == 2);
}

TEST_CASE("a damaged, truncated or foreign file in the disk cache is a miss, never a wrong kernel") {
    DiskCacheDir dir;
    Kernel a = affine_kernel(512, 1.5f, -0.25f);
    REQUIRE(dir.files().size() == 1);
    const fs::path a_file = dir.files()[0];
    std::string a_bytes;
    {
        std::ifstream in(a_file, std::ios::binary);
        a_bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    Kernel b = affine_kernel(512, -3.0f, 7.0f);
    REQUIRE(dir.files().size() == 2);
    const fs::path b_file = dir.files()[0] == a_file ? dir.files()[1] : dir.files()[0];

    auto rebuild_b_compiles = [&] {
        KernelCache::global().clear();
        const uint64_t compiles = codegen::compile_llvm_count();
        Kernel again = affine_kernel(512, -3.0f, 7.0f);
        check_affine(again, 512, -3.0f, 7.0f);
        return codegen::compile_llvm_count() == compiles + 1;
    };
    // Kernel a's whole, valid file under b's name: its key is not b's.
    fs::copy_file(a_file, b_file, fs::copy_options::overwrite_existing);
    CHECK(rebuild_b_compiles());
    // Truncated in the middle of the object code, then garbage, then an empty file.
    for (const std::string& bytes : {a_bytes.substr(0, a_bytes.size() / 2), std::string(4096, '\x5a'), std::string()}) {
        std::ofstream(b_file, std::ios::binary | std::ios::trunc) << bytes;
        CHECK(rebuild_b_compiles());
    }
    // Each miss stored b again: the next process loads it.
    KernelCache::global().clear();
    const uint64_t compiles = codegen::compile_llvm_count();
    check_affine(affine_kernel(512, -3.0f, 7.0f), 512, -3.0f, 7.0f);
    CHECK(codegen::compile_llvm_count() == compiles);
}

TEST_CASE("a FIFO or an oversized file under a kernel's name is a miss, not read") {
    DiskCacheDir dir;
    affine_kernel(256, 2.0f, 1.0f);
    REQUIRE(dir.files().size() == 1);
    const fs::path file = dir.files()[0];
    auto rebuild_compiles = [&] {
        KernelCache::global().clear();
        const uint64_t compiles = codegen::compile_llvm_count();
        check_affine(affine_kernel(256, 2.0f, 1.0f), 256, 2.0f, 1.0f);
        return codegen::compile_llvm_count() == compiles + 1;
    };
    // Opening a FIFO without a writer for reading blocks: the read must not start.
    fs::remove(file);
    REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
    CHECK(rebuild_compiles());
    CHECK(fs::is_regular_file(file));  // the compile stored the kernel over it
    // A sparse file past the limit (no disk used): refused by its size.
    fs::resize_file(file, uint64_t(codegen::kMaxDiskKernelBytes) + 1);
    CHECK(rebuild_compiles());
}

TEST_CASE("a disk cache directory that cannot be written costs the compile and nothing else") {
    // A path below a regular file can be neither created nor written.
    fs::path file = fs::temp_directory_path() / ("weft_not_a_dir_" + std::to_string(std::random_device{}()));
    std::ofstream(file) << "x";
    KernelCache::global().clear();
    KernelCache::global().set_disk_directory((file / "cache").string());
    CHECK(KernelCache::global().disk_directory() == (file / "cache").string());
    const uint64_t compiles = codegen::compile_llvm_count();
    check_affine(affine_kernel(300, 0.5f, 2.0f), 300, 0.5f, 2.0f);
    KernelCache::global().clear();
    check_affine(affine_kernel(300, 0.5f, 2.0f), 300, 0.5f, 2.0f);
    CHECK(codegen::compile_llvm_count() == compiles + 2);
    KernelCache::global().set_disk_directory("");
    KernelCache::global().clear();
    fs::remove(file);
}
