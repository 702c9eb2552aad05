// The rule file reader: line-oriented sections, each line through the expression parser, and the
// consistency checks of rules/README.md with the line they fail on.
#include "rules/parser.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ops/registry.h"
#include "rules/expr_parser.h"

namespace graphsub::rules {
namespace {

enum class Section { kHeader, kSource, kWhere, kTarget, kMap };

std::string trim(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") + 1 - begin);
}

/// The value among `values` whose to_string is `name`.
template <typename Enum>
std::optional<Enum> from_name(const std::string& name, std::initializer_list<Enum> values) {
  for (Enum value : values) {
    if (name == to_string(value)) return value;
  }
  return std::nullopt;
}

/// True for a kebab-case name: words of lowercase letters and digits joined by single '-'. Checked
/// by hand: libstdc++'s std::regex_match recurses once per character and overflows the stack on a
/// long name.
bool is_kebab_case(const std::string& name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool word_char = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!word_char && (c != '-' || name[i - 1] == '-')) return false;
  }
  return true;
}

/// The variables and value names an expression mentions.
void collect_names(const Expr& expr, std::vector<std::string>& variables, std::vector<std::string>& values) {
  if (expr.kind == Expr::Kind::kVariable) variables.push_back(expr.text);
  switch (expr.kind) {
    case Expr::Kind::kShape:
    case Expr::Kind::kRank:
    case Expr::Kind::kWeight:
    case Expr::Kind::kValue:
    case Expr::Kind::kSize:
    case Expr::Kind::kDtype:
    case Expr::Kind::kSizes:
      values.push_back(expr.text);
      break;
    default:
      break;
  }
  for (const Expr& operand : expr.operands) collect_names(operand, variables, values);
}

/// Parses one rule, line by line, and checks it as it goes.
class RuleParser {
 public:
  RuleParser(const std::string& file, int line, std::string name, std::vector<std::string> comment)
      : file_(file) {
    rule_.name = std::move(name);
    rule_.comment = std::move(comment);
    rule_.file = file;
    rule_.line = line;
  }

  /// Feeds one line of the rule body; returns true when it was `end` and the rule is complete.
  bool feed(const std::string& text, int line) {
    line_ = line;
    std::string place = where();
    std::vector<Token> lexed = tokenize(text, place);
    TokenStream tokens(std::move(lexed), std::move(place));
    if (tokens.at_end()) return false;
    const std::string keyword = keyword_of(tokens);
    if (keyword.empty()) return node_line(tokens), false;
    if (keyword == "rule") {
      throw Error(file_ + ":" + std::to_string(rule_.line) + ": rule '" + rule_.name + "' has no 'end'");
    }
    if (keyword == "where") return where_line(tokens), false;
    if (keyword == "map") return map_line(tokens), false;
    if (keyword == "const") return const_line(tokens), false;
    if (keyword == "origin" || keyword == "proof") return header_line(tokens), false;
    if (keyword == "kind") return kind_line(text), false;
    tokens.expect_ident("a keyword");
    tokens.expect_end();
    if (keyword == "end") return finish(), true;
    if (keyword == "source") return enter(Section::kHeader, Section::kSource, "source"), false;
    if (keyword == "target") return start_target(), false;
    fail("unknown keyword '" + keyword + "'");
  }

  Rule take() { return std::move(rule_); }

 private:
  std::string where() const { return file_ + ":" + std::to_string(line_); }

  /// The leading keyword of a line, or "" for a node line (`OUT = ...` or `OUT, ... = ...`).
  static std::string keyword_of(const TokenStream& tokens) {
    const Token& first = tokens.peek();
    if (first.kind != Token::Kind::kIdent) return {};
    const Token& second = tokens.peek(1);
    const bool node = second.kind == Token::Kind::kSymbol &&
                      (second.text == "=" || second.text == "," || second.text == "...");
    return node ? std::string() : first.text;
  }
  [[noreturn]] void fail(const std::string& message) const { throw Error(where() + ": " + message); }

  void enter(Section from, Section to, const char* keyword) {
    if (section_ != from) fail(std::string("'") + keyword + "' is out of place");
    section_ = to;
  }

