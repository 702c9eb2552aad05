// Atomic writes of JSON reports and other text files.
#include "cmd/report_file.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ir/error.h"

namespace graphsub::cmd {

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw Error("cannot write " + what + " '" + path + "'");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Error("cannot write " + what + " '" + path + "': " + error.message());
  }
}

void write_report(const std::string& path, const nlohmann::json& report) {
  write_text_file(path, report.dump(2) + "\n", "report");
}

}  // namespace graphsub::cmd
