#include "file_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace lengen::engine {

namespace {

// Depth first (FTW_DEPTH): a folder's entries are visited, and removed, before the folder.
int removeEntry(const char* path, const struct stat*, int, struct FTW*)
{
    // A failure is not the end: remove what can be removed, and let the final check tell.
    std::remove(path);
    return 0;
}

}  // namespace

bool removeTree(const std::string& path) noexcept
{
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode))
        return std::remove(path.c_str()) == 0;
    // FTW_PHYS: a link inside is removed itself, never the folder it points to. 16 descriptors.
    nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
    return lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace lengen::engine
