"""A test target and its twin run with RTL blocks in the loop."""

def cc_test_and_rtl_twin(name, rtl_name, rtl_settings, rtl_deps = [], deps = [], **kwargs):
    """cc_test `name`, and `rtl_name`: the same test with $PFSIM_TEST_SET = rtl_settings
    (KEY=VALUE;... applied to every configuration the test builds, see tests/support)
    and `rtl_deps` linked in too (test-only RTL builds)."""
    native.cc_test(name = name, deps = deps, **kwargs)
    native.cc_test(name = rtl_name, env = {"PFSIM_TEST_SET": rtl_settings}, deps = deps + rtl_deps, **kwargs)
