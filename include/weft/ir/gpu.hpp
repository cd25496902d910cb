// The GPU-only pieces of the loop program: a thread's index along a thread axis, the
// launch extents of a kernel, and the block-wide barrier. Lowering for a GPU target
// (lower/impl/gpu_*.hpp) produces them; the CUDA backend (codegen/cuda) prints them.
#pragma once
#include <string>

#include "weft/ir/op.hpp"

namespace weft::ir::gpu {

// Call names and attribute keys.
inline constexpr const char* thread_index_name = "weft.thread_index";  // (tag): int64 index along "threadIdx.x", ...
inline constexpr const char* syncthreads_name = "weft.syncthreads";    // (): __syncthreads()
// AttrStmt key around a kernel's body, one per launched axis; its value is
// launch_extent(tag, extent).
inline constexpr const char* thread_extent_key = "thread_extent";
inline constexpr const char* launch_extent_name = "weft.launch_extent";
// AttrStmt key (lowering-internal) around the realize of a Stage::double_buffer stage.
inline constexpr const char* double_buffer_key = "double_buffer";
// AttrStmt key around a double-buffered fetch: its stores fill the buffer of the NEXT
// iteration of the enclosing loop, so barrier insertion does not order them against this
// iteration's reads.
inline constexpr const char* double_buffer_write_key = "double_buffer_write";

inline bool is_block_tag(const std::string& tag) { return tag.rfind("blockIdx.", 0) == 0; }
inline bool is_thread_tag(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }
inline bool is_vthread_tag(const std::string& tag) { return tag == "vthread" || tag.rfind("vthread.", 0) == 0; }

inline Expr thread_index(const std::string& tag) {
    return Call::make(index_type, thread_index_name, {StringImm::make(tag)}, Call::CallKind::Intrinsic);
}
// The tag of a thread_index call, or empty.
inline std::string thread_index_tag(const Expr& e) {
    auto* c = e.as<Call>();
    if (!c || c->name != thread_index_name || c->args.size() != 1) return {};
    auto* s = c->args[0].as<StringImm>();
    return s ? s->value : std::string();
}
inline Stmt syncthreads() {
    return Evaluate::make(Call::make(i32, syncthreads_name, {}, Call::CallKind::Intrinsic));
}
inline bool is_syncthreads(const Stmt& s) {
    auto* e = s.as<Evaluate>();
    auto* c = e ? e->value.as<Call>() : nullptr;
    return c && c->name == syncthreads_name;
}
inline Expr launch_extent(const std::string& tag, Expr extent) {
    return Call::make(index_type, launch_extent_name, {StringImm::make(tag), std::move(extent)},
                      Call::CallKind::Intrinsic);
}

}  // namespace weft::ir::gpu
