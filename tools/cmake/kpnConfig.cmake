# SPDX-License-Identifier: MIT
# find_package(kpn) entry point, the same for `cmake --install` and
# `make install`: the target kpn::kpn and what it links (Threads).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/kpnTargets.cmake")