  /// The `"sha256:<hex>"` after a proof status: the axioms it was found under.
  std::string axioms_hash(const Expr& expr) const {
    if (expr.kind != Expr::Kind::kString || expr.text.rfind("sha256:", 0) != 0) {
      fail("a proof status may be followed only by the axioms' \"sha256:...\"");
    }
    return expr.text;
  }

  void header_line(TokenStream& tokens) {
    if (section_ != Section::kHeader) fail("'" + tokens.peek().text + "' must come before 'source'");
    const std::string key = tokens.expect_ident("origin or proof");
    const std::string value = tokens.expect_ident("a value");
    if (key == "proof" && !tokens.at_end()) rule_.proof_axioms = axioms_hash(tokens.expression());
    if (key == "origin" && value == "axiom" && !tokens.at_end()) {
      if (tokens.expect_ident("'closed'") != "closed") fail("an axiom's origin may be followed only by 'closed'");
      rule_.closed = true;
    }
    tokens.expect_end();
    if (key == "origin") {
      const auto origin = from_name(value, {Origin::kHand, Origin::kGenerated, Origin::kTaso, Origin::kAxiom});
      if (!origin) fail("unknown origin '" + value + "' (expected hand, generated, taso or axiom)");
      rule_.origin = *origin;
    } else {
      const auto proof = from_name(value, {ProofStatus::kUnverified, ProofStatus::kProved,
                                           ProofStatus::kRefuted, ProofStatus::kUnknown});
      if (!proof) {
        fail("unknown proof status '" + value + "' (expected unverified, proved, refuted or unknown)");
      }
      rule_.proof = *proof;
    }
  }

  /// `kind NAME`: read as text, as the rule's name is (a kebab-case name is not one token), up
  /// to a trailing comment, as the lexer reads every other line.
  void kind_line(const std::string& text) {
    if (section_ != Section::kHeader) fail("'kind' must come before 'source'");
    if (!rule_.kind.empty()) fail("a rule has one 'kind'");
    const std::string after = trim(text).substr(4);              // after the keyword
    const std::string name = trim(after.substr(0, after.find('#')));  // npos: the whole line
    if (!is_kebab_case(name)) fail("kind '" + name + "' is not kebab-case");
    rule_.kind = name;
  }

  void node_line(TokenStream& tokens) {
    if (section_ != Section::kSource && section_ != Section::kTarget) {
      fail("a node line outside source or target");
    }
    std::string op_name;
    PatternNode node = tokens.node(op_name);
    node.op = ops::kind_from_name(op_name);
    node.line = line_;
    if (node.op == ir::OpKind::kOpaque) fail("unknown operator '" + op_name + "'");
    check_list_positions(node.inputs, "inputs");
    check_list_positions(node.outputs, "outputs");
    if (section_ == Section::kSource) {
      if (!node.copy_from.empty()) {
        fail("'@" + node.copy_from + "' in the source (only targets copy attributes)");
      }
      for (const std::string& output : node.outputs) define(source_outputs_, output);
      rule_.source.push_back(std::move(node));
    } else {
      add_target_node(std::move(node));
    }
  }

  /// Value lists stand only at the start or the end of a node's inputs or outputs, so a node's
  /// values split into a list, the named values in order, and a list in one way per start.
  void check_list_positions(const std::vector<std::string>& names, const char* what) const {
    for (std::size_t i = 1; i + 1 < names.size(); ++i) {
      if (is_list_name(names[i])) fail("'" + names[i] + "' must be first or last of the " + what);
    }
  }

  void define(std::set<std::string>& names, const std::string& name) {
    if (!names.insert(name).second) fail("'" + name + "' is defined twice");
  }

  void define_target(const std::string& name) {
    if (pattern_inputs_.count(name) != 0) fail("'" + name + "' is a pattern input and cannot be redefined");
    define(target_values_, name);
  }

