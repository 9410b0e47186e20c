// write_site: the site is written to a temporary sibling folder and renamed into place, so a failure
// leaves DIR as it was (issue 17, "nothing partial in DIR").
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>

#include "kparity/diagnostics/site.hpp"

namespace kparity {
namespace {

namespace fs = std::filesystem;

// Absolute, normalised, without a trailing separator ("out/" and "out/." name "out").
fs::path normalised(const fs::path& p) {
  fs::path d = fs::absolute(p).lexically_normal();
  while (!d.has_filename() && d.has_parent_path() && d != d.root_path()) d = d.parent_path();
  return d;
}

bool inside(const fs::path& child, const fs::path& parent) {
  auto c = child.begin(), p = parent.begin();
  for (; p != parent.end(); ++p, ++c)
    if (c == child.end() || *c != *p) return false;
  return true;
}

void refuse_dangerous(const fs::path& dir) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(dir, ec);
  const fs::path target = ec ? dir : real;
  if (target == target.root_path()) throw SiteError(dir.string() + ": refusing to replace the filesystem root");
  if (const char* home = std::getenv("HOME"); home && *home && fs::weakly_canonical(home, ec) == target)
    throw SiteError(dir.string() + ": refusing to replace the home folder");
  const fs::path cwd = fs::current_path(ec);
  if (!ec && inside(fs::weakly_canonical(cwd, ec), target))
    throw SiteError(dir.string() + ": refusing to replace a folder that holds the working directory; run from elsewhere");
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw SiteError(p.string() + ": cannot be written");
}

}  // namespace

void write_site(const Catalog& c, const fs::path& dir_arg, const SiteOptions& o) {
  if (dir_arg.empty()) throw SiteError("the site folder is an empty path");
  const fs::path dir = normalised(dir_arg);
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(dir, ec));
  if (exists) {
    if (!fs::is_directory(dir, ec)) throw SiteError(dir.string() + ": exists and is not a folder");
    const bool empty = fs::is_empty(dir, ec);
    if (ec) throw SiteError(dir.string() + ": cannot be read: " + ec.message());
    const bool previous = fs::is_regular_file(dir / kSiteMarker, ec);
    if (!empty && !previous && !o.force)
      throw SiteError(dir.string() + ": not empty and not a previous kparity site (it has no " + kSiteMarker +
                      "); pass --force to replace its contents");
    if (!empty) refuse_dangerous(dir);
  }

  const auto files = render_site(c, o);  // everything in memory before the disk is touched
  const fs::path parent = dir.parent_path();
  const std::string tag = "." + dir.filename().string() + ".kparity-" + std::to_string(::getpid());
  const fs::path tmp = parent / (tag + "-new"), old = parent / (tag + "-old");
  try {
    fs::create_directories(parent);
    fs::remove_all(tmp);
    fs::create_directory(tmp);
    for (const auto& [rel, text] : files) write_file(tmp / rel, text);
    if (exists) {
      fs::remove_all(old);
      fs::rename(dir, old);
      try {
        fs::rename(tmp, dir);
      } catch (...) {
        fs::rename(old, dir);  // put the previous contents back
        throw;
      }
      fs::remove_all(old, ec);  // the new site is in place; a leftover is only clutter
    } else {
      fs::rename(tmp, dir);
    }
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw SiteError(dir.string() + ": cannot write the site: " + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace kparity
