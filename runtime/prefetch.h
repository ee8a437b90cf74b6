// Kernel side of the async GM->L2 prefetch (prefetch-protocol.md §2.3-§2.4):
// sessions, the post protocol on GM (1 MiB cache-maintenance requests plus one
// 8-byte flag copy per post), event handles, and wait/test by polling the
// post-done record. Runs on the calling core through rt::Device only.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pfsim::rt {

// A prefetch the hardware would reject at compile time, or from a cube core.
class PrefetchError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Knobs the host sets before a launch (PTO-ISA compile-time constants on hardware).
struct KernelRuntimeOptions {
    uint64_t request_bytes = uint64_t{64} << 20;  // per data request (prefetch.request_bytes)
    uint64_t poll_limit = 100000;     // per queue, per wait
    uint64_t max_posts = 64;          // un-retired posts per session
    uint32_t channels = 48;
    uint32_t doorbell_tail_offset = 8;
    uint64_t warmup_channel_ps = 0;   // core time per channel of the warm-up pass beyond its accesses
    uint64_t cold_doorbell_ps = 92000000;  // a doorbell held this long found its channel cold (sdma.cold_channel_cost)
    bool prefetch_enabled = true;     // off: every prefetch is a no-op (handle 0)
    bool skip_wait = false;           // fault injection: wait returns true without polling
    // What-if (pfsim run --drop-prefetch): prefetches posted from these
    // "file:line" sites of the kernels' sources are no-ops.
    std::vector<std::string> dropped_sites;
    // What-if (pfsim run --free-prefetch): prefetches posted from these sites
    // make their region resident in L2 at once and at no cost, and return
    // handle 0 (their wait returns true at once).
    std::vector<std::string> free_sites;
};

constexpr int kEngineSdma = 1;
constexpr unsigned kHandleQueueShift = 58;

uint64_t encode_event_handle(uint64_t queue_count, uint64_t post_id);

struct AsyncSession {
    uint64_t workspace = 0;
    bool valid = false;
    uint32_t group = 0;
    uint32_t queue_num = 1;
    uint64_t next_post_id = 0;  // ids start at 1
    uint64_t done_post_id = 0;  // highest id observed done
    uint32_t sync_id = 0;
    // The queue's ring as read from the channel record at build time.
    uint64_t sq_base = 0, doorbell = 0;
    uint32_t depth = 0, head = 0, tail = 0, stream_id = 0;
};

struct AsyncEvent {
    uint64_t handle = 0;
    int engine = kEngineSdma;
    // pfsim's own: the session the post was made on (null for handle 0), so
    // that a checker can tell a wait with another context's session.
    const AsyncSession* posted_on = nullptr;
    // Blocks until the post is observed done; false after the poll budget, on an
    // undecodable handle or another engine. Handle 0 is done at once.
    bool Wait(AsyncSession& session) const;
    // One non-blocking check.
    bool Test(AsyncSession& session) const;
};

class PrefetchAsyncContext {
public:
    explicit PrefetchAsyncContext(const void* workspace);
    uint64_t workspace;
    AsyncSession session;
};

// Posts a prefetch of [gm, gm + bytes) on the calling vector core's channel group.
// Returns handle 0 (done at once) when there is nothing to do or the post fails.
AsyncEvent prefetch_async(uint64_t gm, uint64_t bytes, PrefetchAsyncContext& ctx);

// TGET_ASYNC / TPUT_ASYNC: one post on session `s` copying [src, src + bytes)
// to dst (GM addresses; either may be a peer window) with SDMA copy requests on
// the session's queue, the same ring, doorbell and post-done record as
// prefetches. Never dropped: what would drop a prefetch (a session not built,
// more requests than the ring holds, a flag slot that does not retire)
// throws PrefetchError naming `instruction` and the limit.
AsyncEvent copy_async(const char* instruction, uint64_t dst, uint64_t src, uint64_t bytes, AsyncSession& s);
// Builds `s` on the async-DMA workspace (a kernel pointer; null gives an
// invalid session) for the calling core's channel group. True when valid.
bool build_async_session(const void* workspace, AsyncSession& s);

// The post-done records an SDMA event completes on, one per queue of its
// post: (GM address of the record, post id). False when the event cannot be
// decoded (another engine, a queue count of 0 or beyond the channels, an
// invalid session). Handle 0 gives no record and true.
bool event_completion_records(const AsyncEvent& evt, const AsyncSession& session,
                              std::vector<std::pair<uint64_t, uint64_t>>* records);

// pl.prefetch-style source description: dims of -1 are dynamic.
struct TensorView {
    uint64_t addr = 0;
    uint64_t element_bytes = 0;
    std::vector<int64_t> dims;
};
// Checks the shape rules of §1.2 (rank >= 1, fully static, all dims but the last
// equal to 1), throwing PrefetchError with the documented messages; returns bytes.
uint64_t flat_prefetch_bytes(const TensorView& src);

