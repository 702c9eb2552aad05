// The tokenizer of the rule language: identifiers, ?variables, numbers, strings and symbols.
#include "rules/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "ir/error.h"

namespace graphsub::rules {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

const char* const kSymbols[] = {"...", "==", "!=", "<=", ">=", "->", "++", "<", ">", "+", "-",
                                "*",  "/",  "(",  ")",  "[",  "]",  ",", "=", "@"};

class Lexer {
 public:
  Lexer(const std::string& line, const std::string& where) : line_(line), where_(where) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    tokens.reserve(16);
    while (true) {
      while (pos_ < line_.size() && std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
      if (pos_ >= line_.size() || line_[pos_] == '#') break;
      tokens.push_back(next());
    }
    tokens.push_back(Token{});
    return tokens;
  }

 private:
  Token next() {
    const char c = line_[pos_];
    if (is_ident_start(c)) return Token{Token::Kind::kIdent, word(), 0, 0};
    if (c == '?') {
      ++pos_;
      if (pos_ >= line_.size() || !is_ident_start(line_[pos_])) fail("'?' must start a variable name");
      return Token{Token::Kind::kVariable, word(), 0, 0};
    }
    if (is_digit(c)) return number();
    if (c == '"') return string();
    if (const char* symbol = symbol_at()) {
      const std::size_t length = std::char_traits<char>::length(symbol);
      pos_ += length;
      return Token{Token::Kind::kSymbol, std::string(symbol, length), 0, 0};
    }
    fail(std::string("unexpected character '") + c + "'");
    return {};
  }

  /// The symbol at pos_, the longest first, or null: the symbols of one first character are
  /// tried, not every symbol (the generator parses two million lines of its rules).
  const char* symbol_at() const {
    const char c = line_[pos_];
    for (const char* symbol : kSymbols) {
      if (symbol[0] != c) continue;
      if (line_.compare(pos_, std::char_traits<char>::length(symbol), symbol) == 0) return symbol;
    }
    return nullptr;
  }

  std::string word() {
    const std::size_t start = pos_;
    while (pos_ < line_.size() && is_ident_char(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  void digits() {
    while (pos_ < line_.size() && is_digit(line_[pos_])) ++pos_;
  }

  Token number() {
    const std::size_t start = pos_;
    bool is_float = false;
    digits();
    if (pos_ < line_.size() && line_[pos_] == '.') {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < line_.size() && (line_[pos_] == 'e' || line_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < line_.size() && (line_[pos_] == '+' || line_[pos_] == '-')) ++pos_;
      if (pos_ >= line_.size() || !is_digit(line_[pos_])) fail("malformed number");
      digits();
    }
    const std::string text = line_.substr(start, pos_ - start);
    Token token{is_float ? Token::Kind::kFloat : Token::Kind::kInt, text, 0, 0};
    if (is_float) {
      token.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      errno = 0;
      token.int_value = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail("integer " + text + " is out of range");
    }
    return token;
  }

  Token string() {
    std::string text;
    ++pos_;
    while (pos_ < line_.size() && line_[pos_] != '"') {
      if (line_[pos_] == '\\' && pos_ + 1 < line_.size()) ++pos_;
      text += line_[pos_++];
    }
    if (pos_ >= line_.size()) fail("unterminated string");
    ++pos_;
    return Token{Token::Kind::kString, text, 0, 0};
  }

  [[noreturn]] void fail(const std::string& message) const { throw Error(where_ + ": " + message); }

  const std::string& line_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<Token> tokenize(const std::string& line, const std::string& where) {
  return Lexer(line, where).run();
}

}  // namespace graphsub::rules
