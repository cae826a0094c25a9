# SPDX-License-Identifier: MIT
# kpn::kpn for a tree written by `make install` (tools/install.sh), which
# has no CMake export to generate this; found relative to this file, so
# the tree may move.
get_filename_component(_kpn_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET kpn::kpn)
  add_library(kpn::kpn STATIC IMPORTED)
  set_target_properties(kpn::kpn PROPERTIES
    IMPORTED_LOCATION "${_kpn_prefix}/lib/libkpn.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_kpn_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads")
endif()
unset(_kpn_prefix)
