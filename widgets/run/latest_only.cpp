#include "latest_only.h"

namespace lengen::ui {

void Coalesced::request()
{
    if (m_busy || m_inStart) {  // m_inStart: a synchronous pass ended; the loop below goes on
        m_again = true;
        return;
    }
    // A pass that ends inside start() (synchronous) leaves a request made during it to this
    // loop, so that repeated passes do not nest.
    do {
        m_again = false;
        m_busy = true;
        ++m_passes;
        m_inStart = true;
        try {
            m_start();
        } catch (...) {  // a pass that throws ended: later requests must still start one
            m_inStart = m_busy = m_again = false;
            throw;
        }
        m_inStart = false;
    } while (!m_busy && m_again);
}

void Coalesced::done()
{
    m_busy = false;
    if (m_inStart)
        return;  // request()'s loop takes a waiting request
    if (std::exchange(m_again, false))
        request();
}

}  // namespace lengen::ui
