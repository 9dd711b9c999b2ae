// The translation unit that precompiles the headers the tests share
// (cmake/PmTesting.cmake, PM_PCH): every test reuses its precompiled header.
