// The L2's tags: SLICES independent slice tag pipelines. A set belongs to slice
// (set mod SLICES) and is set (set / SLICES) inside it; only the addressed slice
// sees a request, and only it answers.
module l2_tags #(
    parameter int SLICES = 16,
    parameter int SETS_PER_SLICE = 2048,
    parameter int WAYS = 12,
    parameter int TAG_BITS = 32,
    localparam int SLICE_BITS = $clog2(SLICES),
    localparam int SET_BITS = $clog2(SETS_PER_SLICE),
    localparam int WAY_BITS = $clog2(WAYS)
) (
    input  logic                  clk,
    input  logic                  rst_n,
    // The geometry this block was built with (read-only, for the model to check).
    output logic [31:0]           geometry_slices,
    output logic [31:0]           geometry_sets_per_slice,
    output logic [31:0]           geometry_ways,
    output logic [31:0]           geometry_tag_bits,

    output logic                  req_ready,
    input  logic                  req_valid,
    input  logic                  req_op,
    input  logic [SLICE_BITS-1:0] req_slice,
    input  logic [SET_BITS-1:0]   req_set,
    input  logic [TAG_BITS-1:0]   req_tag,
    input  logic                  req_write,

    output logic                  resp_valid,
    output logic                  resp_hit,
    output logic [WAY_BITS-1:0]   resp_way,
    output logic                  resp_dirty,
    output logic                  resp_victim_valid,
    output logic [TAG_BITS-1:0]   resp_victim_tag,
    output logic                  resp_victim_dirty
);
    logic [SLICES-1:0]   ready_s, valid_s, hit_s, dirty_s, victim_valid_s, victim_dirty_s;
    logic [WAY_BITS-1:0] way_s [SLICES];
    logic [TAG_BITS-1:0] victim_tag_s [SLICES];

    for (genvar i = 0; i < SLICES; i++) begin : slice
        l2_slice_tags #(.SETS(SETS_PER_SLICE), .WAYS(WAYS), .TAG_BITS(TAG_BITS)) tags (
            .clk, .rst_n, .req_ready(ready_s[i]),
            .req_valid(req_valid && req_slice == SLICE_BITS'(i)),
            .req_op, .req_set, .req_tag, .req_write,
            .resp_valid(valid_s[i]), .resp_hit(hit_s[i]), .resp_way(way_s[i]), .resp_dirty(dirty_s[i]),
            .resp_victim_valid(victim_valid_s[i]), .resp_victim_tag(victim_tag_s[i]),
            .resp_victim_dirty(victim_dirty_s[i])
        );
    end

    assign geometry_slices = 32'(SLICES);
    assign geometry_sets_per_slice = 32'(SETS_PER_SLICE);
    assign geometry_ways = 32'(WAYS);
    assign geometry_tag_bits = 32'(TAG_BITS);
    assign req_ready = &ready_s;

    // At most one slice answers in a cycle (one request is accepted per cycle).
    always_comb begin
        resp_valid = 1'b0;
        resp_hit = 1'b0;
        resp_way = '0;
        resp_dirty = 1'b0;
        resp_victim_valid = 1'b0;
        resp_victim_tag = '0;
        resp_victim_dirty = 1'b0;
        for (int i = 0; i < SLICES; i++) begin
            if (valid_s[i]) begin
                resp_valid = 1'b1;
                resp_hit = hit_s[i];
                resp_way = way_s[i];
                resp_dirty = dirty_s[i];
                resp_victim_valid = victim_valid_s[i];
                resp_victim_tag = victim_tag_s[i];
                resp_victim_dirty = victim_dirty_s[i];
            end
        end
    end
endmodule
