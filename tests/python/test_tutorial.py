"""docs/tutorial.md, run: every file block written where its title says, every
`sh` block run in order (all but the `sh setup` block, which builds the pfsim
this test runs), then what the tutorial says checked."""

import json
import os
import re
import subprocess

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
TUTORIAL = os.path.join(HERE, "..", "..", "docs", "tutorial.md")
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def tutorial_script():
    script = ["set -eux"]
    for lang, info, body in BLOCK.findall(open(TUTORIAL).read()):
        info = info.strip()
        if info.startswith("file="):
            path = info[len("file="):]
            script.append(f"cat > {path} <<'PFSIM_TUTORIAL_EOF'\n{body}PFSIM_TUTORIAL_EOF")
        elif lang == "sh" and info != "setup":
            script.append(body)
    return "\n".join(script) + "\n"


def test_the_tutorial_runs_as_written(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pfsim").symlink_to(pfsim.find_binary())
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)  # the tutorial's commands find the package themselves
    r = subprocess.run(["bash", "-c", tutorial_script()], cwd=work, env=env, capture_output=True, text=True,
                       timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    gains = dict(re.findall(r"test_run\[(\w+)\]: .* gain ([+-][\d.]+) %", out))
    assert float(gains["one_chunk_per_prefetch"]) < -50, out   # "nearly doubles the kernel's time"
    assert float(gains["eight_chunks_per_prefetch"]) > 10, out  # "pays for itself"
    assert "2 passed" in out and "1 passed, 1 skipped" in out  # pfsim test, then plain pytest --case
    traces = sorted(os.listdir(work / "my_prefetch" / "traces"))
    assert traces == [f"TestStream.{c}.{p}.json" for c in ("eight_chunks_per_prefetch", "one_chunk_per_prefetch")
                      for p in ("off", "on")]
    events = json.load(open(work / "my_prefetch" / "traces" / "TestStream.one_chunk_per_prefetch.on.json"))
    events = events["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert {"SDMA engine", "memory system", "Tasks (AICPU scheduler)"} <= names, names
    assert "AIV 24 (cluster 0, sub 0)" in names, names
    posts = sum(1 for e in events if e.get("name") == "TPREFETCH_ASYNC")
    assert posts == 63
    eight = json.load(open(work / "my_prefetch" / "traces" / "TestStream.eight_chunks_per_prefetch.on.json"))
    assert sum(1 for e in eight["traceEvents"] if e.get("name") == "TPREFETCH_ASYNC") == 7
