"""The host's limit for a scene-test case (bench/scale.sh): the wall time its own
compute_golden takes to compute the case's values with torch (the host's BLAS,
no timing model), and the bytes of its tensors.

usage: PYTHONPATH="$(pfsim python-path)" python3 bench/host_limit.py TEST_FILE CLASS CASE
prints one line: LIMIT_SECONDS TENSOR_BYTES TENSORS
"""

import importlib.util
import os
import sys
import time

from pfsim import _simpler

_simpler.install()  # the test's simpler imports resolve to pfsim's harness, as under `pfsim test`

path, cls_name, case_name = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
checkout = _simpler.simpler_checkout(path)
if checkout:  # simpler's own modules (its goldens), as pytest finds them from the checkout's root
    sys.path.insert(1, checkout)
spec = importlib.util.spec_from_file_location("scene_under_test", path)
module = importlib.util.module_from_spec(spec)
sys.modules["scene_under_test"] = module  # inspect.getfile finds the class through it
spec.loader.exec_module(module)
test = getattr(module, cls_name)()
case = next(c for c in test.CASES if c["name"] == case_name)
params = dict(case.get("params", {}))
args = test.generate_args(params)
golden = args.clone()
start = time.perf_counter()
test.compute_golden(golden, params)
limit = time.perf_counter() - start
tensors = [s.value for s in args.specs if hasattr(s.value, "element_size") or hasattr(s.value, "nbytes")]
size = sum(t.numel() * t.element_size() if hasattr(t, "element_size") else t.nbytes for t in tensors)
print(f"{limit:.3f} {size} {len(tensors)}")
