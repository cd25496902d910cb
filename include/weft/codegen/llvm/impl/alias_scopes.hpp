// One alias scope per buffer, as Halide does: every load and store of buffer B carries
// !alias.scope {B} and !noalias {all other buffers}, so LLVM knows that distinct buffers
// never overlap (weft's calling convention promises it) and can vectorize and reorder.
#pragma once
#include <algorithm>
#include <unordered_map>
#include <vector>

#include <llvm/IR/Instruction.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>

#include "weft/ir/visitor.hpp"

namespace weft::codegen::detail {

class AliasScopes {
public:
    // Finds every buffer `body` loads or stores. A handle bound by `let h2 = h1` names the
    // same memory as h1 and shares its scope.
    AliasScopes(llvm::LLVMContext& ctx, const ir::Stmt& body, const std::string& kernel_name) {
        std::vector<const ir::VarNode*> accessed;
        ir::post_order_visit(body, [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::LetStmt) {
                auto* let = static_cast<const ir::LetStmt*>(n);
                if (auto* same = let->value.as<ir::VarNode>(); same && let->var.type().is_handle())
                    alias_of_[let->var.node()] = same;
            } else if (n->kind == ir::NodeKind::Load) {
                accessed.push_back(static_cast<const ir::Load*>(n)->buffer.node());
            } else if (n->kind == ir::NodeKind::Store) {
                accessed.push_back(static_cast<const ir::Store*>(n)->buffer.node());
            }
        });
        // Resolved only now: the visit sees a let's body before the let itself.
        std::vector<const ir::VarNode*> resolved;
        for (auto* v : accessed) {
            auto* root = root_of(v);
            if (std::find(resolved.begin(), resolved.end(), root) == resolved.end()) resolved.push_back(root);
        }
        llvm::MDBuilder md(ctx);
        llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("weft." + kernel_name);
        std::vector<llvm::Metadata*> scopes;
        for (auto* r : resolved) scopes.push_back(md.createAnonymousAliasScope(domain, r->name));
        for (size_t i = 0; i < resolved.size(); ++i) {
            std::vector<llvm::Metadata*> others;
            for (size_t j = 0; j < scopes.size(); ++j)
                if (j != i) others.push_back(scopes[j]);
            metadata_[resolved[i]] = {llvm::MDNode::get(ctx, {scopes[i]}), llvm::MDNode::get(ctx, others)};
        }
    }

    // Tags a load, store, gather or scatter of `buffer`.
    void annotate(llvm::Instruction* access, const ir::VarNode* buffer) const {
        auto it = metadata_.find(root_of(buffer));
        if (it == metadata_.end()) return;
        access->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.scope);
        if (it->second.noalias->getNumOperands() > 0)
            access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.noalias);
    }

private:
    const ir::VarNode* root_of(const ir::VarNode* v) const {
        for (auto it = alias_of_.find(v); it != alias_of_.end(); it = alias_of_.find(v)) v = it->second;
        return v;
    }

    struct Tags {
        llvm::MDNode* scope;
        llvm::MDNode* noalias;
    };
    std::unordered_map<const ir::VarNode*, const ir::VarNode*> alias_of_;
    std::unordered_map<const ir::VarNode*, Tags> metadata_;
};

}  // namespace weft::codegen::detail
