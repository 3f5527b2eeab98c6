// Scratch files for the fuzz targets, and the replay driver used when libFuzzer is not linked
// (the ordinary build): `fuzz_x FILE|DIR...` runs every file once, so ctest replays the seeds and
// the reliability corpus through the same code libFuzzer drives (tests/fuzz/README.md).

#include "fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace lengen::fuzz {

extern std::string replayedFile;

namespace {
struct Scratch {
    std::string dir;
    Scratch()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lengen-fuzz-XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (!mkdtemp(buf.data())) {
            std::perror("lengen-fuzz: mkdtemp");
            std::abort();
        }
        dir = buf.data();
    }
    ~Scratch()
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};
}  // namespace

const std::string& scratchDir()
{
    static Scratch scratch;
    return scratch.dir;
}

std::string writeScratch(const std::string& name, const std::uint8_t* data, std::size_t size)
{
    const std::string path = scratchDir() + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
        std::cerr << "lengen-fuzz: cannot write " << path << "\n";
        std::abort();
    }
    return path;
}

std::string replayedFile;  // the replay driver's current input, named in a finding

void finding(const char* what, const std::string& message)
{
    std::cerr << "lengen-fuzz finding in " << what
              << (replayedFile.empty() ? "" : " (input " + replayedFile + ")") << ": " << message
              << std::endl;
    std::abort();
}

}  // namespace lengen::fuzz

#ifndef LENGEN_LIBFUZZER
namespace {
int replayFile(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        std::cerr << "cannot read " << file << "\n";
        return 1;
    }
    lengen::fuzz::replayedFile = file.string();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return 0;
}
}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << "usage: " << argv[0]
                  << " FILE|DIR...  (replays each file through the target)\n";
        return 64;
    }
    long replayed = 0;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg(argv[i]);
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::recursive_directory_iterator(arg, ec))
                if (e.is_regular_file(ec))
                    files.push_back(e.path());
            std::sort(files.begin(), files.end());  // reproducible order
            for (const auto& f : files) {
                if (replayFile(f))
                    return 1;
                ++replayed;
            }
        } else if (fs::is_regular_file(arg, ec)) {
            if (replayFile(arg))
                return 1;
            ++replayed;
        } else {
            std::cerr << "no such file or folder: " << arg << "\n";
            return 1;
        }
    }
    std::cout << "replayed " << replayed << " inputs without a finding\n";
    return replayed > 0 ? 0 : 1;  // an empty corpus would make the test pass vacuously
}
#endif
