// The kernel cache's level on disk (runtime/kernel_cache.hpp): compile_llvm_or_load.
//
// One file per kernel, <directory>/<16 hex digits>.weftk, named by a hash of its key and
// holding the whole key, so that a hash collision, a truncated or a foreign file is a miss,
// never a wrong kernel:
//   "weft-kernel\n", then four length-prefixed byte strings (runtime/bytes.hpp): the key, the
//   object's symbol, the object code, the optimized LLVM IR (empty since the IR text is made
//   on request: a loaded kernel makes it from its program); then the compile time (a double).
// The key is this build of weft's LLVM backend (the compile times of its two translation
// units: a rebuilt weft never loads another build's code), the LLVM version, the kernel
// cache's own key as text (name, arguments, fast_math, target with CPU and features) and the
// printed program with the structural hash of its variables' bindings. Files are written to
// a temporary name and renamed, so concurrent processes see whole files or none; a
// directory that cannot be written or read costs the compile, never an error.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include <llvm/Config/llvm-config.h>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/codegen/llvm/impl/compile.hpp"
#include "weft/codegen/llvm/impl/emit_kernel.hpp"
#include "weft/ir/equality.hpp"
#include "weft/ir/printer.hpp"
#include "weft/runtime/bytes.hpp"
#include "weft/runtime/kernel_cache.hpp"

namespace weft::codegen::detail {

inline constexpr char kDiskMagic[] = "weft-kernel\n";


struct DiskKernel {
    std::string key, symbol, object, ir;
    double compile_ms = 0;
};

inline std::string disk_key(const ir::PrimFunc& f, const Target& target) {
    std::ostringstream key;
    key << "weft LLVM backend built " << __DATE__ << " " << __TIME__ << " / " << emitter_build_stamp() << "; LLVM "
        << LLVM_VERSION_STRING << "\n"
        << ::weft::detail::kernel_description(f, target) << "\n"
        << "bindings " << ir::structural_hash(::weft::detail::kernel_structure(f)) << "\n"
        << f;
    return key.str();
}

// A file name from a hash of the key (the file holds the whole key).
inline std::string disk_file_name(const std::string& key) {
    return ::weft::detail::hex64(::weft::detail::fnv1a64(key)) + ".weftk";
}

// The kernel stored under `key` in `directory`, if a whole file with exactly that key is there.
// A file larger than max_bytes, or one that is not a regular file (a FIFO would block the
// read for ever), is a miss without being read (kMaxDiskKernelBytes, codegen_llvm.hpp).
inline std::optional<DiskKernel> read_disk_kernel(const std::filesystem::path& directory, const std::string& key,
                                                  int64_t max_bytes = kMaxDiskKernelBytes) {
    const std::filesystem::path path = directory / disk_file_name(key);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;  // read_file_limited reads FIFOs
    std::string bytes;
    try {
        bytes = ::weft::detail::read_file_limited(path.string(), max_bytes, "kernel cache", "kMaxDiskKernelBytes");
    } catch (const ::weft::Error&) {
        return std::nullopt;
    }
    const std::string_view magic = kDiskMagic;
    if (bytes.compare(0, magic.size(), magic) != 0) return std::nullopt;
    ::weft::detail::ByteReader in(std::string_view(bytes).substr(magic.size()));
    auto stored_key = in.bytes(), symbol = in.bytes(), object = in.bytes(), ir = in.bytes();
    auto ms = in.pod<double>();
    if (!ms || !in.done() || *stored_key != key || symbol->empty() || object->empty()) return std::nullopt;
    return DiskKernel{std::string(*stored_key), std::string(*symbol), std::string(*object), std::string(*ir), *ms};
}

// Stores k; any failure (no directory, no space, no permission) leaves no file behind.
inline void write_disk_kernel(const std::filesystem::path& directory, const DiskKernel& k) {
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    ::weft::detail::ByteWriter out;
    out.out() = kDiskMagic;
    out.str(k.key);
    out.str(k.symbol);
    out.str(k.object);
    out.str(k.ir);
    out.pod(k.compile_ms);
    // (A directory that cannot be written only costs the next process the compile.)
    ::weft::detail::write_file_replacing(directory / disk_file_name(k.key), out.out());
}

}  // namespace weft::codegen::detail

namespace weft::codegen {

std::shared_ptr<const KernelModule> compile_llvm_or_load(const ir::PrimFunc& f, const Target& requested) {
    const std::string directory = KernelCache::global().disk_directory();
    if (directory.empty()) return compile_llvm(f, requested);
    const Target target = requested.is_cpu() && requested.triple.empty() ? Target::host() : requested;
    const std::string key = detail::disk_key(f, target);
    if (auto stored = detail::read_disk_kernel(directory, key)) {
        try {
            // (Files store no IR text: the module makes it from f when asked, as compile_llvm's do.)
            detail::IRSource ir = stored->ir.empty() ? detail::ir_source_of(f, target, stored->symbol)
                                                     : detail::ir_text(std::move(stored->ir));
            auto module = detail::load_object({stored->symbol, stored->object}, f.name, target, std::move(ir),
                                              stored->compile_ms);
            KernelCache::global().count_disk_hit();
            return module;
        } catch (const ::weft::Error&) {
            // An object this process cannot link (a damaged file that kept its key): compile.
        }
    }
    auto module = compile_llvm(f, target);
    ObjectCode object = module->object_code();
    if (!object.bytes.empty())
        detail::write_disk_kernel(directory, {key, object.symbol, object.bytes, {}, module->compile_ms()});
    return module;
}

}  // namespace weft::codegen
