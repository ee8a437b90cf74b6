// pfsim's commands. Each returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace pfsim {

int run_cli(const std::vector<std::string>& args);
int cmd_config(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);

}  // namespace pfsim