  /// Closes the source: binds the pattern inputs and every bare `?var` attribute (the matcher binds
  /// those as it goes and checks other expressions once the match is complete).
  void close_source() {
    if (rule_.source.empty()) fail("the source has no nodes");
    for (const std::string& input : rule_.inputs()) pattern_inputs_.insert(input);
    for (const PatternNode& node : rule_.source) {
      for (const AttrSetting& attr : node.attrs) {
        if (attr.value.kind == Expr::Kind::kVariable) variables_.insert(attr.value.text);
      }
    }
    for (const PatternNode& node : rule_.source) {
      line_ = node.line;
      for (const AttrSetting& attr : node.attrs) check_names(attr.value);
    }
    check_connected();
  }

  void check_connected() {
    std::vector<std::size_t> parent(rule_.source.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](std::size_t i) {
      while (parent[i] != i) i = parent[i] = parent[parent[i]];
      return i;
    };
    std::map<std::string, std::size_t> owner;
    for (std::size_t i = 0; i < rule_.source.size(); ++i) {
      const PatternNode& node = rule_.source[i];
      for (const auto* names : {&node.inputs, &node.outputs}) {
        for (const std::string& name : *names) {
          auto [it, fresh] = owner.emplace(name, i);
          if (!fresh) parent[root(i)] = root(it->second);
        }
      }
    }
    for (std::size_t i = 1; i < parent.size(); ++i) {
      if (root(i) != root(0)) {
        line_ = rule_.source[i].line;
        fail("the source is not connected: this node shares no value with the first");
      }
    }
  }

  /// Every variable bound in the source and every value name (shape/rank/weight) bound by it.
  void check_names(const Expr& expr) const {
    std::vector<std::string> variables;
    std::vector<std::string> values;
    collect_names(expr, variables, values);
    for (const std::string& variable : variables) {
      if (variables_.count(variable) == 0) fail("'?" + variable + "' is never bound in the source");
    }
    for (const std::string& value : values) {
      if (pattern_inputs_.count(value) == 0 && source_outputs_.count(value) == 0) {
        fail("'" + value + "' is not a value of the source");
      }
    }
  }

  void where_line(TokenStream& tokens) {
    if (section_ == Section::kSource) {
      const int line = line_;
      close_source();
      line_ = line;
      section_ = Section::kWhere;
    }
    if (section_ != Section::kWhere) fail("'where' must follow the source");
    tokens.expect_ident("where");
    Expr condition = tokens.expression();
    tokens.expect_end();
    check_names(condition);
    rule_.conditions.push_back(std::move(condition));
  }

  void start_target() {
    if (section_ == Section::kSource) {
      const int line = line_;
      close_source();
      line_ = line;
    } else if (section_ != Section::kWhere) {
      fail("'target' must follow the source");
    }
    section_ = Section::kTarget;
  }

  void const_line(TokenStream& tokens) {
    if (section_ != Section::kTarget) fail("'const' outside the target");
    tokens.expect_ident("const");
    ConstDef constant;
    constant.name = tokens.expect_ident("a constant name");
    tokens.expect("=");
    constant.value = tokens.expression();
    tokens.expect_end();
    check_names(constant.value);
    define_target(constant.name);
    rule_.constants.push_back(std::move(constant));
  }

  void add_target_node(PatternNode node) {
    for (const std::string& input : node.inputs) {
      if (pattern_inputs_.count(input) == 0 && target_values_.count(input) == 0) {
        fail("target reads '" + input +
             "', which is neither a pattern input nor defined earlier in the target");
      }
    }
    if (!node.copy_from.empty() && source_outputs_.count(node.copy_from) == 0) {
      fail("'@" + node.copy_from + "' names a value no source node defines");
    }
    for (const AttrSetting& attr : node.attrs) check_names(attr.value);
    for (const std::string& output : node.outputs) define_target(output);
    rule_.target.push_back(std::move(node));
  }

