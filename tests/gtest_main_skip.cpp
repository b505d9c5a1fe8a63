// Test entry point shared by every test binary: runs GoogleTest and turns
// "everything that ran was skipped" into exit code 77, which ctest reports as
// skipped (SKIP_RETURN_CODE), so tests that need root or a kernel feature show
// as skipped with their reason instead of passing silently.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (rc == 0 && unit->skipped_test_count() > 0 && unit->successful_test_count() == 0 &&
      unit->failed_test_count() == 0)
    return 77;
  return rc;
}
