// Config and ConfigSpace (schedule/config.hpp): a template's knobs answer their defaults
// unless set, a recording config collects the space, points enumerate by index in mixed
// radix and round-trip through JSON, and a value outside a knob's candidates is an error.
#include <doctest/doctest.h>

#include <limits>
#include <set>

#include "weft/ir/error.hpp"
#include "weft/schedule/config.hpp"

using namespace weft;

namespace {

// A stand-in template: three knobs, one of them asked only on one branch.
int64_t toy_template(const Config& c) {
    int64_t tile = c.define("toy.tile", {1, 2, 4, 8}, 4);
    bool unroll = c.define_bool("toy.unroll", true);
    int64_t order = unroll ? c.define("toy.order", {0, 1, 2}, 1) : 0;
    return tile * 100 + (unroll ? 10 : 0) + order;
}

}  // namespace

TEST_CASE("an empty config answers every knob's default") {
    CHECK(toy_template(Config{}) == 411);
    Config c;
    c.set("toy.tile", 2).set("toy.order", 2);
    CHECK(toy_template(c) == 212);
    c.set("toy.unroll", 0);
    CHECK(toy_template(c) == 200);
}

TEST_CASE("a default outside the candidates joins them, and a set value outside them is an error") {
    Config c;
    CHECK(c.define("k", {2, 4}, 3) == 3);
    ConfigSpace space;
    Config::recording(&space).define("k", {4, 2}, 3);
    REQUIRE(space.knobs().size() == 1);
    CHECK(space.knobs()[0].candidates == std::vector<int64_t>{2, 3, 4});
    CHECK(space.knobs()[0].str() == "k in {2, 3*, 4}");
    c.set("k", 5);
    CHECK_THROWS_WITH_AS(c.define("k", {2, 4}, 3), doctest::Contains("schedule knob 'k' is set to 5"), Error);
    CHECK_THROWS_AS(Config{}.define("empty", {}, 1), Error);
}

TEST_CASE("a recording config collects the knobs a template asks, once each, in order") {
    ConfigSpace space;
    CHECK(toy_template(Config::recording(&space)) == 411);
    toy_template(Config::recording(&space));  // asked again with the same choices: no change
    REQUIRE(space.knobs().size() == 3);
    CHECK(space.knobs()[0].name == "toy.tile");
    CHECK(space.knobs()[1].name == "toy.unroll");
    CHECK(space.knobs()[2].name == "toy.order");
    CHECK(space.size() == 4 * 2 * 3);
    CHECK(space.str() == "toy.tile in {1, 2, 4*, 8}\ntoy.unroll in {0, 1*}\ntoy.order in {0, 1*, 2}\n24 points\n");
    // The same knob with other choices is a template bug.
    CHECK_THROWS_WITH_AS(Config::recording(&space).define("toy.tile", {1, 2}, 2),
                         doctest::Contains("asked twice with different choices"), Error);
}

TEST_CASE("points enumerate the space in mixed radix and index_of inverts at") {
    ConfigSpace space;
    toy_template(Config::recording(&space));
    std::set<std::string> seen;
    for (uint64_t i = 0; i < space.size(); ++i) {
        Config c = space.at(i);
        CHECK(c.values().size() == 3);
        CHECK(space.index_of(c) == i);
        seen.insert(c.str());
    }
    CHECK(seen.size() == space.size());
    CHECK(space.at(0).str() == "{toy.order: 0, toy.tile: 1, toy.unroll: 0}");
    CHECK(space.at(1).get("toy.tile") == 2);  // knob 0 varies fastest
    CHECK(space.index_of(Config{}) == space.index_of(space.defaults()));
    CHECK(space.at(space.index_of(Config{})) == space.defaults());
    CHECK_THROWS_AS(space.at(space.size()), Error);
    Config stranger;
    stranger.set("other.knob", 1);
    CHECK_THROWS_WITH_AS(space.index_of(stranger), doctest::Contains("which this space lacks"), Error);
    // Positions: each knob's candidate position, knob 0 first, and back.
    for (uint64_t i = 0; i < space.size(); ++i) {
        const std::vector<uint64_t> p = space.positions(i);
        REQUIRE(p.size() == space.knobs().size());
        for (size_t k = 0; k < p.size(); ++k)
            CHECK(space.knobs()[k].candidates[p[k]] == *space.at(i).get(space.knobs()[k].name));
        CHECK(space.index_of_positions(p) == i);
    }
    CHECK_THROWS_AS(space.positions(space.size()), Error);
    CHECK_THROWS_WITH_AS(space.index_of_positions({0}), doctest::Contains("positions for"), Error);
    std::vector<uint64_t> past = space.positions(0);
    past[0] = space.knobs()[0].candidates.size();
    CHECK_THROWS_WITH_AS(space.index_of_positions(past), doctest::Contains("candidates, position"), Error);
}

TEST_CASE("a space's size saturates instead of overflowing") {
    ConfigSpace space;
    Config rec = Config::recording(&space);
    std::vector<int64_t> many(1000);
    for (int64_t i = 0; i < 1000; ++i) many[size_t(i)] = i;
    for (int k = 0; k < 10; ++k) rec.define("k" + std::to_string(k), many, 0);  // 1000^10 > 2^64
    CHECK(space.size() == std::numeric_limits<uint64_t>::max());
}

TEST_CASE("configs and spaces round-trip through JSON, and malformed JSON is an error") {
    ConfigSpace space;
    toy_template(Config::recording(&space));
    Config c = space.at(17);
    CHECK(Config::from_json(c.to_json()) == c);
    CHECK(Config::from_json("{}") == Config{});
    ConfigSpace back = ConfigSpace::from_json(space.to_json());
    CHECK(back.str() == space.str());
    CHECK_THROWS_WITH_AS(Config::from_json("[1, 2]"), doctest::Contains("expected an object"), Error);
    CHECK_THROWS_WITH_AS(Config::from_json("{\"a\": 1.5}"), doctest::Contains("must be an integer"), Error);
    CHECK_THROWS_WITH_AS(Config::from_json("{\"a\": "), doctest::Contains("not JSON"), Error);
    CHECK_THROWS_AS(ConfigSpace::from_json("{\"format\": \"weft.config_space\", \"version\": 2, \"knobs\": []}"), Error);
    CHECK_THROWS_AS(ConfigSpace::from_json(
                        "{\"format\": \"weft.config_space\", \"version\": 1, \"knobs\": [{\"name\": \"a\", "
                        "\"candidates\": [1], \"default\": 2}]}"),
                    Error);
}

TEST_CASE("candidate helpers") {
    CHECK(knob_divisors(12, 6) == std::vector<int64_t>{1, 2, 3, 4, 6});
    CHECK(knob_powers_of_two(2, 20) == std::vector<int64_t>{2, 4, 8, 16});
    CHECK(knob_multiples(16, 64) == std::vector<int64_t>{16, 32, 48, 64});
}