  void map_line(TokenStream& tokens) {
    if (section_ == Section::kTarget) section_ = Section::kMap;
    if (section_ != Section::kMap) fail("'map' must follow the target");
    tokens.expect_ident("map");
    do {
      OutputMap pair;
      pair.source = tokens.name("a source value");
      tokens.expect("->");
      pair.target = tokens.name("a target value");
      if (source_outputs_.count(pair.source) == 0) {
        fail("map names '" + pair.source + "', which no source node defines");
      }
      if (target_values_.count(pair.target) == 0 && pattern_inputs_.count(pair.target) == 0) {
        fail("map names '" + pair.target + "', which is neither a target value nor a pattern input");
      }
      if (is_list_name(pair.source) != is_list_name(pair.target)) {
        fail("map pairs a value with a value list: " + pair.source + " -> " + pair.target);
      }
      rule_.outputs.push_back(std::move(pair));
    } while (tokens.accept(","));
    tokens.expect_end();
  }

  void finish() {
    if (section_ != Section::kMap) fail("rule '" + rule_.name + "' ends before its target and map");
    check_target_lists();
  }

  /// A value list a target node writes takes its length from the source list mapped to it.
  void check_target_lists() {
    for (const PatternNode& node : rule_.target) {
      for (const std::string& output : node.outputs) {
        if (!is_list_name(output)) continue;
        const bool mapped = std::any_of(rule_.outputs.begin(), rule_.outputs.end(),
                                        [&](const OutputMap& pair) { return pair.target == output; });
        if (!mapped) {
          line_ = node.line;
          fail("the target list '" + output + "' is not mapped from a source list, so its length is unknown");
        }
      }
    }
  }

  const std::string& file_;
  Rule rule_;
  Section section_ = Section::kHeader;
  int line_ = 0;
  std::set<std::string> source_outputs_;
  std::set<std::string> pattern_inputs_;
  std::set<std::string> target_values_;
  std::set<std::string> variables_;
};

/// Splits a file into rules: comments above `rule` go with it, blank lines separate.
class FileParser {
 public:
  FileParser(const std::string& text, const std::string& file) : file_(file) {
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) lines_.push_back(line);
  }

  std::vector<Rule> run() {
    std::vector<std::string> comment;
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      const std::string text = trim(lines_[i]);
      if (text.empty()) {
        comment.clear();
      } else if (text[0] == '#') {
        comment.push_back(comment_text(text));
      } else {
        i = parse_rule(i, std::move(comment));
        comment.clear();
      }
    }
    return std::move(rules_);
  }

 private:
  static std::string comment_text(const std::string& text) {
    return text.compare(0, 2, "# ") == 0 ? text.substr(2) : text.substr(1);
  }

  /// Parses the rule starting at lines_[first]; returns the index of its `end` line.
  std::size_t parse_rule(std::size_t first, std::vector<std::string> comment) {
    const int line = static_cast<int>(first) + 1;
    const std::string where = file_ + ":" + std::to_string(line);
    const std::string head = trim(lines_[first]);
    if (head.compare(0, 4, "rule") != 0 || (head.size() > 4 && head[4] != ' ' && head[4] != '\t')) {
      throw Error(where + ": expected 'rule', found '" + head + "'");
    }
    const std::string name = trim(head.substr(4));
    if (!is_kebab_case(name)) throw Error(where + ": rule name '" + name + "' is not kebab-case");
    if (auto [it, fresh] = names_.emplace(name, line); !fresh) {
      throw Error(where + ": duplicate rule name '" + name + "' (first at line " +
                  std::to_string(it->second) + ")");
    }
    RuleParser parser(file_, line, name, std::move(comment));
    for (std::size_t i = first + 1; i < lines_.size(); ++i) {
      const std::string text = trim(lines_[i]);
      if (!text.empty() && text[0] == '#') continue;
      if (parser.feed(lines_[i], static_cast<int>(i) + 1)) {
        rules_.push_back(parser.take());
        return i;
      }
    }
    throw Error(where + ": rule '" + name + "' has no 'end'");
  }

  const std::string& file_;
  std::vector<std::string> lines_;
  std::vector<Rule> rules_;
  std::map<std::string, int> names_;
};

}  // namespace

std::vector<Rule> parse_rules(const std::string& text, const std::string& file) {
  return FileParser(text, file).run();
}

std::vector<Rule> read_rules_file(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) throw Error("cannot read rule file " + path);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  return parse_rules(buffer.str(), path);
}

}  // namespace graphsub::rules
