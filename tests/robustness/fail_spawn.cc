// LD_PRELOAD shim for the robustness test: posix_spawnp of a `pfsim
// run-request` child fails with EAGAIN (what a full process table gives), every
// other spawn goes through. Root ignores RLIMIT_NPROC, so this is how a test
// makes the executor's start of a child fail.
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <string.h>

extern "C" int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                            const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
    if (argv[0] && argv[1] && strcmp(argv[1], "run-request") == 0) return EAGAIN;
    using Real = int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                         char* const[], char* const[]);
    static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "posix_spawnp"));
    return real(pid, file, actions, attr, argv, envp);
}
