// Recursive-descent parsing of expressions and node lines over one line's tokens.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rules/expr.h"
#include "rules/lexer.h"
#include "rules/rule.h"

namespace graphsub::rules {

/// A line holds at most this many operators, brackets and calls. Parsing, printing, checking and
/// freeing an expression recurse once per level of its tree, so a hostile line (a million `(` or
/// `+ 1`) would overflow the stack; shipped rules use a few dozen.
constexpr int kMaxOperatorsPerLine = 1000;

/// A cursor over one line's tokens; every method throws graphsub::Error ("file:line: ...").
class TokenStream {
 public:
  TokenStream(std::vector<Token> tokens, std::string where)
      : tokens_(std::move(tokens)), where_(std::move(where)) {}

  const Token& peek(std::size_t ahead = 0) const;
  bool at_end() const { return peek().kind == Token::Kind::kEnd; }
  /// Consumes the symbol when it is next.
  bool accept(const char* symbol);
  void expect(const char* symbol);
  std::string expect_ident(const char* what);
  /// A value name: an identifier, with "..." appended for a value list (`xs...`).
  std::string name(const char* what);
  void expect_end();

  /// `comparison := sum [(== != < <= > >=) sum]`, the whole expression grammar of rules/README.md.
  Expr expression();
  /// `OUT, ... = Op(IN, ...) [@v, name = EXPR, ...]` (the op name is checked by the caller).
  PatternNode node(std::string& op_name);

  [[noreturn]] void fail(const std::string& message) const;

 private:
  bool is_symbol(const char* symbol, std::size_t ahead = 0) const;
  /// Counts one operator, bracket or call against kMaxOperatorsPerLine; throws past it.
  void count_operator();
  Expr sum();
  Expr product();
  Expr unary();
  Expr postfix(Expr base);
  Expr primary();
  Expr list();
  void attributes(PatternNode& node);

  std::vector<Token> tokens_;
  std::string where_;
  std::size_t pos_ = 0;
  int operators_ = 0;
};

}  // namespace graphsub::rules
