// Recording verdicts in rule files: the `proof` line of each rule, with the axioms' hash.
#pragma once

#include <map>
#include <string>

#include "rules/rule.h"

namespace graphsub::verify {

/// "sha256:<64 hex digits>" of `text` (OpenSSL's SHA-256): names the axioms a proof was found under.
std::string axioms_hash(const std::string& text);

/// `text` (a rule file) with the `proof` line of each rule named in `statuses` set to that status
/// and `hash`, inserted after `rule NAME` (or its `origin` line) where the rule has none. Every
/// other byte stays as it was, comments included. Rules not named are left alone.
std::string with_proof_lines(const std::string& text, const std::map<std::string, rules::ProofStatus>& statuses,
                             const std::string& hash);

}  // namespace graphsub::verify
