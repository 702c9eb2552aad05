// Names of the stop reasons.
#include "search/search_options.h"

namespace graphsub::search {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kExhausted: return "exhausted";
    case StopReason::kBudget: return "budget";
    case StopReason::kTimeLimit: return "time-limit";
    case StopReason::kLengthLimit: return "length-limit";
  }
  return "exhausted";
}

}  // namespace graphsub::search
