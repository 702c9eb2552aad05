// The axioms' hash and the rewriting of rule files' proof lines.
#include "verify/proof_records.h"

#include <openssl/evp.h>

#include <sstream>
#include <vector>

#include "ir/error.h"

namespace graphsub::verify {
namespace {

/// The line's text after its leading spaces.
std::string trimmed(const std::string& line) {
  const std::size_t start = line.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : line.substr(start);
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Sets the proof line of the rule whose `rule NAME` line is `lines[at]`.
void set_proof(std::vector<std::string>& lines, std::size_t at, const std::string& proof) {
  std::size_t insert_at = at + 1;
  for (std::size_t i = at + 1; i < lines.size(); ++i) {
    const std::string line = trimmed(lines[i]);
    if (starts_with(line, "proof ")) {
      lines[i] = proof;
      return;
    }
    if (!starts_with(line, "origin ")) break;
    insert_at = i + 1;
  }
  lines.insert(lines.begin() + static_cast<long>(insert_at), proof);
}

}  // namespace

std::string axioms_hash(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw Error("SHA-256 of the axioms failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex = "sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string with_proof_lines(const std::string& text, const std::map<std::string, rules::ProofStatus>& statuses,
                             const std::string& hash) {
  std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!starts_with(lines[i], "rule ")) continue;
    const auto it = statuses.find(trimmed(lines[i].substr(5)));
    if (it == statuses.end()) continue;
    set_proof(lines, i, std::string("  proof ") + rules::to_string(it->second) + " \"" + hash + "\"");
  }
  std::string result;
  for (const std::string& line : lines) result += line + "\n";
  return result;
}

}  // namespace graphsub::verify
