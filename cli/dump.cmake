# The `kparity run` dump loader as a library of its own: the CLI uses it, and so does the fuzz
# harness (saving and replaying its corpus), which is configured before cli/. Whichever includes
# this first defines the target.
if(NOT TARGET kparity_dump)
  add_library(kparity_dump STATIC ${CMAKE_CURRENT_LIST_DIR}/dump.cpp)
  target_include_directories(kparity_dump PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(kparity_dump PUBLIC kparity::reference PRIVATE fmt::fmt)
endif()
