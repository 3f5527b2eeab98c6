#pragma once
// Whether the studio can open a window before Qt tries: Qt's xcb platform aborts the process
// (qFatal, exit 134) when the X server DISPLAY names does not answer, as a stale DISPLAY over
// SSH or in a job script does (issue 54).

#include <QByteArray>
#include <QString>

namespace lengen::studio {

/// The variables that decide where Qt opens its window, as main() read them (the studio reads
/// its environment there only).
struct DisplayEnvironment {
    QByteArray platform;    ///< QT_QPA_PLATFORM
    QByteArray display;     ///< DISPLAY
    QByteArray wayland;     ///< WAYLAND_DISPLAY
    QByteArray runtimeDir;  ///< XDG_RUNTIME_DIR (where a relative WAYLAND_DISPLAY lives)
};

/// Why no window can open ("" when one may): no DISPLAY, a DISPLAY that is no display name, an
/// X server that does not answer on DISPLAY's socket (a local /tmp/.X11-unix socket, a socket
/// path, or TCP 6000+N for host:N), or one that answers but refuses libxcb's connection five
/// times over 1.5 s (its handshake or Xauthority: what Qt would abort on); without DISPLAY, a
/// WAYLAND_DISPLAY whose compositor does not answer or that Qt has no plugin for. A platform named
/// in QT_QPA_PLATFORM other than xcb (offscreen, wayland, …) is left to Qt.
QString displayProblem(const DisplayEnvironment& env);

}  // namespace lengen::studio
