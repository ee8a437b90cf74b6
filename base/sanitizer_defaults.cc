// What the sanitizers of --config=asan and --config=ubsan (.bazelrc) need
// from pfsim's binaries and SystemC tests: their options, compiled in so that
// every process pfsim starts (device and check children, tests' own runs)
// gets them whatever its environment holds, and, under ASan, a mend for
// SystemC's coroutine annotations. Without a sanitizer nothing calls any of it.
//
// handle_segv=0: a kernel's wild store is users' code faulting, which
// pfsim's own handler turns into a named report (base/user_code.h); ASan's
// handler would turn it into an abort of pfsim.
//
// The mend: Debian's libsystemc tells ASan of each coroutine switch
// (__sanitizer_start_switch_fiber), but names the main coroutine's stack as
// [0, 0). Once the simulation has run, ASan then believes sc_main's stack is
// empty: an exception thrown there cannot unpoison the frames it leaves
// ("ASan is ignoring requested __asan_handle_no_return: stack type: default
// top: 0x000000000000"), and later calls report those stale redzones as
// stack-buffer-overflows (seen in ~TaskGraph, and in GCC 12's own sigaltstack
// interceptor). The executable's definition below comes first in symbol
// lookup: it passes the main thread's real stack where SystemC passes none,
// and forwards to ASan.
//
// Its second half: SystemC maps each coroutine's stack (mmap) and unmaps it
// with its simulation context, a blocked thread's frames still on it. GCC 12's
// ASan keeps an unmapped range's shadow, and the next context's coroutines get
// the same addresses; GCC's prologue writes only a frame's redzones, trusting
// its variables' shadow to be clear, so a new frame can find a variable under
// an old frame's redzone (seen as a stack-buffer-overflow of
// TlmFrontend::fetch_head's `entry`, the second run of die_run_test). munmap
// below clears the shadow of what it unmaps first, for mappings of up to
// 64 MiB: a coroutine's stack is far smaller, and GM's 64 GiB mapping would
// take 8 GiB of shadow to clear.
#include <dlfcn.h>
#include <pthread.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <cstddef>

extern "C" {

__attribute__((visibility("default"), used)) const char* __asan_default_options() {
    return "detect_leaks=1:abort_on_error=1:handle_segv=0";
}

__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
    return "print_stacktrace=1:halt_on_error=1";
}

#if defined(__SANITIZE_ADDRESS__)

namespace {

using StartSwitch = void (*)(void**, const void*, size_t);
void* main_stack_bottom = nullptr;
size_t main_stack_size = 0;

// Runs on the main thread before sc_main.
__attribute__((constructor)) void record_main_stack() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    pthread_attr_getstack(&attr, &main_stack_bottom, &main_stack_size);
    pthread_attr_destroy(&attr);
}

}  // namespace

__attribute__((visibility("default"))) void __sanitizer_start_switch_fiber(void** fake_stack, const void* bottom,
                                                                           size_t size) {
    static const auto asan = reinterpret_cast<StartSwitch>(dlsym(RTLD_NEXT, "__sanitizer_start_switch_fiber"));
    if (!asan) return;
    if (bottom == nullptr && size == 0) {  // back to the main coroutine: sc_main's own stack
        bottom = main_stack_bottom;
        size = main_stack_size;
    }
    asan(fake_stack, bottom, size);
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t length) {
    using Munmap = int (*)(void*, size_t);
    static const auto unmap = reinterpret_cast<Munmap>(dlsym(RTLD_NEXT, "munmap"));
    if (length <= (size_t{64} << 20)) __asan_unpoison_memory_region(addr, length);
    return unmap(addr, length);
}

#endif

}  // extern "C"
