#include "export_files.h"

#include <QFile>
#include <QFileInfo>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lengen::plots::files {

QString csvField(const std::string& s)
{
    QString q = QString::fromStdString(s);
    if (q.contains(',') || q.contains('"') || q.contains('\n') || q.contains('\r'))
        q = '"' + q.replace('"', QStringLiteral("\"\"")) + '"';
    return q;
}

QString failure(const QString& path, const QString& why)
{
    return QStringLiteral("cannot write %1: %2").arg(path, why);
}

// Every format is written to `<path>.partial` and renamed over `path` (rename(2) replaces
// atomically), so readers never see a half-written file and a failed export leaves nothing.
// `save` writes the given file and returns an empty string or the reason it failed.
ExportResult atomically(const QString& path, const std::function<QString(const QString&)>& save)
{
    const QFileInfo dir(QFileInfo(path).absolutePath());
    if (!dir.isDir())
        return {false,
                failure(path, QStringLiteral("folder %1 does not exist").arg(dir.filePath()))};
    const QString partial = path + QStringLiteral(".partial");
    {
        // Probe first: the writers' own failures come as vague booleans and console noise.
        QFile probe(partial);
        if (!probe.open(QIODevice::WriteOnly))
            return {false, failure(path, probe.errorString())};
    }
    QString why = save(partial);
    if (why.isEmpty() && (!QFileInfo::exists(partial) || QFileInfo(partial).size() == 0))
        why = QStringLiteral("nothing was written");
    if (!why.isEmpty()) {
        QFile::remove(partial);
        return {false, failure(path, why)};
    }
    if (std::rename(QFile::encodeName(partial).constData(), QFile::encodeName(path).constData()) !=
        0) {
        why = QString::fromLocal8Bit(std::strerror(errno));
        QFile::remove(partial);
        return {false, failure(path, why)};
    }
    return {true, {}};
}

QString setUpPdf(QPdfWriter& pdf, double widthIn, double heightIn, const QString& title)
{
    pdf.setResolution(static_cast<int>(kLayoutDpi));
    pdf.setTitle(title);
    pdf.setCreator(QStringLiteral("LenGen Studio"));
    const QPageSize page(QSizeF(widthIn, heightIn), QPageSize::Inch, QString(),
                         QPageSize::ExactMatch);
    if (!pdf.setPageLayout(QPageLayout(page, QPageLayout::Portrait, QMarginsF())))
        return QStringLiteral("unsupported page size");
    return {};
}

void setUpSvg(QSvgGenerator& svg, const QString& file, int w, int h, const QString& title)
{
    svg.setFileName(file);
    svg.setSize(QSize(w, h));
    svg.setViewBox(QRect(0, 0, w, h));
    svg.setResolution(static_cast<int>(kLayoutDpi));
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("LenGen Studio figure"));
}

QString writeText(const QString& file, const QString& text)
{
    QFile f(file);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return f.errorString();
    const QByteArray bytes = text.toUtf8();
    if (f.write(bytes) != bytes.size() || !f.flush())
        return f.errorString();
    f.close();
    return f.error() == QFileDevice::NoError ? QString() : f.errorString();
}

}  // namespace lengen::plots::files
