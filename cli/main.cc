// pfsim: the command-line front end. Exit status: 0 success, 1 a check failed
// (e.g. --verify found a mismatch), 2 bad input (usage, configuration, trace),
// 3 an internal error (cli/exit_status.h).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>

#include "cli/commands.h"

namespace {

// SystemC's own handler, except that what it displays goes to stderr: stdout
// carries --json documents.
void report_to_stderr(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
    if (actions & sc_core::SC_DISPLAY) std::cerr << "pfsim: " << sc_core::sc_report_compose_message(report) << std::endl;
    sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_DISPLAY);
}

}  // namespace

int sc_main(int argc, char** argv) {
    sc_core::sc_report_handler::set_handler(report_to_stderr);
    // sc_stop() would print an info line on stdout, in the middle of --json output.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                            sc_core::SC_DO_NOTHING);
    // A file growing past `ulimit -f` would kill pfsim by SIGXFSZ: ignored, the
    // write fails with EFBIG instead, and the writer names its file (exit 2).
    std::signal(SIGXFSZ, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    const int status = pfsim::run_cli(args);
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {  // a full disk, a closed pipe
        std::cerr << "pfsim: cannot write to standard output: " << std::strerror(errno) << "\n";
        return 2;
    }
    return status;
}

// Our own main (it takes precedence over libsystemc's) only to silence the
// SystemC banner before the library prints it.
int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}
