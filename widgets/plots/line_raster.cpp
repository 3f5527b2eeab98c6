#include "line_raster.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace lengen::plots {

std::optional<PixelTarget> pixelTarget(QImage& image, const QTransform& transform)
{
    if ((image.format() != QImage::Format_ARGB32_Premultiplied &&
         image.format() != QImage::Format_RGB32) ||
        transform.type() > QTransform::TxScale || image.width() >= 32768 ||
        image.height() >= 32768 || image.isNull())
        return std::nullopt;
    PixelTarget t;
    t.bits = reinterpret_cast<std::uint32_t*>(image.bits());
    t.width = image.width();
    t.height = image.height();
    t.stride = static_cast<std::ptrdiff_t>(image.bytesPerLine() / 4);
    t.transform = transform;
    return t;
}

void blendLines(const PixelTarget& target, const QVector<QLineF>& lines, QColor color)
{
    const int w = target.width, h = target.height;
    const auto stride = target.stride;
    std::uint32_t* bits = target.bits;
    const QTransform& transform = target.transform;
    // Source over, premultiplied: dst = src + dst * (255 - a) / 255 per channel.
    const std::uint32_t a = std::uint32_t(color.alpha()), inv = 255 - a;
    const std::uint32_t src = (a << 24) | ((std::uint32_t(color.red()) * a / 255) << 16) |
                              ((std::uint32_t(color.green()) * a / 255) << 8) |
                              (std::uint32_t(color.blue()) * a / 255);
    auto blend = [&](std::uint32_t d) {
        // Two channels at a time in 16-bit lanes: (d & 0x00ff00ff) * inv / 255, rounded.
        std::uint32_t rb = (d & 0x00ff00ffu) * inv + 0x00800080u;
        rb = ((rb + ((rb >> 8) & 0x00ff00ffu)) >> 8) & 0x00ff00ffu;
        std::uint32_t ag = ((d >> 8) & 0x00ff00ffu) * inv + 0x00800080u;
        ag = (ag + ((ag >> 8) & 0x00ff00ffu)) & 0xff00ff00u;
        return src + rb + ag;
    };
    auto inside = [&](QPointF q) {
        return q.x() >= 0 && q.y() >= 0 && q.x() < w - 1 && q.y() < h - 1;
    };
    for (const auto& line : lines) {
        const QPointF p0 = transform.map(line.p1()), p1 = transform.map(line.p2());
        const double dx = p1.x() - p0.x(), dy = p1.y() - p0.y();
        const int steps = std::max(1, int(std::ceil(std::max(std::fabs(dx), std::fabs(dy)))));
        // 16.16 fixed point along the line; one pixel per step on the longer axis.
        std::int32_t x = std::int32_t(std::lround(p0.x() * 65536)) + 32768;
        std::int32_t y = std::int32_t(std::lround(p0.y() * 65536)) + 32768;
        const auto sx = std::int32_t(std::lround(dx * 65536 / steps));
        const auto sy = std::int32_t(std::lround(dy * 65536 / steps));
        if (inside(p0) && inside(p1)) {  // the usual case: no pixel of it needs a check
            for (int i = 0; i <= steps; ++i, x += sx, y += sy) {
                std::uint32_t& d = bits[(y >> 16) * stride + (x >> 16)];
                d = blend(d);
            }
            continue;
        }
        if (std::fabs(p0.x()) + std::fabs(p1.x()) + std::fabs(p0.y()) + std::fabs(p1.y()) > 3e4)
            continue;  // far outside: 16.16 would overflow, and nothing of it is seen
        for (int i = 0; i <= steps; ++i, x += sx, y += sy) {
            const int px = x >> 16, py = y >> 16;
            if (px >= 0 && px < w && py >= 0 && py < h) {
                std::uint32_t& d = bits[py * stride + px];
                d = blend(d);
            }
        }
    }
}

}  // namespace lengen::plots
