// Test doubles shared by the test targets.
