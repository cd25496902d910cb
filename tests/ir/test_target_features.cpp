// Target::has_feature reads Target::features as LLVM does: whole entries, the last one for a
// feature wins (a kernel built for "+amx-tile,...,-amx-tile" must not take AMX's code paths,
// which LLVM would then fail to select).
#include <doctest/doctest.h>

#include "weft/ir/target.hpp"

using namespace weft;

TEST_CASE("Target::has_feature: whole entries, the last one wins") {
    Target t;
    t.features = "+avx512fp16,+amx-tile,+amx-bf16";
    CHECK(t.has_feature("amx-tile"));
    CHECK(t.has_feature("amx-bf16"));
    CHECK_FALSE(t.has_feature("avx512f"));  // "+avx512fp16" is another feature
    CHECK_FALSE(t.has_feature("amx"));
    t.features += ",-amx-tile";
    CHECK_FALSE(t.has_feature("amx-tile"));
    CHECK(t.has_feature("amx-bf16"));
    t.features += ",+amx-tile";
    CHECK(t.has_feature("amx-tile"));
    t.features = "";
    CHECK_FALSE(t.has_feature("amx-tile"));
    t.features = "-avx2,+avx2";
    CHECK(t.has_feature("avx2"));
}
