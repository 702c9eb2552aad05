// Atomic JSON report files.
#include "cmd/report_file.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ir/error.h"

namespace graphsub::cmd {

void write_report(const std::string& path, const nlohmann::json& report) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << report.dump(2) << "\n";
    if (!out) throw Error("cannot write report '" + path + "'");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Error("cannot write report '" + path + "': " + error.message());
  }
}

}  // namespace graphsub::cmd
