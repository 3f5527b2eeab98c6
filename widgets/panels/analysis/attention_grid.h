#pragma once
// The layers x heads overview of one prompt's attention maps (as BertViz's model view): one
// thumbnail per layer and head plus the mean over heads per layer, all on one colour range so
// heads compare; a click opens that map in the attention view. GUI thread only.

#include <QWidget>

class QGridLayout;
class QLabel;

namespace lengen::ui {

class AttentionGrid final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AttentionGrid)

public:
    static constexpr int kThumb = 96;  ///< pixels per thumbnail side (maps are pooled to it)

    explicit AttentionGrid(QWidget* parent = nullptr);
    /// Reads and draws every map of (run, setting, prompt); an empty run clears the grid.
    /// Errors go to the grid's message line (and statusMessage), never a dialog.
    void show(const QString& runFile, const QString& setting, int prompt, bool logScale);
    /// Thumbnails drawn: layers x (heads + 1), 0 when cleared.
    int thumbnailCount() const { return m_count; }

Q_SIGNALS:
    /// A thumbnail was clicked: its layer and head (-1 = the mean over heads), from 0.
    void picked(int layer, int head);
    void statusMessage(QString message);

private:
    void clear();

    QGridLayout* m_grid;
    QLabel* m_message;
    int m_count = 0;
};

}  // namespace lengen::ui
