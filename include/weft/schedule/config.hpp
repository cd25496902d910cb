// The choices of a schedule template, for people and tuners: a template (topi's GEMM, a
// user's function) asks its Config for each tunable value by name, with the candidates it
// allows and the value it would pick by hand. A Config that does not set a knob answers that
// default, so `Config{}` gives the hand-written schedule; one that sets it answers its
// value. A recording Config also collects every knob asked into a ConfigSpace, the space a
// tuner searches: enumerable by index, printable, and serializable to JSON.
//
//   int64_t mr = config.define("gemm.mr", {1, 2, 4, 6, 8, 12}, 6);  // a template's line
//
//   ConfigSpace space;                        // the space of one workload on one target
//   run_template(Config::recording(&space));  // every knob at its default, recorded
//   Config c = space.at(17);                  // the 18th point, in mixed radix
//   run_template(c);                          // the schedule of that point
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weft {

class ConfigSpace;

// One tunable choice: its name, the values it may take (sorted, distinct) and the one the
// template picks by hand (among them).
struct Knob {
    std::string name;
    std::vector<int64_t> candidates;
    int64_t default_value = 0;

    // "gemm.mr in {1, 2, 4, 6*, 8, 12}" (* marks the default).
    std::string str() const;
};

// Values of some knobs of a template; every other knob is at its default.
class Config {
public:
    Config() = default;
    // A Config that answers every knob's default and adds each knob asked to *space.
    static Config recording(ConfigSpace* space);
    // This config's values, also recording each knob asked into *space (a build that applies
    // a config and learns its space in the same pass).
    Config recording_into(ConfigSpace* space) const;

    // For templates: the value of knob `name`: this Config's, else `default_value`.
    // `default_value` joins `candidates` when it is not among them. Throws weft::Error when
    // this Config sets the knob to a value outside `candidates` (a config meant for another
    // workload or target), or when `candidates` is empty.
    int64_t define(const std::string& name, std::vector<int64_t> candidates, int64_t default_value) const;
    // A yes/no knob (candidates 0 and 1).
    bool define_bool(const std::string& name, bool default_value) const;

    // Sets knob `name` (checked against the template's candidates when it asks).
    Config& set(const std::string& name, int64_t value);
    std::optional<int64_t> get(const std::string& name) const;
    const std::map<std::string, int64_t>& values() const { return values_; }
    bool empty() const { return values_.empty(); }

    // "{gemm.mr: 6, gemm.nr: 64}"; "{}" for the defaults.
    std::string str() const;
    // {"gemm.mr": 6, "gemm.nr": 64}; from_json throws weft::Error on anything else.
    std::string to_json() const;
    static Config from_json(const std::string& json);

    bool operator==(const Config& other) const { return values_ == other.values_; }

private:
    std::map<std::string, int64_t> values_;
    ConfigSpace* recording_ = nullptr;
};

// The knobs of a template for one workload and target, in the order the template asked them.
class ConfigSpace {
public:
    // Adds a knob; asking the same knob again (a template that schedules two stages alike)
    // must give the same candidates and default (else weft::Error).
    void add(Knob knob);
    const std::vector<Knob>& knobs() const { return knobs_; }
    const Knob* find(const std::string& name) const;
    // The number of points (the product of the knobs' candidate counts; saturates at
    // UINT64_MAX). 1 for a space without knobs.
    uint64_t size() const;
    // Point `index` (< size()): knob 0's candidate index varies fastest. Sets every knob.
    Config at(uint64_t index) const;
    // The index of `config` (knobs it does not set at their defaults); weft::Error when it
    // sets a knob to a value outside the candidates, or sets a knob the space lacks.
    uint64_t index_of(const Config& config) const;
    // Point `index` as each knob's position among its candidates (what tuners breed and
    // mutate), and back.
    std::vector<uint64_t> positions(uint64_t index) const;
    uint64_t index_of_positions(const std::vector<uint64_t>& positions) const;
    // The point of every knob at its default.
    Config defaults() const;

    // One line per knob (Knob::str), then the size.
    std::string str() const;
    std::string to_json() const;
    static ConfigSpace from_json(const std::string& json);

private:
    std::vector<Knob> knobs_;
};

// Candidate lists for templates.
// The divisors of n, at most max_value (n itself included when it fits).
std::vector<int64_t> knob_divisors(int64_t n, int64_t max_value);
// lo, 2 lo, 4 lo, ... up to hi.
std::vector<int64_t> knob_powers_of_two(int64_t lo, int64_t hi);
// step, 2 step, 3 step, ... up to hi.
std::vector<int64_t> knob_multiples(int64_t step, int64_t hi);

}  // namespace weft
