#include "lengen/engine/run_control.h"

#include <chrono>

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

bool RunControl::shouldContinue()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    while (m_paused.load() && !m_cancel.load())
        m_wake.wait_for(lock, std::chrono::milliseconds(100));
    return !m_cancel.load();
}

}  // namespace lengen::engine