// Why a prefetch did nothing: its event is handle 0, which every wait calls done.
enum class DropReason {
    Disabled,          // prefetch turned off (--prefetch off)
    NullSource,        // the source pointer is null
    ZeroBytes,         // nothing to prefetch
    NotFlat,           // the source is not a flat, packed GM region
    NotGm,             // the source does not point into GM
    NullWorkspace,     // the async-DMA workspace is null (no enable_sdma)
    GroupOutOfRange,   // the channel group (block index) >= channels / queue_num
    NoRing,            // the group's channel record has no submission ring
    RingTooSmall,      // more requests than the ring holds
    PostIdsExhausted,  // post ids reached 2^58
    FlagRingTimeout,   // the oldest flag slot did not retire within the poll budget
    SiteDropped,       // a what-if removed prefetches from this site (--drop-prefetch)
};
// One line saying what the reason means for the user.
std::string drop_reason_text(DropReason why);

// What the prefetch runtime tells a checker (insight/sanitizer.h) as kernels
// use it. Each call is made on the calling kernel's core, inside the runtime
// call it reports, before the runtime returns to the kernel. Every method does
// nothing unless overridden: an observer overrides what it watches.
class PrefetchObserver {
public:
    virtual ~PrefetchObserver() = default;
    // ctx's session was built (valid) on its channel group.
    virtual void session_built(const PrefetchAsyncContext& /*ctx*/) {}
    // Post post_id of ctx's session, of [gm, gm + bytes), begun at since_ps, has
    // its data requests in the ring and its first doorbell is about to be
    // written: from here on the engine may fill its lines, while the core is
    // held by its doorbells. posted() follows when the post returns.
    virtual void publishing(const PrefetchAsyncContext& /*ctx*/, uint64_t /*post_id*/, uint64_t /*gm*/,
                            uint64_t /*bytes*/, uint64_t /*since_ps*/) {}
    // [gm, gm + bytes) posted as post post_id of ctx's session; the post began at since_ps.
    virtual void posted(const PrefetchAsyncContext& /*ctx*/, uint64_t /*post_id*/, uint64_t /*gm*/, uint64_t /*bytes*/,
                        uint64_t /*since_ps*/) {}
    // A prefetch of [gm, gm + bytes) returned handle 0; ctx may be null.
    virtual void dropped(const PrefetchAsyncContext* /*ctx*/, uint64_t /*gm*/, uint64_t /*bytes*/,
                         DropReason /*why*/) {}
    // A post waited from since_ps to now for its flag slot to retire.
    virtual void post_blocked(const PrefetchAsyncContext& /*ctx*/, uint64_t /*since_ps*/, bool /*retired*/) {}
    // A doorbell write of a post held the core from since_ps to now, at least
    // sdma.cold_channel_cost: the channel was cold and the write completed
    // with its publication.
    virtual void doorbell_held(const PrefetchAsyncContext& /*ctx*/, uint64_t /*since_ps*/) {}
    // evt.Wait(session) (test: evt.Test(session)), called at since_ps, returned done.
    virtual void waited(const AsyncEvent& /*evt*/, const AsyncSession& /*session*/, bool /*done*/, bool /*test*/,
                        uint64_t /*since_ps*/) {}
    // evt was registered for deferred completion.
    virtual void deferred(const AsyncEvent& /*evt*/) {}
    // A copy (TGET_ASYNC / TPUT_ASYNC, `instruction`) of `bytes` from src to
    // dst was posted on session s, behind whatever the session's ring holds.
    virtual void copy_posted(const AsyncSession& /*s*/, const char* /*instruction*/, uint64_t /*dst*/, uint64_t /*src*/,
                             uint64_t /*bytes*/) {}
};

// The kernel side's state of one die: what its worker armed its kernels with,
// who observes them, and what its what-ifs did. Each die owns one
// (Platform::kernel_side; Device::kernel_side for the calling core's die), so
// that dies of one simulation, or of one process, run each with their own.
struct KernelSide {
    // Set by the die's worker before each launch or graph (Worker::arm_kernel_side).
    KernelRuntimeOptions options;
    // Told, in order of registration, what the die's kernels do; a checker
    // registers for the runs it watches (add_observer) and leaves before the
    // die ends (remove_observer).
    std::vector<PrefetchObserver*> observers;
    void add_observer(PrefetchObserver* o) { observers.push_back(o); }
    void remove_observer(PrefetchObserver* o);
    // How many prefetches each of options.dropped_sites removed, and each of
    // options.free_sites made resident, since the worker last set the sites
    // (Worker::set_site_what_ifs).
    std::map<std::string, uint64_t> dropped_site_counts;
    std::map<std::string, uint64_t> free_site_counts;
};

// A prefetch the kernel API dropped before reaching the runtime (TPREFETCH_ASYNC's checks).
void note_dropped_prefetch(uint64_t gm, uint64_t bytes, DropReason why);

}  // namespace pfsim::rt
