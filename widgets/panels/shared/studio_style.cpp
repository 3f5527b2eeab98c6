#include "studio_style.h"

#include <QApplication>
#include <QProxyStyle>

namespace lengen::ui {

namespace {

class StudioStyle final : public QProxyStyle {
public:
    using QProxyStyle::QProxyStyle;
    int styleHint(StyleHint hint, const QStyleOption* option, const QWidget* widget,
                  QStyleHintReturn* returned) const override
    {
        if (hint == SH_ComboBox_Popup)
            return 0;  // a list below the box (studio_style.h)
        return QProxyStyle::styleHint(hint, option, widget, returned);
    }
};

}  // namespace

void installStudioStyle()
{
    if (dynamic_cast<StudioStyle*>(QApplication::style()))
        return;
    // Over the style in use (-style, the platform theme), by its name; the app owns it.
    QApplication::setStyle(new StudioStyle(QApplication::style()->name()));
}

}  // namespace lengen::ui
