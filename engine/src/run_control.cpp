// RunControl, and the stop request another process leaves beside a run (run_control.h).

#include "lengen/engine/run_control.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "io/h5.h"
#include "io/writer_lock.h"
#include "lengen/engine/errors.h"
#include "text_files.h"

namespace fs = std::filesystem;

namespace lengen::engine {

void RunControl::requestCancel()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cancel.store(true);
    }
    m_wake.notify_all();
}

void RunControl::setPaused(bool paused)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_paused.store(paused);
    }
    m_wake.notify_all();
}

void RunControl::setStopProbe(std::function<bool()> probe)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_probe = std::move(probe);
}

// Called with m_mutex held.
bool RunControl::probeSaysStop()
{
    if (m_probe && !m_cancel.load() && m_probe())
        m_cancel.store(true);
    return m_cancel.load();
}

bool RunControl::shouldContinue()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    while (m_paused.load() && !probeSaysStop())
        m_wake.wait_for(lock, std::chrono::milliseconds(100));
    return !probeSaysStop();
}

void requestStop(const std::string& runFile, const std::string& requester)
{
    if (!io::writerAlive(runFile))
        throw Error(ErrorKind::RunFile, "nothing trains " + runFile +
                                            " (no process holds its writer lock); resume it with "
                                            "`lengen train --resume " +
                                            runFile + "`");
    writeFileAtomically(stopRequestPath(runFile), "stop requested by " + requester + "\n");
}

bool waitForWriterToLeave(const std::string& runFile, double seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (io::writerAlive(runFile)) {
        if (std::chrono::steady_clock::now() >= until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
}

StopRequestWatch::StopRequestWatch(RunControl& control, std::string runFile)
    : m_control(control), m_file(stopRequestPath(runFile))
{
    // A request already here is this session's: the run's writer cleared the earlier ones as
    // it took its lock (run_writer.cpp), before any other process could ask.
    // A stat at most every 0.5 s: a step can be a millisecond (quick presets).
    auto last = std::make_shared<std::chrono::steady_clock::time_point>();
    const std::string file = m_file;
    m_control.setStopProbe([file, last] {
        const auto now = std::chrono::steady_clock::now();
        if (now - *last < std::chrono::milliseconds(500))
            return false;
        *last = now;
        return ::access(file.c_str(), F_OK) == 0;
    });
}

StopRequestWatch::~StopRequestWatch()
{
    m_control.setStopProbe({});
    std::error_code ec;
    fs::remove(m_file, ec);
}

}  // namespace lengen::engine
