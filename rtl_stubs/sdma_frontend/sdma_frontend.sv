// SDMA submission front-end: per-channel ring registers and doorbells, a
// round-robin arbiter over the channels with requests to fetch, a fetcher that
// reads 64-byte requests from the rings through a memory port, and a decoder
// that checks each request (prefetch-protocol.md §2.4b) into a one-entry buffer
// per channel, from which the execution side takes requests in order.
//
// Register block of a channel (reg_addr is the offset inside it):
//   cfg_tail_offset  tail doorbell (write); the tail (read)
//   0x100 head (read)             0x108 ring base (r/w; a write re-creates the
//   0x110 ring depth (r/w)              queue: empty, depth 0, no error)
//   0x118 error code (read)       0x120 requests completed (read)
// Register writes take effect on the clock edge; reads are combinational.
//
// Per channel: `fetch` is the ring index of the next request to fetch; `head`
// the next to complete. At most one fetch is outstanding and one request
// buffered per channel, so a channel fetches one request ahead of the one it
// executes. A malformed request stops its channel when it is taken: the error
// register then holds why, and the channel ignores its doorbell until the queue
// is re-created.
module sdma_frontend #(
    parameter int CHANNELS = 48,
    localparam int CH_BITS = $clog2(CHANNELS)
) (
    input  logic                     clk,
    input  logic                     rst_n,

    // Configuration straps.
    input  logic [63:0]              cfg_gm_size,
    input  logic [63:0]              cfg_max_request_bytes,
    input  logic [31:0]              cfg_max_depth,
    input  logic [11:0]              cfg_tail_offset,
    output logic [31:0]              geometry_channels,  // what this block was built with

    // Register interface: one access per cycle.
    input  logic                     reg_valid,
    input  logic                     reg_write,
    input  logic [CH_BITS-1:0]       reg_channel,
    input  logic [11:0]              reg_addr,
    input  logic [63:0]              reg_wdata,
    output logic [63:0]              reg_rdata,
    output logic                     reg_unknown,   // no such register (or a write to a read-only one)

    // Channel c may fetch only while chan_enable[c] (the scheduler holds a
    // channel back while its queue is being published).
    input  logic [CHANNELS-1:0]      chan_enable,
    output logic [CHANNELS-1:0]      chan_busy,     // requests left and no error
    output logic                     idle,          // nothing to fetch and no fetch waiting for the port

    // Memory port: reads of one 64-byte request; responses in any order, by id.
    output logic                     mem_req_valid,
    input  logic                     mem_req_ready,
    output logic [63:0]              mem_req_addr,
    output logic [CH_BITS-1:0]       mem_req_id,
    input  logic                     mem_resp_valid,
    input  logic [CH_BITS-1:0]       mem_resp_id,
    input  logic [511:0]             mem_resp_data,
    input  logic                     mem_resp_error,

    // Decoded requests, taken one per cycle; retirement of executed ones.
    output logic [CHANNELS-1:0]      req_pending,   // channel c has a decoded request
    input  logic                     take_valid,
    input  logic [CH_BITS-1:0]       take_channel,
    output logic [7:0]               take_opcode,
    output logic [31:0]              take_length,
    output logic [63:0]              take_src,
    output logic [63:0]              take_dst,
    output logic [3:0]               take_error,    // SdmaError; 0 = a valid request
    input  logic                     retire_valid,
    input  logic [CH_BITS-1:0]       retire_channel
);
    localparam logic [11:0] REG_HEAD = 12'h100, REG_BASE = 12'h108, REG_DEPTH = 12'h110,
                            REG_ERROR = 12'h118, REG_COMPLETED = 12'h120;
    localparam logic [3:0] ERR_NONE = 4'd0, ERR_BAD_TYPE = 4'd1, ERR_BAD_OPCODE = 4'd2,
                           ERR_ZERO_LENGTH = 4'd3, ERR_OVERSIZED = 4'd4, ERR_SOURCE = 4'd5,
                           ERR_DESTINATION = 4'd6, ERR_TAIL_RANGE = 4'd7, ERR_NOT_CONFIGURED = 4'd8,
                           ERR_RING = 4'd9;
    localparam logic [5:0] TYPE_SDMA = 6'd11;
    localparam logic [7:0] OP_COPY = 8'd0, OP_CACHE_PREFETCH = 8'd6;

    // Channel registers.
    logic [CHANNELS-1:0][63:0] base_q, completed_q;
    logic [CHANNELS-1:0][31:0] depth_q, head_q, tail_q, fetch_q;
    logic [CHANNELS-1:0][3:0]  error_q;
    // Fetch and buffer state.
    logic [CHANNELS-1:0]       outstanding_q;  // a fetch is in flight
    logic [CHANNELS-1:0]       drop_q;         // ... for a queue since re-created: discard its answer
    logic [CHANNELS-1:0]       buffered_q;
    logic [CHANNELS-1:0][7:0]  buf_opcode_q;
    logic [CHANNELS-1:0][31:0] buf_length_q;
    logic [CHANNELS-1:0][63:0] buf_src_q, buf_dst_q;
    logic [CHANNELS-1:0][3:0]  buf_error_q;

    function automatic logic [31:0] next_index(input logic [31:0] i, input logic [31:0] depth);
        return i + 32'd1 == depth ? 32'd0 : i + 32'd1;
    endfunction

    assign geometry_channels = 32'(CHANNELS);

    // ---- Register reads and doorbell checks ----
    logic [31:0] rd_depth;
    assign rd_depth = depth_q[reg_channel];
    always_comb begin
        reg_rdata = '0;
        reg_unknown = 1'b0;
        if (reg_addr == cfg_tail_offset) reg_rdata = 64'(tail_q[reg_channel]);
        else if (reg_addr == REG_HEAD) reg_rdata = 64'(head_q[reg_channel]);
        else if (reg_addr == REG_BASE) reg_rdata = base_q[reg_channel];
        else if (reg_addr == REG_DEPTH) reg_rdata = 64'(rd_depth);
        else if (reg_addr == REG_ERROR) reg_rdata = 64'(error_q[reg_channel]);
        else if (reg_addr == REG_COMPLETED) reg_rdata = completed_q[reg_channel];
        else reg_unknown = 1'b1;
        if (reg_write && reg_addr != cfg_tail_offset && reg_addr != REG_BASE && reg_addr != REG_DEPTH) begin
            reg_unknown = 1'b1;
        end
    end

    wire doorbell = reg_valid && reg_write && reg_addr == cfg_tail_offset;
    wire recreate = reg_valid && reg_write && reg_addr == REG_BASE && reg_addr != cfg_tail_offset;
    wire set_depth = reg_valid && reg_write && reg_addr == REG_DEPTH && reg_addr != cfg_tail_offset;
    logic [3:0] doorbell_error;
    always_comb begin
        doorbell_error = ERR_NONE;
        if (rd_depth < 32'd2 || rd_depth > cfg_max_depth || base_q[reg_channel] == 64'd0) begin
            doorbell_error = ERR_NOT_CONFIGURED;
        end else if (reg_wdata[31:0] >= rd_depth || reg_wdata[63:32] != 32'd0) begin
            doorbell_error = ERR_TAIL_RANGE;
        end
    end

    // ---- Arbiter: round robin from the channel after the last granted ----
    logic [CHANNELS-1:0] eligible;
    logic [CH_BITS-1:0]  last_grant_q, grant;
    logic                grant_valid;
    always_comb begin
        for (int c = 0; c < CHANNELS; c++) begin
            eligible[c] = chan_enable[c] && error_q[c] == ERR_NONE && !outstanding_q[c] && !buffered_q[c] &&
                          fetch_q[c] != tail_q[c] && depth_q[c] != 32'd0;
        end
`ifdef BROKEN_ARBITER_SKIPS_LAST
        eligible[CHANNELS-1] = 1'b0;  // negative control: the last channel is never granted
`endif
        grant_valid = 1'b0;
        grant = '0;
        for (int i = CHANNELS; i >= 1; i--) begin  // downwards: the nearest after the last grant wins
            logic [CH_BITS-1:0] c;
            c = CH_BITS'((int'(last_grant_q) + i) % CHANNELS);
            if (eligible[c]) begin
                grant_valid = 1'b1;
                grant = CH_BITS'(c);
            end
        end
    end
    wire issue = grant_valid && (!mem_req_valid || mem_req_ready);
    assign idle = !mem_req_valid && !grant_valid;

    // ---- Decoder: checks the request that the memory port returns ----
    wire [5:0]  d_type = mem_resp_data[5:0];
    wire [7:0]  d_opcode = mem_resp_data[135:128];
    wire [31:0] d_length = mem_resp_data[255:224];
    wire [63:0] d_src = mem_resp_data[319:256];
    wire [63:0] d_dst = mem_resp_data[383:320];
    // Stream and task ids, credit and cache attributes pass through unchecked.
    wire unused_fields = ^{mem_resp_data[511:384], mem_resp_data[223:136], mem_resp_data[127:6]};
    logic [3:0] d_error;
    always_comb begin
        if (mem_resp_error) d_error = ERR_RING;
        else if (d_type != TYPE_SDMA) d_error = ERR_BAD_TYPE;
        else if (d_opcode != OP_COPY && d_opcode != OP_CACHE_PREFETCH) d_error = ERR_BAD_OPCODE;
        else if (d_length == 32'd0) d_error = ERR_ZERO_LENGTH;
        else if (64'(d_length) > cfg_max_request_bytes) d_error = ERR_OVERSIZED;
        else if (d_src > cfg_gm_size || 64'(d_length) > cfg_gm_size - d_src) d_error = ERR_SOURCE;
        else if (d_opcode == OP_COPY && (d_dst > cfg_gm_size || 64'(d_length) > cfg_gm_size - d_dst)) d_error = ERR_DESTINATION;
        else d_error = ERR_NONE;
    end

    // ---- Take port and status ----
    // A stopped channel hands out nothing, not even a request it had fetched.
    always_comb begin
        for (int c = 0; c < CHANNELS; c++) req_pending[c] = buffered_q[c] && error_q[c] == ERR_NONE;
    end
    assign take_opcode = buf_opcode_q[take_channel];
    assign take_length = buf_length_q[take_channel];
    assign take_src = buf_src_q[take_channel];
    assign take_dst = buf_dst_q[take_channel];
    assign take_error = buf_error_q[take_channel];
    always_comb begin
        for (int c = 0; c < CHANNELS; c++) chan_busy[c] = head_q[c] != tail_q[c] && error_q[c] == ERR_NONE;
    end

    // ---- State ----
    always_ff @(posedge clk) begin
        if (!rst_n) begin
            base_q <= '0;
            completed_q <= '0;
            depth_q <= '0;
            head_q <= '0;
            tail_q <= '0;
            fetch_q <= '0;
            error_q <= '0;
            outstanding_q <= '0;
            drop_q <= '0;
            buffered_q <= '0;
            last_grant_q <= CH_BITS'(CHANNELS - 1);
            mem_req_valid <= 1'b0;
        end else begin
            // The memory port.
            if (issue) begin
                mem_req_valid <= 1'b1;
                mem_req_id <= grant;
                mem_req_addr <= base_q[grant] + {26'd0, fetch_q[grant], 6'd0};
                outstanding_q[grant] <= 1'b1;
                fetch_q[grant] <= next_index(fetch_q[grant], depth_q[grant]);
                last_grant_q <= grant;
            end else if (mem_req_ready) begin
                mem_req_valid <= 1'b0;
            end
            if (mem_resp_valid) begin
                outstanding_q[mem_resp_id] <= 1'b0;
                drop_q[mem_resp_id] <= 1'b0;
                if (!drop_q[mem_resp_id]) begin
                    buffered_q[mem_resp_id] <= 1'b1;
                    buf_opcode_q[mem_resp_id] <= d_opcode;
                    buf_length_q[mem_resp_id] <= d_length;
                    buf_src_q[mem_resp_id] <= d_src;
                    buf_dst_q[mem_resp_id] <= d_dst;
                    buf_error_q[mem_resp_id] <= d_error;
                end
            end
            // The execution side.
            if (take_valid) begin
                buffered_q[take_channel] <= 1'b0;
                if (take_error != ERR_NONE) error_q[take_channel] <= take_error;
            end
            if (retire_valid) begin
                head_q[retire_channel] <= next_index(head_q[retire_channel], depth_q[retire_channel]);
                completed_q[retire_channel] <= completed_q[retire_channel] + 64'd1;
            end
            // Register writes (last: re-creating a queue overrides the rest).
            if (doorbell && error_q[reg_channel] == ERR_NONE) begin
                if (doorbell_error != ERR_NONE) error_q[reg_channel] <= doorbell_error;
                else tail_q[reg_channel] <= reg_wdata[31:0];
            end
            if (set_depth) depth_q[reg_channel] <= reg_wdata[31:0];
            if (recreate) begin
                base_q[reg_channel] <= reg_wdata;
                depth_q[reg_channel] <= '0;
                head_q[reg_channel] <= '0;
                tail_q[reg_channel] <= '0;
                fetch_q[reg_channel] <= '0;
                error_q[reg_channel] <= ERR_NONE;
                buffered_q[reg_channel] <= 1'b0;
                drop_q[reg_channel] <= outstanding_q[reg_channel] && !(mem_resp_valid && mem_resp_id == reg_channel);
            end
        end
    end
endmodule
