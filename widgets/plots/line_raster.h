#pragma once
// Thousands of thin translucent lines into an image, fast (internal to lengen_plots). Qt's raster
// engine hands every line's spans to its thread pool: 80,000 lines (10,000 runs over 9 axes)
// took 4.3 s, 280 ms even opaque, on 2 cores. Here each line is one DDA walk that blends one
// pixel per step into the image's memory: no antialiasing, which thin dense lines do not need.

#include <QColor>
#include <QImage>
#include <QLineF>
#include <QTransform>
#include <QVector>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace lengen::plots {

/// An image's pixels as blendLines writes them: taken once (QImage::bits() detaches, which two
/// threads must not both do), with the painter's transform to pixels.
struct PixelTarget {
    std::uint32_t* bits = nullptr;
    int width = 0, height = 0;
    std::ptrdiff_t stride = 0;  ///< pixels per row
    QTransform transform;
};

/// The target for `image` (32-bit premultiplied or RGB32, under 32,768 pixels a side: 16.16
/// fixed point holds no more) under `transform` (a scale and translation only, as a widget's or
/// a PNG export's painter has); nullopt otherwise.
std::optional<PixelTarget> pixelTarget(QImage& image, const QTransform& transform);

/// Blends `color` (its alpha) over each line of `lines`, given in the painter's coordinates;
/// pixels outside the image are skipped. Threads may blend into one target at once as long as
/// their lines cover different pixels.
void blendLines(const PixelTarget& target, const QVector<QLineF>& lines, QColor color);

}  // namespace lengen::plots
