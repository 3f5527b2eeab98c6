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

namespace lengen::plots {

/// Whether `image` can take blendLines (32-bit premultiplied or RGB32) under `transform` (a
/// scale and translation only, as a widget's or a PNG export's painter has).
bool canBlendLines(const QImage& image, const QTransform& transform);

/// Blends `color` (its alpha) over each line of `lines`, given in the painter's coordinates and
/// mapped by `transform` to pixels; pixels outside the image are skipped.
void blendLines(QImage& image, const QTransform& transform, const QVector<QLineF>& lines,
                QColor color);

}  // namespace lengen::plots
