#include "text_files.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lengen/engine/errors.h"

namespace fs = std::filesystem;

namespace lengen::engine {

void writeFileAtomically(const std::string& path, const std::string& text, bool ownTemp)
{
    static std::atomic<unsigned> writes{0};
    const std::string partial =
        ownTemp ? path + ".partial." + std::to_string(::getpid()) + "." + std::to_string(++writes)
                : path + ".partial";
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            std::error_code ec;
            fs::remove(partial, ec);
            throw Error(ErrorKind::Io, "cannot write " + path);
        }
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        std::error_code ec;
        fs::remove(partial, ec);
        throw Error(ErrorKind::Io, "cannot replace " + path);
    }
}

std::string readTextFile(const std::string& path, std::uintmax_t maxBytes)
{
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw Error(ErrorKind::Io, "cannot read " + path + ": " + ec.message());
    if (size > maxBytes)
        throw Error(ErrorKind::RunFile, path + " is " + std::to_string(size) +
                                            " bytes, more than a LenGen file of its kind holds");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof())
        throw Error(ErrorKind::Io, "cannot read " + path);
    return text.str();
}

}  // namespace lengen::engine
