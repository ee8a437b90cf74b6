"""Prints the test files of one shard: shard_files.py INDEX COUNT FOLDER...

Every test_*.py under the folders, each whole in one shard, the heaviest first
into the lightest shard (seconds measured in the default build on 2026-12-03;
a file not listed weighs DEFAULT). The same files give the same shards."""
import pathlib
import sys

SECONDS = {
    "test_scene_harness.py": 46, "test_tcvt.py": 45, "test_advisor.py": 28, "test_tile_errors.py": 25,
    "test_tile_ops.py": 24, "test_weight_warm.py": 22, "test_tile_combine.py": 20, "test_tutorial.py": 17,
    "test_tpipe.py": 15, "test_gather_cmp.py": 14, "test_worker.py": 12, "test_cube_ops.py": 12,
    "test_case_data.py": 9, "test_cv_pipeline.py": 9, "test_sanitizer.py": 9, "test_mlp_step.py": 7,
    "test_attention_step.py": 6, "test_sort.py": 5,
}
DEFAULT = 5


def main(index, count, folders):
    files = sorted(str(p) for f in folders for p in pathlib.Path(f).rglob("test_*.py"))
    load = [0] * count
    shards = [[] for _ in range(count)]
    for path in sorted(files, key=lambda p: (-SECONDS.get(pathlib.Path(p).name, DEFAULT), p)):
        lightest = load.index(min(load))
        shards[lightest].append(path)
        load[lightest] += SECONDS.get(pathlib.Path(path).name, DEFAULT)
    print("\n".join(sorted(shards[index])))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
