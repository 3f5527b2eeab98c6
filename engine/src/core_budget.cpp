#include "lengen/engine/core_budget.h"

#include <algorithm>

namespace lengen::engine {

CoreBudget::CoreBudget(int limit) : m_limit(std::max(1, limit)) {}

int CoreBudget::limit() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_limit;
}

void CoreBudget::setLimit(int limit)
{
    std::function<void()> freed;
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_limit = std::max(1, limit);
        freed = m_onFreed;
    }
    if (freed)
        freed();
}

int CoreBudget::inUse() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_used;
}

int CoreBudget::tryTake(int n)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const int want = std::clamp(n, 1, m_limit);
    if (m_used + want > m_limit)
        return 0;
    m_used += want;
    return want;
}

int CoreBudget::tryTakeUpTo(int n)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    const int take = std::min(std::max(n, 1), m_limit - m_used - m_waiting);
    if (take < 1)
        return 0;
    m_used += take;
    return take;
}

void CoreBudget::setWaiting(int cores)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_waiting = std::max(0, cores);
}

void CoreBudget::addCellsWaiting(int delta)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_cellsWaiting = std::max(0, m_cellsWaiting + delta);
}

int CoreBudget::cellsWaiting() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_cellsWaiting;
}

void CoreBudget::give(int n)
{
    std::function<void()> freed;
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_used = std::max(0, m_used - n);
        freed = m_onFreed;
    }
    if (freed && n > 0)
        freed();  // outside the lock: it may take again
}

void CoreBudget::setOnFreed(std::function<void()> onFreed)
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_onFreed = std::move(onFreed);
}

}  // namespace lengen::engine
