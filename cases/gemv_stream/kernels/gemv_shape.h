// Shapes shared by the gemv_stream incore and its golden.
#pragma once

namespace gemv {
constexpr int kCols = 4096;       // columns of W = length of x
constexpr int kBlockRows = 4;     // rows per streamed block: 4 x 4096 x 2 B = 32 KiB
constexpr int kMaxDistance = 16;  // prefetch distance, in blocks
// args: 0 W (fp16, rows x kCols), 1 x (fp16, kCols), 2 y (fp32, rows), 3 rows, 4 distance
// The task has 48 blocks; rows is a multiple of 48 x kBlockRows.
}  // namespace gemv
