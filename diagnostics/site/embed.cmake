# Embeds the static site's assets (diagnostics/site/*.css, *.js) into the library as raw strings, so
# `kparity explain --site` needs no files at run time. Run as:
#   cmake -DSITE_DIR=<diagnostics/site> -DOUT=<gen>/site_assets.cpp -P embed.cmake
cmake_minimum_required(VERSION 3.25)
file(GLOB assets RELATIVE "${SITE_DIR}" "${SITE_DIR}/*.css" "${SITE_DIR}/*.js")
list(SORT assets)
set(delim "kpsite")
set(out "// Generated from diagnostics/site/ by diagnostics/site/embed.cmake. Do not edit.\n#include <string_view>\n#include <utility>\n#include <vector>\n\nnamespace kparity::detail {\n\nconst std::vector<std::pair<std::string_view, std::string_view>>& site_assets() {\n  static const std::vector<std::pair<std::string_view, std::string_view>> assets = {\n")
foreach(name IN LISTS assets)
  file(READ "${SITE_DIR}/${name}" text)
  string(FIND "${text}" ")${delim}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "diagnostics/site/${name}: contains the raw-string delimiter )${delim}\"")
  endif()
  string(APPEND out "      {\"${name}\", R\"${delim}(${text})${delim}\"},\n")
endforeach()
string(APPEND out "  };\n  return assets;\n}\n\n}  // namespace kparity::detail\n")
file(WRITE "${OUT}" "${out}")
