// pfsim's "pipe_sync.h": after the final TSTORE, make the scalar unit wait
// until the store pipe has drained, so GM writes land before the kernel exits.
// Needs <pto/pto-inst.hpp> and `using namespace pto;` first.
#pragma once

#if defined(__DAV_VEC__)
static __aicore__ inline void pipe_sync() {
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
    wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
}
#elif defined(__DAV_CUBE__)
static __aicore__ inline void pipe_sync() {
    set_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
    wait_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
}
#else
#error "pipe_sync.h: the build defines neither __DAV_VEC__ nor __DAV_CUBE__"
#endif
