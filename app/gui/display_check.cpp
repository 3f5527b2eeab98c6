#include "display_check.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include <QDir>
#include <QLibraryInfo>

namespace lengen::studio {

namespace {

bool connects(int fd, const sockaddr* addr, socklen_t len)
{
    // Non-blocking with a bound: an address that drops packets must not hang the start.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (::connect(fd, addr, len) == 0)
        return true;
    if (errno != EINPROGRESS)
        return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 3000) != 1)
        return false;
    int error = 0;
    socklen_t size = sizeof error;
    return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
}

bool unixSocketAnswers(const std::string& path, bool abstract)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const size_t offset = abstract ? 1 : 0;  // Linux's abstract namespace: a leading NUL
    if (path.size() + offset >= sizeof addr.sun_path)
        return false;
    std::memcpy(addr.sun_path + offset, path.data(), path.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    const auto len =
        socklen_t(offsetof(sockaddr_un, sun_path) + offset + path.size() + (abstract ? 0 : 1));
    const bool ok = connects(fd, reinterpret_cast<sockaddr*>(&addr), len);
    ::close(fd);
    return ok;
}

bool tcpAnswers(const std::string& host, int port)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return false;
    bool ok = false;
    for (auto* a = found; a && !ok; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        ok = connects(fd, a->ai_addr, a->ai_addrlen);
        ::close(fd);
    }
    ::freeaddrinfo(found);
    return ok;
}

// DISPLAY is [host]:N[.screen]; "unix" or no host is the local socket; a host that is a path
// ("/tmp/launch-x/org.xquartz:0", libxcb's socket-path form) is that socket.
bool xServerAnswers(const std::string& display)
{
    const auto colon = display.rfind(':');
    const std::string host = display.substr(0, colon);
    if (display.front() == '/')
        return unixSocketAnswers(host, false) || unixSocketAnswers(display, false);
    const std::string rest = display.substr(colon + 1);
    const std::string number = rest.substr(0, rest.find('.'));
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos)
        return false;
    if (host.empty() || host == "unix") {
        const std::string path = "/tmp/.X11-unix/X" + number;
        return unixSocketAnswers(path, false) || unixSocketAnswers(path, true) ||
               (host.empty() && tcpAnswers("localhost", 6000 + std::stoi(number)));
    }
    return tcpAnswers(host, 6000 + std::stoi(number));
}

// What libxcb (the library Qt's xcb platform connects through) says when it connects to
// `display`, the X protocol's handshake and the user's Xauthority included: 0 when it connects,
// else its error (1: the connection failed or was closed, 5: a display it cannot parse, …);
// -1 when libxcb is not there to ask (the socket check stands alone then). Loaded at run time:
// Qt's platform plugin needs it anyway, and nothing is linked for this.
int xcbConnectError(const std::string& display)
{
    void* lib = ::dlopen("libxcb.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        return -1;
    using Connect = void* (*)(const char*, int*);
    using HasError = int (*)(void*);
    using Disconnect = void (*)(void*);
    const auto connect = reinterpret_cast<Connect>(::dlsym(lib, "xcb_connect"));
    const auto hasError = reinterpret_cast<HasError>(::dlsym(lib, "xcb_connection_has_error"));
    const auto disconnect = reinterpret_cast<Disconnect>(::dlsym(lib, "xcb_disconnect"));
    int error = -1;
    if (connect && hasError && disconnect) {
        void* c = connect(display.c_str(), nullptr);
        error = hasError(c);
        if (error == 0) {
            // Kept open for the life of the process: an X server started without -noreset
            // (Xvfb's default) resets when its last client leaves, and Qt's connection a moment
            // after this one's close met the reset ("could not connect to display", exit 134:
            // the Xvfb pass on defect 26, a studio started right after its Xvfb). One idle
            // connection keeps the server up until Qt holds its own.
            static void* const held = c;
            (void)held;
            return 0;  // libxcb stays loaded with it
        }
        disconnect(c);
    }
    ::dlclose(lib);
    return error;
}

// Whether Qt's connection will be taken: a few tries, 0.1 to 0.8 s apart, since a server that
// has just started, or that refused one connection, answers the next (issue 80, defect 26: the
// studio once aborted with Qt's "could not connect to display" on a display that answered
// xdpyinfo, and started on the retry). Returns libxcb's last error, 0 when it connected.
int xcbRefuses(const std::string& display)
{
    int error = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (attempt > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(100 << (attempt - 1)));
        error = xcbConnectError(display);
        if (error <= 0)
            return 0;
    }
    return error;
}

// Why Qt cannot open a window through WAYLAND_DISPLAY ("" when it can): Qt picks Wayland only
// where its platform plugin is installed (Debian's qt6-wayland; otherwise it falls back to xcb,
// which aborts without DISPLAY), and the compositor's socket must answer.
QString waylandProblem(const QByteArray& name, const QByteArray& runtimeDir)
{
    const QString plugins = QLibraryInfo::path(QLibraryInfo::PluginsPath) + "/platforms";
    if (QDir(plugins).entryList({QStringLiteral("libqwayland*")}, QDir::Files).isEmpty())
        return QStringLiteral("DISPLAY is not set, and WAYLAND_DISPLAY=%1 needs Qt's Wayland "
                              "platform plugin, which is not installed (qt6-wayland)")
            .arg(QString::fromLocal8Bit(name));
    const QByteArray path = name.startsWith('/') ? name : runtimeDir + '/' + name;
    if (path.size() > 255 || !unixSocketAnswers(path.toStdString(), false))
        return QStringLiteral("DISPLAY is not set, and no Wayland compositor answers on "
                              "WAYLAND_DISPLAY=%1")
            .arg(QString::fromLocal8Bit(name));
    return {};
}

}  // namespace

QString displayProblem(const DisplayEnvironment& env)
{
    const QByteArray& platform = env.platform;
    if (!platform.isEmpty() && !platform.startsWith("xcb"))
        return {};
    const QByteArray& display = env.display;
    if (display.isEmpty()) {
        return platform.isEmpty() && !env.wayland.isEmpty()
                   ? waylandProblem(env.wayland, env.runtimeDir)
                   : QStringLiteral("there is no display (DISPLAY is not set)");
    }
    if (!display.contains(':'))  // libX11 and libxcb refuse such a name too
        return QStringLiteral("DISPLAY=%1 is not a display name ([host]:number[.screen])")
            .arg(QString::fromLocal8Bit(display));
    if (display.size() > 255 || !xServerAnswers(display.toStdString()))
        return QStringLiteral("no X server answers on the display DISPLAY=%1")
            .arg(QString::fromLocal8Bit(display));
    if (const int error = xcbRefuses(display.toStdString()); error > 0)
        return QStringLiteral("the X server on DISPLAY=%1 refuses the connection (libxcb error "
                              "%2, after 5 tries over 1.5 s): its Xauthority (XAUTHORITY, "
                              "xauth list) may not hold this display's cookie, or it serves "
                              "no more clients")
            .arg(QString::fromLocal8Bit(display))
            .arg(error);
    return {};
}

}  // namespace lengen::studio
