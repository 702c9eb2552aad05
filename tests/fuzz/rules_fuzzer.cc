// libFuzzer target: arbitrary text through the rule-file parser, and what it accepts through the
// printer and back.
//
// parse_rules may only throw graphsub::Error. A rule it accepts must print in canonical layout and
// parse back to the same text (printer.h: parse_rules(print_rule(r)) == {r}); a difference aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/log.h"
#include "rules/parser.h"
#include "rules/printer.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphsub::set_log_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<graphsub::rules::Rule> rules;
  try {
    rules = graphsub::rules::parse_rules(text, "fuzz.rules");
  } catch (const graphsub::Error&) {
    return 0;
  }
  const std::string printed = graphsub::rules::print_rules(rules);
  std::string reprinted;
  try {
    reprinted = graphsub::rules::print_rules(graphsub::rules::parse_rules(printed, "printed.rules"));
  } catch (const graphsub::Error& error) {
    std::fprintf(stderr, "the printed rules do not parse: %s\n%s", error.what(), printed.c_str());
    std::abort();
  }
  if (reprinted != printed) {
    std::fprintf(stderr, "the printed rules print differently once parsed:\n%s\n---\n%s", printed.c_str(),
                 reprinted.c_str());
    std::abort();
  }
  return 0;
}
