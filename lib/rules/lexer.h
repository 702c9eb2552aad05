// Splits one line of a rule file into tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphsub::rules {

/// One token of the rule language.
struct Token {
  enum class Kind { kIdent, kVariable, kInt, kFloat, kString, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  ///< Identifier, variable name without '?', string contents, or the symbol.
  int64_t int_value = 0;
  double float_value = 0;
};

/// The tokens of `line` up to a '#' outside a string, ending with a kEnd token. Throws
/// graphsub::Error ("file:line: ...") on a character the language does not use.
std::vector<Token> tokenize(const std::string& line, const std::string& where);

}  // namespace graphsub::rules
