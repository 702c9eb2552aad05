// The expression and node-line grammar of the rule language.
#include "rules/expr_parser.h"

#include <algorithm>

#include "ir/error.h"

namespace graphsub::rules {
namespace {

bool is_comparison(const std::string& symbol) {
  return symbol == "==" || symbol == "!=" || symbol == "<" || symbol == "<=" || symbol == ">" ||
         symbol == ">=";
}

Expr::Kind function_kind(const std::string& name, const std::string& where) {
  if (name == "shape") return Expr::Kind::kShape;
  if (name == "rank") return Expr::Kind::kRank;
  if (name == "weight") return Expr::Kind::kWeight;
  if (name == "value") return Expr::Kind::kValue;
  if (name == "size") return Expr::Kind::kSize;
  if (name == "sizes") return Expr::Kind::kSizes;
  if (name == "dtype") return Expr::Kind::kDtype;
  throw Error(where + ": unknown function '" + name + "' (expected shape, rank, weight, value, size, sizes or dtype)");
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case Token::Kind::kEnd:
      return "end of line";
    case Token::Kind::kString:
      return "\"" + token.text + "\"";
    case Token::Kind::kVariable:
      return "'?" + token.text + "'";
    default:
      return "'" + token.text + "'";
  }
}

}  // namespace

const Token& TokenStream::peek(std::size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

bool TokenStream::is_symbol(const char* symbol, std::size_t ahead) const {
  const Token& token = peek(ahead);
  return token.kind == Token::Kind::kSymbol && token.text == symbol;
}

bool TokenStream::accept(const char* symbol) {
  if (!is_symbol(symbol)) return false;
  ++pos_;
  return true;
}

void TokenStream::expect(const char* symbol) {
  if (!accept(symbol)) fail(std::string("expected '") + symbol + "', found " + describe(peek()));
}

std::string TokenStream::name(const char* what) {
  std::string text = expect_ident(what);
  if (accept("...")) text += "...";
  return text;
}

std::string TokenStream::expect_ident(const char* what) {
  if (peek().kind != Token::Kind::kIdent) {
    fail(std::string("expected ") + what + ", found " + describe(peek()));
  }
  return tokens_[pos_++].text;
}

void TokenStream::expect_end() {
  if (!at_end()) fail("unexpected " + describe(peek()));
}

void TokenStream::fail(const std::string& message) const { throw Error(where_ + ": " + message); }

void TokenStream::count_operator() {
  if (++operators_ > kMaxOperatorsPerLine) {
    fail("more than " + std::to_string(kMaxOperatorsPerLine) + " operators, brackets and calls on one line");
  }
}

Expr TokenStream::expression() {
  Expr lhs = sum();
  if (peek().kind == Token::Kind::kSymbol && is_comparison(peek().text)) {
    count_operator();
    const std::string op = tokens_[pos_++].text;
    lhs = Expr::binary(op, std::move(lhs), sum());
  }
  return lhs;
}

Expr TokenStream::sum() {
  Expr lhs = product();
  while (is_symbol("+") || is_symbol("-") || is_symbol("++")) {
    count_operator();
    const std::string op = tokens_[pos_++].text;
    lhs = Expr::binary(op, std::move(lhs), product());
  }
  return lhs;
}

Expr TokenStream::product() {
  Expr lhs = unary();
  while (is_symbol("*") || is_symbol("/")) {
    count_operator();
    const std::string op = tokens_[pos_++].text;
    lhs = Expr::binary(op, std::move(lhs), unary());
  }
  return lhs;
}

Expr TokenStream::unary() {
  if (!accept("-")) return postfix(primary());
  // `-3` is a negative literal (unless indexed); `-x`, `-(3)` and `-3[0]` negate.
  const Token& next = peek();
  if ((next.kind == Token::Kind::kInt || next.kind == Token::Kind::kFloat) && !is_symbol("[", 1)) {
    ++pos_;
    return next.kind == Token::Kind::kInt ? Expr::integer(-next.int_value)
                                          : Expr::floating(-next.float_value);
  }
  count_operator();
  return Expr::negate(unary());
}

Expr TokenStream::postfix(Expr base) {
  while (accept("[")) {
    count_operator();
    Expr position = expression();
    expect("]");
    base = Expr::index(std::move(base), std::move(position));
  }
  return base;
}

Expr TokenStream::primary() {
  const Token token = peek();
  switch (token.kind) {
    case Token::Kind::kInt:
      ++pos_;
      return Expr::integer(token.int_value);
    case Token::Kind::kFloat:
      ++pos_;
      return Expr::floating(token.float_value);
    case Token::Kind::kString:
      ++pos_;
      return Expr::string(token.text);
    case Token::Kind::kVariable:
      ++pos_;
      return Expr::variable(token.text);
    default:
      break;
  }
  if (accept("[")) {
    count_operator();
    return list();
  }
  if (accept("(")) {
    count_operator();
    Expr inner = expression();
    expect(")");
    return inner;
  }
  if (token.kind == Token::Kind::kIdent) {
    count_operator();
    const Expr::Kind kind = function_kind(token.text, where_);
    ++pos_;
    expect("(");
    std::string value = name("a value name");
    if (kind == Expr::Kind::kSizes) {
      if (!is_list_name(value)) fail("sizes() takes a value list ('" + value + "...')");
      expect(",");
      Expr axis = expression();
      expect(")");
      return Expr::sizes(std::move(value), std::move(axis));
    }
    if (is_list_name(value)) fail(std::string("'") + value + "' is a value list; " + token.text + "() takes one value");
    expect(")");
    return Expr::call(kind, std::move(value));
  }
  fail("expected an expression, found " + describe(token));
}

Expr TokenStream::list() {
  std::vector<Expr> elements;
  if (accept("]")) return Expr::list(std::move(elements));
  do {
    elements.push_back(expression());
  } while (accept(","));
  expect("]");
  return Expr::list(std::move(elements));
}

PatternNode TokenStream::node(std::string& op_name) {
  PatternNode node;
  do {
    node.outputs.push_back(name("an output name"));
  } while (accept(","));
  expect("=");
  op_name = expect_ident("an operator");
  expect("(");
  if (!accept(")")) {
    do {
      node.inputs.push_back(name("an input name"));
    } while (accept(","));
    expect(")");
  }
  if (accept("[")) attributes(node);
  expect_end();
  return node;
}

void TokenStream::attributes(PatternNode& node) {
  if (accept("]")) return;
  if (accept("@")) {
    node.copy_from = expect_ident("a value name after '@'");
    if (accept("]")) return;
    expect(",");
  }
  do {
    AttrSetting setting;
    setting.name = expect_ident("an attribute name");
    expect("=");
    setting.value = expression();
    node.attrs.push_back(std::move(setting));
  } while (accept(","));
  expect("]");
}

}  // namespace graphsub::rules
