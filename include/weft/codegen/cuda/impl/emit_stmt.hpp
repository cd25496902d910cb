// CodeGenCUDA: statements (see codegen.hpp).
#pragma once
#include <string>
#include <vector>

#include "weft/codegen/cuda/impl/codegen.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::codegen::cuda_detail {

inline std::ostream& CodeGenCUDA::line() {
    for (int i = 0; i < indent_; ++i) body_ << "  ";
    return body_;
}

inline void CodeGenCUDA::emit_stmt(const Stmt& s) {
    switch (s.kind()) {
        case ir::NodeKind::Seq:
            for (auto& c : s.as<ir::Seq>()->stmts) emit_stmt(c);
            return;
        case ir::NodeKind::LetStmt: {
            auto* op = s.as<ir::LetStmt>();
            DataType t = op->value.type();
            if (t.lanes > 1) {
                hoist_vector_loads(op->value);
                std::vector<std::string> lanes;
                for (int l = 0; l < t.lanes; ++l) lanes.push_back(expr(op->value, l));
                std::string name = bind_name(op->var);
                vector_vars_.insert(op->var.get());
                line() << type_name(t.element_of()) << " " << name << "[" << t.lanes << "] = {";
                for (int l = 0; l < t.lanes; ++l) body_ << (l ? ", " : "") << lanes[size_t(l)];
                body_ << "};\n";
                hoisted_.clear();
                hoisted_by_address_.clear();
            } else {
                std::string value = expr(op->value);
                bool index_like = t == index_type && !ir::gpu::thread_index_tag(op->value).empty();
                bool no_load = true;
                ir::post_order_visit(op->value, [&](const ir::Object* n) { no_load &= n->kind != ir::NodeKind::Load; });
                std::string tn = (t == index_type && no_load) ? index_type_name() : type_name(t);
                (void)index_like;
                if (nonneg(op->value)) nonneg_.insert(op->var.get());
                std::string name = bind_name(op->var);
                line() << "const " << tn << " " << name << " = " << value << ";\n";
            }
            emit_stmt(op->body);
            return;
        }
        case ir::NodeKind::For: {
            auto* op = s.as<ir::For>();
            WEFT_ICHECK(op->for_kind != ir::ForKind::ThreadBound, "thread-bound loop left for CUDA codegen");
            std::string lo = expr(op->min);
            std::string hi = expr(ir::arith::simplify(op->min + op->extent));
            if (nonneg(op->min)) nonneg_.insert(op->loop_var.get());
            std::string v = bind_name(op->loop_var);
            if (op->for_kind == ir::ForKind::Unrolled) line() << "#pragma unroll\n";
            line() << "for (" << index_type_name() << " " << v << " = " << lo << "; " << v << " < " << hi << "; ++"
                   << v << ") {\n";
            ++indent_;
            emit_stmt(op->body);
            --indent_;
            line() << "}\n";
            return;
        }
        case ir::NodeKind::Store: emit_store(s.as<ir::Store>()); return;
        case ir::NodeKind::Allocate: {
            auto* op = s.as<ir::Allocate>();
            int64_t n = 1, c;
            for (auto& e : op->extents) {
                WEFT_ICHECK(ir::as_const_int(ir::arith::simplify(e), &c), "non-constant GPU allocation");
                n *= c;
            }
            DataType t = op->type.element_of();
            std::string name = bind_name(op->buffer);
            buffer_types_[op->buffer.get()] = t;
            WEFT_CHECK(op->scope == "shared" || op->scope == "local", "CUDA codegen of kernel '", f_.name,
                       "': buffer '", op->buffer.name(), "' in ", op->scope, " memory inside a kernel");
            line() << (op->scope == "shared" ? "__shared__ " : "") << "__align__(16) " << type_name(t) << " " << name
                   << "[" << n * op->type.lanes << "];\n";
            emit_stmt(op->body);
            return;
        }
        case ir::NodeKind::IfThenElse: {
            auto* op = s.as<ir::IfThenElse>();
            line() << "if (" << expr(op->condition) << ") {\n";
            ++indent_;
            emit_stmt(op->then_case);
            --indent_;
            if (op->else_case.defined()) {
                line() << "} else {\n";
                ++indent_;
                emit_stmt(op->else_case);
                --indent_;
            }
            line() << "}\n";
            return;
        }
        case ir::NodeKind::Evaluate: {
            auto* op = s.as<ir::Evaluate>();
            if (ir::gpu::is_syncthreads(s)) {
                line() << "__syncthreads();\n";
                return;
            }
            if (ir::is_const(op->value)) return;
            line() << expr(op->value) << ";\n";
            return;
        }
        case ir::NodeKind::AttrStmt: {
            auto* op = s.as<ir::AttrStmt>();
            if (op->key.rfind("pragma_", 0) == 0) line() << "// " << op->key << " = " << ir::to_string(op->value) << "\n";
            else if (op->key == ir::gpu::double_buffer_write_key) line() << "// double buffer: fetch the next tile\n";
            emit_stmt(op->body);
            return;
        }
        case ir::NodeKind::AssertStmt: {
            auto* op = s.as<ir::AssertStmt>();
            line() << "if (!" << expr(op->condition) << ") __trap();  // " << op->message << "\n";
            emit_stmt(op->body);
            return;
        }
        default: break;
    }
    WEFT_ICHECK(false, "CUDA codegen: unexpected statement ", ir::kind_name(s.kind()));
}

}  // namespace weft::codegen::cuda_detail
