# Every dependency comes from a Debian package; a missing one names the package to install.
macro(kparity_require pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "kparity needs ${pkg}: install the Debian package '${debian}' (apt-get install -y ${debian})")
  endif()
endmacro()

kparity_require(nlohmann_json nlohmann-json3-dev)
kparity_require(fmt libfmt-dev)
# Boost.Random's normal distribution (header-only, used inside core's random.cpp only: the installed
# package does not need Boost).
kparity_require(Boost libboost-dev 1.56)
if(KPARITY_IS_TOP_LEVEL OR KPARITY_BUILD_FUZZ)  # the kparity executable (explain, run, fuzz)
  kparity_require(CLI11 libcli11-dev)
endif()
if(KPARITY_BUILD_TESTS OR KPARITY_BUILD_FUZZ)
  kparity_require(GTest libgtest-dev)
endif()
if(KPARITY_BUILD_FUZZ OR KPARITY_BUILD_TESTS)
  kparity_require(rapidcheck librapidcheck-dev)
endif()
