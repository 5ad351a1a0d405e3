// Typed option adapters: a command-line option bound straight to a Settings
// field, so that each default is written once, in the Settings struct's
// member initializer, and --help shows it from the field's value.
//
// An adapter parses and checks the option's text when the option is given,
// during the command line's parse; a bad value is the command line's error,
// worded as rig's other errors ("rig: error: invalid argument: --duration
// must be positive, got '0s'", exit 2). A field whose option is not given keeps its default.
// The fields must outlive the parse (they live in the command's state, made
// once per process). Header-only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "rig/error.hpp"
#include "rig/units.hpp"

namespace rig::cli {

// A duration as the command line writes it, for a shown default: the
// largest of m, s, ms, us, ns that holds it whole ("10m", "2s", "1ms"); "0s".
inline std::string duration_option_text(Nanos d) {
  if (d == Nanos(0)) return "0s";
  const std::pair<int64_t, const char*> units[] = {
      {60'000'000'000, "m"}, {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
  for (const auto& [ns, unit] : units)
    if (d.count() % ns == 0) return std::to_string(d.count() / ns) + unit;
  return std::to_string(d.count()) + "ns";
}

// An option whose text `parse` (text -> Result<T>) turns into `field`. The
// error is the command line's error as report_error words it
// ("invalid argument: --duration must be positive, got '0s'").
template <class T, class Parse>
CLI::Option* add_parsed_option(CLI::App* sub, const std::string& name, T& field,
                               const std::string& help, Parse parse) {
  return sub->add_option_function<std::string>(
      name,
      [&field, parse](const std::string& text) {
        Result<T> value = parse(text);
        if (!value) throw CLI::ValidationError(value.error().to_string());
        field = std::move(*value);
      },
      help);
}

// What a duration option accepts beside a valid duration.
enum class DurationRule {
  positive,     // "--duration must be positive, got '0s'"
  nonnegative,  // "--warmup-max must not be negative"
  zero_or_unit  // as nonnegative, and a bare "0" ("--idle 0": not measured)
};

// A duration with a unit ("2s", "500ms"), checked by `rule`; a text that is
// no duration is "--duration: <why>".
inline Result<Nanos> parse_duration_option(const std::string& option, const std::string& text,
                                           DurationRule rule) {
  auto d = rule == DurationRule::zero_or_unit && text == "0" ? Result<Nanos>(Nanos(0))
                                                             : parse_duration(text);
  if (!d) return fail(ErrorCode::invalid_argument, option + ": " + d.error().message);
  if (rule == DurationRule::positive && *d <= Nanos(0))
    return fail(ErrorCode::invalid_argument, option + " must be positive, got '" + text + "'");
  if (*d < Nanos(0)) return fail(ErrorCode::invalid_argument, option + " must not be negative");
  return *d;
}

// A duration option bound to `field`, its default shown from the field.
inline CLI::Option* add_duration_option(CLI::App* sub, const std::string& name, Nanos& field,
                                        const std::string& help,
                                        DurationRule rule = DurationRule::positive) {
  return add_parsed_option(sub, name, field, help,
                           [name, rule](const std::string& text) {
                             return parse_duration_option(name, text, rule);
                           })
      ->default_str(duration_option_text(field));
}

// An option of named choices bound to an enum field: the text must be one of
// `choices`' names; the default shown is the field's name.
template <class Enum>
CLI::Option* add_choice_option(CLI::App* sub, const std::string& name, Enum& field,
                               const std::string& help,
                               std::vector<std::pair<std::string, Enum>> choices) {
  std::vector<std::string> names;
  std::string shown;
  for (const auto& [text, value] : choices) {
    names.push_back(text);
    if (value == field) shown = text;
  }
  return sub
      ->add_option_function<std::string>(
          name,
          [&field, choices](const std::string& text) {
            for (const auto& [choice, value] : choices)
              if (choice == text) field = value;
          },
          help)
      ->default_str(shown)
      ->check(CLI::IsMember(names));
}

// --depth bound to a depth field (0 there: "the device's queue depth"): a
// given depth is >= 1. No default is shown: the help says what it is.
inline CLI::Option* add_depth_option(CLI::App* sub, uint32_t& depth, const std::string& help) {
  return sub->add_option_function<uint32_t>(
      "--depth",
      [&depth](const uint32_t& value) {
        if (value == 0)
          throw CLI::ValidationError(
              Error{ErrorCode::invalid_argument, "--depth must be >= 1, got 0"}.to_string());
        depth = value;
      },
      help);
}

// A flag that sets `field` to false ("--no-monitor" of `monitor.enabled`).
inline CLI::Option* add_off_flag(CLI::App* sub, const std::string& name, bool& field,
                                 const std::string& help) {
  return sub->add_flag_callback(
      name, [&field] { field = false; }, help);
}

}  // namespace rig::cli
