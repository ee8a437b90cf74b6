// Tag pipeline of one L2 slice: set-associative tag match, true-LRU update,
// victim choice (first invalid way, else the least recently used) and dirty bits.
//
// Each array is a row per set (like one SRAM word per set), read and written
// whole. After reset the rows are cleared one set per cycle (req_ready low).
// Two stages: a request is registered on the edge that accepts it; on the next
// edge its set's rows are matched and rewritten and the response is registered.
// So the response is valid two edges after acceptance, one request is accepted
// per cycle, and a request to the set the previous one updates sees the update.
//
// Operations:
//   OP_LOOKUP  hit, way and dirty bit of a line; changes nothing
//   OP_ACCESS  touch the line (most recently used), allocating a way on a miss;
//              req_write sets its dirty bit; a miss reports the victim it replaced
// A tag is the whole line number (TAG_BITS wide), so a victim's address needs no
// set bits put back.
module l2_slice_tags #(
    parameter int SETS = 2048,
    parameter int WAYS = 12,
    parameter int TAG_BITS = 32,
    localparam int SET_BITS = $clog2(SETS),
    localparam int WAY_BITS = $clog2(WAYS)
) (
    input  logic                clk,
    input  logic                rst_n,

    output logic                req_ready,   // low while the rows are being cleared
    input  logic                req_valid,
    input  logic                req_op,      // 0 = OP_LOOKUP, 1 = OP_ACCESS
    input  logic [SET_BITS-1:0] req_set,
    input  logic [TAG_BITS-1:0] req_tag,
    input  logic                req_write,

    output logic                resp_valid,
    output logic                resp_hit,
    output logic [WAY_BITS-1:0] resp_way,
    output logic                resp_dirty,         // of the line after the operation
    output logic                resp_victim_valid,  // OP_ACCESS miss replaced a valid line
    output logic [TAG_BITS-1:0] resp_victim_tag,
    output logic                resp_victim_dirty
);
    localparam logic OP_ACCESS = 1'b1;

    typedef logic [WAYS-1:0] bits_row_t;
    typedef logic [WAYS-1:0][TAG_BITS-1:0] tag_row_t;
    // Age of each way: 0 = most recently used; the ages of a set are always a
    // permutation of 0 .. WAYS-1.
    typedef logic [WAYS-1:0][WAY_BITS-1:0] age_row_t;

    bits_row_t valid_q [SETS];
    bits_row_t dirty_q [SETS];
    tag_row_t  tag_q   [SETS];
    age_row_t  age_q   [SETS];

    // Clearing the rows after reset.
    logic                clearing;
    logic [SET_BITS-1:0] clear_set;
    assign req_ready = !clearing;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            clearing <= 1'b1;
            clear_set <= '0;
        end else if (clearing) begin
            clear_set <= clear_set + 1'b1;
            if (clear_set == SET_BITS'(SETS - 1)) clearing <= 1'b0;
        end
    end

    // Stage 1: the accepted request.
    logic                s1_valid, s1_op, s1_write;
    logic [SET_BITS-1:0] s1_set;
    logic [TAG_BITS-1:0] s1_tag;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            s1_valid <= 1'b0;
        end else begin
            s1_valid <= req_valid && req_ready;
        end
        s1_op <= req_op;
        s1_set <= req_set;
        s1_tag <= req_tag;
        s1_write <= req_write;
    end

    // Stage 2: match, choose and compute the set's new rows.
    bits_row_t           valid_row, dirty_row, next_valid, next_dirty;
    tag_row_t            tag_row, next_tag;
    age_row_t            age_row, next_age, fresh_age;
    logic                hit, has_invalid, line_dirty;
    logic [WAY_BITS-1:0] hit_way, invalid_way, lru_way, way;

    assign valid_row = valid_q[s1_set];
    assign dirty_row = dirty_q[s1_set];
    assign tag_row = tag_q[s1_set];
    assign age_row = age_q[s1_set];
    wire access = s1_valid && s1_op == OP_ACCESS;

    always_comb begin
        hit = 1'b0;
        hit_way = '0;
        has_invalid = 1'b0;
        invalid_way = '0;
        lru_way = '0;
        for (int w = WAYS - 1; w >= 0; w--) begin  // downwards: the lowest way wins
            if (valid_row[w] && tag_row[w] == s1_tag) begin
                hit = 1'b1;
                hit_way = WAY_BITS'(w);
            end
            if (!valid_row[w]) begin
                has_invalid = 1'b1;
                invalid_way = WAY_BITS'(w);
            end
            if (age_row[w] == WAY_BITS'(WAYS - 1)) lru_way = WAY_BITS'(w);
        end
        way = hit ? hit_way : (has_invalid ? invalid_way : lru_way);
        line_dirty = access ? ((hit && dirty_row[way]) || s1_write) : (hit && dirty_row[hit_way]);

        next_valid = valid_row;
        next_dirty = dirty_row;
        next_tag = tag_row;
        next_age = age_row;
        next_valid[way] = 1'b1;
        next_dirty[way] = line_dirty;
        next_tag[way] = s1_tag;
        for (int w = 0; w < WAYS; w++) begin
            if (age_row[w] < age_row[way]) next_age[w] = age_row[w] + 1'b1;
        end
        next_age[way] = '0;
`ifdef BROKEN_LRU_WAY0
        if (way == '0) next_age = age_row;  // negative control: a touch of way 0 is lost
`endif

        for (int w = 0; w < WAYS; w++) fresh_age[w] = WAY_BITS'(w);
    end

    always_ff @(posedge clk) begin
        if (clearing) begin
            valid_q[clear_set] <= '0;
            dirty_q[clear_set] <= '0;
            age_q[clear_set] <= fresh_age;
        end else if (access) begin
            valid_q[s1_set] <= next_valid;
            dirty_q[s1_set] <= next_dirty;
            tag_q[s1_set] <= next_tag;
            age_q[s1_set] <= next_age;
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            resp_valid <= 1'b0;
        end else begin
            resp_valid <= s1_valid;
        end
        resp_hit <= hit;
        resp_way <= (access || hit) ? way : '0;  // a lookup that misses names no way
        resp_dirty <= line_dirty;
        resp_victim_valid <= access && !hit && !has_invalid;
        resp_victim_tag <= tag_row[lru_way];
        resp_victim_dirty <= access && !hit && !has_invalid && dirty_row[lru_way];
    end
endmodule
