#include "runtime/prefetch.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <utility>

#include "runtime/platform/device.h"
#include "hw/sdma_request.h"
#include "runtime/sdma_workspace.h"

namespace pfsim::rt {

namespace {

constexpr uint64_t kPostIdMask = (uint64_t{1} << kHandleQueueShift) - 1;

// Links a post to the waits on it in traces: unique per core, session group and
// id, and below 2^53, so that a JavaScript viewer (Perfetto, chrome://tracing)
// reads every id exactly: 7 bits of core, 8 of group, 36 of post id.
uint64_t flow_id(Device& dev, const AsyncSession& s, uint64_t post_id) {
    return (uint64_t{dev.core_id() & 0x7f} << 44) | (uint64_t{s.group & 0xff} << 36) | (post_id & 0xfffffffffull);
}

// Rings the session's doorbell with its tail; tells the observers when the
// write held the core (a cold channel).
void ring_doorbell(Device& dev, AsyncSession& s, PrefetchAsyncContext* observed) {
    const uint64_t since = dev.now_ps();
    dev.mmio_write32(s.doorbell, s.tail);
    // A doorbell write completes with its publication (sdma.doorbell_write):
    // one held at least as long as a cold channel's publication was one.
    const uint64_t cold = dev.kernel_side().options.cold_doorbell_ps;
    if (!observed || cold == 0 || dev.now_ps() - since < cold) return;
    for (PrefetchObserver* o : dev.kernel_side().observers) o->doorbell_held(*observed, since);
}

uint64_t read_record(Device& dev, const AsyncSession& s, uint32_t queue) {
    uint64_t value = 0;
    dev.gm_read(WorkspaceLayout::post_done(s.workspace, s.group, queue), &value, 8);
    return value;
}

// Polls until the record of every queue reaches post_id, at most poll_limit
// polls per queue. True when done; *reads counts the record reads.
bool poll_done(Device& dev, AsyncSession& s, uint64_t post_id, uint32_t queues, uint64_t* reads) {
    const uint64_t limit = dev.kernel_side().options.poll_limit;
    *reads = 0;
    for (uint32_t q = 0; q < queues; ++q) {
        uint64_t polls = 0;
        for (;;) {
            ++*reads;
            if (read_record(dev, s, q) >= post_id) break;
            if (++polls >= limit) return false;
        }
    }
    s.done_post_id = std::max(s.done_post_id, post_id);
    return true;
}

// Builds the session; when it comes out invalid, why (every prefetch on it is a no-op).
DropReason build_session(Device& dev, AsyncSession& s, uint64_t workspace) {
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    s = AsyncSession{};
    s.workspace = workspace;
    s.group = dev.block_idx();
    if (workspace == 0) return DropReason::NullWorkspace;
    if (s.queue_num == 0 || s.queue_num > opt.channels || s.sync_id > 7 || s.group >= opt.channels / s.queue_num) {
        return DropReason::GroupOutOfRange;
    }
    const uint64_t zero = 0;
    dev.gm_write(WorkspaceLayout::post_done(workspace, s.group, 0), &zero, 8);
    dev.flush();  // invalidate the channel-info lines before reading them
    ChannelRecord rec;
    dev.gm_read(WorkspaceLayout::channel_info(workspace, s.group * s.queue_num), &rec, sizeof rec);
    s.sq_base = rec.sq_base;
    s.doorbell = rec.doorbell_base + opt.doorbell_tail_offset;
    s.depth = rec.sq_depth;
    s.head = rec.sq_head;
    s.tail = rec.sq_tail;
    s.stream_id = rec.stream_id;
    s.valid = s.sq_base != 0 && s.depth >= 2;
    return DropReason::NoRing;
}

void push_request(Device& dev, AsyncSession& s, SdmaRequest request) {
    request.stream_id = static_cast<uint16_t>(s.stream_id);
    request.task_id = static_cast<uint16_t>(s.tail - s.head);
    uint8_t raw[kSdmaRequestBytes];
    request.encode(raw);
    dev.build_request();
    dev.gm_write(s.sq_base + uint64_t{s.tail} * kSdmaRequestBytes, raw, kSdmaRequestBytes);
    s.tail = (s.tail + 1) % s.depth;
}

// Two cores of one launch posting on one channel group run concurrently on
// hardware: their sessions share the group's queue, ring tail and post-done record.
void warn_shared_group(Device& dev, const AsyncSession& s) {
    ChannelGroups::Use& use = dev.channel_groups().use(s.workspace, s.group, dev.core_id());
    const uint32_t first = use.first_core;
    if (first == dev.core_id()) return;
    use.shared = true;
    std::ostringstream os;
    os << "cores " << std::min(first, dev.core_id()) << " and " << std::max(first, dev.core_id())
       << " both post on SDMA channel group " << s.group << " in one launch (the two vector cores of a "
       << "cluster share a group, as on hardware): their sessions share one queue and post-done record";
    dev.warn(os.str());
}

// A session keeps its group's ring tail (and its own post ids) from its build
// on, and persists the tail in the channel record at each post. When the
// record holds another tail, another session of this core has posted on the
// group since (a prefetch context's and send_request_entry's, or
// BuildAsyncSession's, each their own): a post at the kept tail would
// overwrite that session's requests, and the two sessions' post ids would
// repeat on one post-done record. Refused naming `instruction`. A group two
// cores post on is the shared-group warning's, not checked here.
void check_ring_tail(Device& dev, const AsyncSession& s, const char* instruction) {
    const ChannelGroups::Use* use = dev.channel_groups().find(s.workspace, s.group);
    if (!use || use->shared || use->first_core != dev.core_id()) return;
    uint32_t head_tail[2] = {0, 0};
    dev.peek(WorkspaceLayout::channel_info(s.workspace, s.group * s.queue_num), head_tail, sizeof head_tail);
    if (head_tail[1] == s.tail) return;
    throw PrefetchError(std::string(instruction) + ": SDMA channel group " + std::to_string(s.group) +
                        "'s ring tail is " + std::to_string(head_tail[1]) + ", not the " + std::to_string(s.tail) +
                        " this session keeps: another session of this core posted on the group since (a prefetch "
                        "context and send_request_entry / BuildAsyncSession each build their own), and a post at the "
                        "kept tail would overwrite its requests. Post the copies on the context's session "
                        "(TGET_ASYNC(dst, src, ctx.session)) or from another channel group");
}

}  // namespace

std::string drop_reason_text(DropReason why) {
    switch (why) {
        case DropReason::Disabled: return "prefetch is disabled (--prefetch off)";
        case DropReason::NullSource: return "the source pointer is null";
        case DropReason::ZeroBytes: return "the region is 0 bytes";
        case DropReason::NotFlat: return "the source is not a flat, packed GM region (every dimension but the last 1, stride 1)";
        case DropReason::NotGm: return "the source does not point into GM";
        case DropReason::NullWorkspace: return "the async-DMA workspace is null (the worker was made without enable_sdma)";
        case DropReason::GroupOutOfRange: return "the channel group (the block index) is not below sdma.channels / queue_num";
        case DropReason::NoRing: return "the channel group's record has no submission ring";
        case DropReason::RingTooSmall: return "the region needs more requests than the submission ring holds (prefetch.request_bytes)";
        case DropReason::PostIdsExhausted: return "the session's post ids are exhausted";
        case DropReason::FlagRingTimeout: return "the oldest flag slot did not retire within the poll budget";
        case DropReason::SiteDropped: return "a what-if removed the prefetches of this line (--drop-prefetch)";
    }
    return "";
}

void KernelSide::remove_observer(PrefetchObserver* o) {
    observers.erase(std::remove(observers.begin(), observers.end(), o), observers.end());
}

void note_dropped_prefetch(uint64_t gm, uint64_t bytes, DropReason why) {
    for (PrefetchObserver* o : current_device().kernel_side().observers) o->dropped(nullptr, gm, bytes, why);
}

uint64_t encode_event_handle(uint64_t queue_count, uint64_t post_id) {
    return (queue_count << kHandleQueueShift) | (post_id & kPostIdMask);
}

PrefetchAsyncContext::PrefetchAsyncContext(const void* ws) : workspace(ws ? current_device().gm_address(ws) : 0) {}

// Posts on session s, for `bytes` from `gm`, the data requests `request(offset,
// n)` makes (one per prefetch.request_bytes) and the flag copy after them: the
// protocol of prefetch-protocol.md §2.4. `observed`, when given, is the
// prefetch context its observers are told about. Returns the post's event, or
// handle 0 with `why` set.
AsyncEvent post_requests(Device& dev, AsyncSession& s, const char* instruction, PrefetchAsyncContext* observed,
                         uint64_t gm, uint64_t bytes,
                         const std::function<SdmaRequest(uint64_t offset, uint32_t n)>& request, DropReason* why) {
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    const std::vector<PrefetchObserver*> none;
    const std::vector<PrefetchObserver*>& observers = observed ? dev.kernel_side().observers : none;
    auto drop = [&](DropReason reason) {
        *why = reason;
        return AsyncEvent{};
    };
    const uint64_t requests = (bytes + opt.request_bytes - 1) / opt.request_bytes;
    if (requests + 1 > s.depth) return drop(DropReason::RingTooSmall);  // on hardware a silent no-op
    const uint64_t post_id = s.next_post_id + 1;
    if (post_id >= (uint64_t{1} << kHandleQueueShift)) return drop(DropReason::PostIdsExhausted);
    // The flag-payload slot must be retired: post (id - max_posts) observed done.
    if (post_id > opt.max_posts && s.done_post_id < post_id - opt.max_posts) {
        const uint64_t since = dev.now_ps();
        uint64_t reads = 0;
        const bool retired = poll_done(dev, s, post_id - opt.max_posts, s.queue_num, &reads);
        dev.note_prefetch_wait(since, 0, retired, reads);
        for (PrefetchObserver* o : observers) o->post_blocked(*observed, since, retired);
        if (!retired) return drop(DropReason::FlagRingTimeout);
    }
    check_ring_tail(dev, s, instruction);
    warn_shared_group(dev, s);
    const uint64_t posting = dev.now_ps();
    const uint64_t slot = WorkspaceLayout::flag_slot(s.workspace, s.group, post_id);
    dev.gm_write(slot, &post_id, 8);
    for (uint64_t i = 0; i < requests; ++i) {
        const uint64_t offset = i * opt.request_bytes;
        push_request(dev, s, request(offset, static_cast<uint32_t>(std::min(opt.request_bytes, bytes - offset))));
    }
    dev.flush();  // dcci(sq_base, ENTIRE_DATA_CACHE) + dsb: the data requests
    for (PrefetchObserver* o : observers) o->publishing(*observed, post_id, gm, bytes, posting);
    ring_doorbell(dev, s, observed);
    const uint64_t flag_request = s.sq_base + uint64_t{s.tail} * kSdmaRequestBytes;
    push_request(dev, s, SdmaRequest::copy(slot, WorkspaceLayout::post_done(s.workspace, s.group, 0), 8));
    const uint32_t head_tail[2] = {s.head, s.tail};
    dev.gm_write(WorkspaceLayout::channel_info(s.workspace, s.group * s.queue_num), head_tail, 8);
    dev.flush_line(flag_request);  // dcci(flag request, SINGLE_CACHE_LINE) + dsb
    ring_doorbell(dev, s, observed);
    s.next_post_id = post_id;
    dev.note_prefetch_post(posting, flow_id(dev, s, post_id), gm, bytes);
    for (PrefetchObserver* o : observers) o->posted(*observed, post_id, gm, bytes, posting);
    return AsyncEvent{encode_event_handle(s.queue_num, post_id), kEngineSdma, &s};
}

AsyncEvent prefetch_async(uint64_t gm, uint64_t bytes, PrefetchAsyncContext& ctx) {
    Device& dev = current_device();
    if (!dev.is_vector_core()) {
        throw PrefetchError("TPREFETCH_ASYNC on a cube core: prefetch runs on vector cores only");
    }
    KernelSide& die = dev.kernel_side();
    const KernelRuntimeOptions& opt = die.options;
    const std::vector<PrefetchObserver*>& observers = die.observers;
    auto drop = [&](DropReason why) {
        for (PrefetchObserver* o : observers) o->dropped(&ctx, gm, bytes, why);
        return AsyncEvent{};
    };
    if (!opt.prefetch_enabled) return drop(DropReason::Disabled);
    if (!opt.dropped_sites.empty() || !opt.free_sites.empty()) {
        const std::string site = dev.caller_site();
        if (std::find(opt.dropped_sites.begin(), opt.dropped_sites.end(), site) != opt.dropped_sites.end()) {
            ++die.dropped_site_counts[site];
            return drop(DropReason::SiteDropped);
        }
        if (std::find(opt.free_sites.begin(), opt.free_sites.end(), site) != opt.free_sites.end()) {
            ++die.free_site_counts[site];
            dev.make_resident(gm, bytes);
            return AsyncEvent{};
        }
    }
    AsyncSession& s = ctx.session;
    if (!s.valid) {  // built once per context, then cached
        const DropReason why = build_session(dev, s, ctx.workspace);
        if (!s.valid) return drop(why);
        for (PrefetchObserver* o : observers) o->session_built(ctx);
    }
    if (gm == 0) return drop(DropReason::NullSource);
    if (bytes == 0) return drop(DropReason::ZeroBytes);
    DropReason why = DropReason::Disabled;
    const AsyncEvent event = post_requests(dev, s, "TPREFETCH_ASYNC", &ctx, gm, bytes, [&](uint64_t offset, uint32_t n) {
        return SdmaRequest::cache_prefetch(gm + offset, n);
    }, &why);
    return event.handle ? event : drop(why);
}

AsyncEvent copy_async(const char* instruction, uint64_t dst, uint64_t src, uint64_t bytes, AsyncSession& s) {
    auto refuse = [&](const std::string& why) { throw PrefetchError(std::string(instruction) + ": " + why); };
    if (!s.valid) refuse("the async session is not built (BuildAsyncSession failed or was not called)");
    if (bytes == 0) refuse("nothing to copy (0 bytes)");
    Device& dev = current_device();
    DropReason why = DropReason::Disabled;
    const AsyncEvent event = post_requests(dev, s, instruction, nullptr, src, bytes, [&](uint64_t offset, uint32_t n) {
        return SdmaRequest::copy(src + offset, dst + offset, n);
    }, &why);
    if (event.handle) {
        for (PrefetchObserver* o : dev.kernel_side().observers) o->copy_posted(s, instruction, dst, src, bytes);
        return event;
    }
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    const uint64_t requests = (bytes + opt.request_bytes - 1) / opt.request_bytes;
    if (why == DropReason::RingTooSmall) {
        refuse(std::to_string(requests) + " requests of at most " + std::to_string(opt.request_bytes) +
               " bytes and the flag copy do not fit the queue's ring of " + std::to_string(s.depth) +
               " (sdma.queue_depth)");
    }
    if (why == DropReason::FlagRingTimeout) {
        refuse("post " + std::to_string(s.next_post_id + 1) + " needs the flag slot of post " +
               std::to_string(s.next_post_id + 1 - opt.max_posts) + " (at most " + std::to_string(opt.max_posts) +
               " posts outstanding, prefetch.max_posts), which did not retire within the poll budget");
    }
    refuse(drop_reason_text(why));
    return event;
}

bool build_async_session(const void* workspace, AsyncSession& s) {
    Device& dev = current_device();
    build_session(dev, s, workspace ? dev.gm_address(workspace) : 0);
    return s.valid;
}

namespace {

bool test_once(const AsyncEvent& evt, AsyncSession& session);

// Protocol checker, independent of the wait code: when a wait reports a post
// done, the post-done record must already hold an id at least as high.
void check_completion(const AsyncEvent& evt, const AsyncSession& session, bool done) {
    const uint64_t post_id = evt.handle & kPostIdMask;
    if (!done || evt.handle == 0 || !session.valid || post_id == 0) return;
    Device& dev = current_device();
    uint64_t record = 0;
    dev.peek(WorkspaceLayout::post_done(session.workspace, session.group, 0), &record, 8);
    if (record < post_id) {
        dev.report_violation("wait returned true for post " + std::to_string(post_id) + " of channel group " +
                             std::to_string(session.group) + " while its post-done record held " +
                             std::to_string(record));
    }
}

bool wait_for(const AsyncEvent& evt, AsyncSession& session) {
    const uint64_t handle = evt.handle;
    if (handle == 0) return true;
    if (evt.engine != kEngineSdma) return false;
    Device& dev = current_device();
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    if (opt.skip_wait) return true;  // injected fault
    const uint64_t post_id = handle & kPostIdMask;
    const uint64_t queues = handle >> kHandleQueueShift;
    if (post_id == 0 || queues == 0 || queues > opt.channels || !session.valid) return false;
    const uint64_t since = dev.now_ps();
    if (post_id <= session.done_post_id) {  // already observed (a later post's wait covered it)
        dev.note_prefetch_wait(since, flow_id(dev, session, post_id), true, 0);
        return true;
    }
    uint64_t reads = 0;
    const bool done = poll_done(dev, session, post_id, static_cast<uint32_t>(queues), &reads);
    dev.note_prefetch_wait(since, flow_id(dev, session, post_id), done, reads);
    return done;
}

}  // namespace

bool event_completion_records(const AsyncEvent& evt, const AsyncSession& session,
                              std::vector<std::pair<uint64_t, uint64_t>>* records) {
    records->clear();
    if (evt.handle == 0) return true;
    const uint64_t post_id = evt.handle & kPostIdMask;
    const uint64_t queues = evt.handle >> kHandleQueueShift;
    const KernelSide& die = current_device().kernel_side();
    if (evt.engine != kEngineSdma || post_id == 0 || queues == 0 || queues > die.options.channels || !session.valid) {
        return false;
    }
    for (uint32_t q = 0; q < queues; ++q) {
        records->emplace_back(WorkspaceLayout::post_done(session.workspace, session.group, q), post_id);
    }
    for (PrefetchObserver* o : die.observers) o->deferred(evt);
    return true;
}

bool AsyncEvent::Wait(AsyncSession& session) const {
    Device& dev = current_device();
    const std::vector<PrefetchObserver*>& observers = dev.kernel_side().observers;
    const uint64_t since = observers.empty() ? 0 : dev.now_ps();
    const bool done = wait_for(*this, session);
    check_completion(*this, session, done);
    for (PrefetchObserver* o : observers) o->waited(*this, session, done, false, since);
    return done;
}

bool AsyncEvent::Test(AsyncSession& session) const {
    Device& dev = current_device();
    const std::vector<PrefetchObserver*>& observers = dev.kernel_side().observers;
    const uint64_t since = observers.empty() ? 0 : dev.now_ps();
    const bool done = test_once(*this, session);
    check_completion(*this, session, done);
    for (PrefetchObserver* o : observers) o->waited(*this, session, done, true, since);
    return done;
}

namespace {

bool test_once(const AsyncEvent& evt, AsyncSession& session) {
    const uint64_t handle = evt.handle;
    if (handle == 0) return true;
    if (evt.engine != kEngineSdma) return false;
    Device& dev = current_device();
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    if (opt.skip_wait) return true;
    const uint64_t post_id = handle & kPostIdMask;
    const uint64_t queues = handle >> kHandleQueueShift;
    if (post_id == 0 || queues == 0 || queues > opt.channels || !session.valid) return false;
    if (post_id <= session.done_post_id) return true;
    for (uint32_t q = 0; q < queues; ++q) {
        if (read_record(dev, session, q) < post_id) return false;
    }
    session.done_post_id = post_id;
    return true;
}

}  // namespace

uint64_t flat_prefetch_bytes(const TensorView& src) {
    if (src.dims.empty()) throw PrefetchError("async_prefetch: a rank-0 source has no byte extent");
    uint64_t elements = 1;
    for (size_t i = 0; i < src.dims.size(); ++i) {
        if (src.dims[i] < 0) {
            throw PrefetchError("async_prefetch requires a fully static shape, but dimension " + std::to_string(i) +
                                " is dynamic; async prefetch needs a compile-time byte extent");
        }
        elements *= static_cast<uint64_t>(src.dims[i]);
    }
    for (size_t i = 0; i + 1 < src.dims.size(); ++i) {
        if (src.dims[i] != 1) {
            throw PrefetchError(
                "async_prefetch requires a flat contiguous logical 1D GM region; reshape the tensor to [N] or "
                "[1, ..., N]");
        }
    }
    return elements * src.element_bytes;
}

void* get_dma_workspace(const int64_t* args, int kind) {
    if (!args || kind < 0 || kind >= DMA_WORKSPACE_KINDS) return nullptr;
    const auto* global = reinterpret_cast<const GlobalContext*>(args[kGlobalContextSlot]);
    if (!global) return nullptr;
    return reinterpret_cast<void*>(global->dma_workspace[kind]);
}

}  // namespace pfsim::rt
